"""What the runtime CLI needs to know of the loaded program, read from its BMv2 JSON.

BMv2's CLI reads the same JSON (from the switch) to learn table types, action
parameters, array sizes and bindings; names may be given as any unique
dot-separated suffix of the full name (`ipv4_lpm` for `MyIngress.ipv4_lpm`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bufferlab.switch.runtime_cli.commands import CommandError
from bufferlab.switch.tna_json import control_plane_view, is_tna


@dataclass
class ActionInfo:
    """An action and its parameters as (name, width in bits)."""

    name: str
    params: list[tuple[str, int]]


@dataclass
class TableInfo:
    """A match table: match type, kind (simple, indirect, indirect_ws), actions and bindings."""

    name: str
    match_type: str
    type: str
    actions: list[str]
    key_names: list[str]
    action_profile: str | None = None
    direct_meter: str | None = None


@dataclass
class ProfileInfo:
    """An action profile, with or without a selector, and the actions of its tables."""

    name: str
    with_selection: bool
    actions: set[str] = field(default_factory=set)


@dataclass
class ArrayInfo:
    """A counter, meter or register array; direct ones are bound to a table."""

    name: str
    size: int
    binding: str | None = None
    width: int = 0
    rate_count: int = 0
    unit: str = ""


@dataclass
class ValueSetInfo:
    """A parser value set and its width in bits."""

    name: str
    width: int


_KINDS = {
    "table": "tables",
    "action": "actions",
    "action profile": "profiles",
    "counter": "counters",
    "meter": "meters",
    "register": "registers",
    "parser value set": "value_sets",
}


class ProgramInfo:
    """Tables, actions, profiles, arrays and value sets of one BMv2 JSON program."""

    def __init__(self, doc: dict[str, Any]) -> None:
        """Indexes a parsed BMv2 JSON document."""
        self.actions: dict[str, ActionInfo] = {
            a["name"]: ActionInfo(a["name"], [(p["name"], p["bitwidth"]) for p in a.get("runtime_data", [])])
            for a in doc.get("actions", [])
        }
        self.profiles: dict[str, ProfileInfo] = {}
        self.tables: dict[str, TableInfo] = {}
        for pipe in doc.get("pipelines", []):
            for p in pipe.get("action_profiles", []):
                self.profiles[p["name"]] = ProfileInfo(p["name"], "selector" in p)
            for t in pipe.get("tables", []):
                prof = t.get("action_profile") or t.get("act_prof_name")
                if t.get("type") in ("indirect", "indirect_ws") and prof:
                    info = self.profiles.setdefault(prof, ProfileInfo(prof, "selector" in t))
                    info.actions.update(t.get("actions", []))
                self.tables[t["name"]] = TableInfo(
                    t["name"],
                    t.get("match_type", "exact"),
                    t.get("type", "simple"),
                    list(t.get("actions", [])),
                    [_key_name(k) for k in t.get("key", [])],
                    prof,
                    t.get("direct_meters"),
                )
        self.counters = {
            c["name"]: ArrayInfo(c["name"], c.get("size", 0), c.get("binding") if c.get("is_direct") else None)
            for c in doc.get("counter_arrays", [])
        }
        self.meters = {
            m["name"]: ArrayInfo(
                m["name"],
                m.get("size", 0),
                m.get("binding") if m.get("is_direct") else None,
                rate_count=m.get("rate_count", 2),
                unit=m.get("type", "packets"),
            )
            for m in doc.get("meter_arrays", [])
        }
        self.registers = {
            r["name"]: ArrayInfo(r["name"], r.get("size", 0), width=r.get("bitwidth", 0))
            for r in doc.get("register_arrays", [])
        }
        self.value_sets = {
            v["name"]: ValueSetInfo(v["name"], v.get("compressed_bitwidth", v.get("bitwidth", 0)))
            for v in doc.get("parse_vsets", [])
        }
        self.crc_calcs = {
            c["name"]: int(c["algo"][3:5])
            for c in doc.get("calculations", [])
            if c.get("algo") in ("crc16_custom", "crc32_custom")
        }
        self._suffixes = {kind: _suffix_map(getattr(self, attr)) for kind, attr in _KINDS.items()}

    @classmethod
    def from_json(cls, text: str) -> ProgramInfo:
        """Indexes BMv2 JSON text, or a TNA document's gresses under their control-plane
        names (`pipe.Ingress.fwd`)."""
        doc = json.loads(text)
        return cls(control_plane_view(doc) if is_tna(doc) else doc)

    def get(self, kind: str, name: str) -> Any:
        """The object of `kind` named `name` or by a unique suffix; BMv2's error otherwise."""
        full = self._suffixes[kind].get(name)
        if full is None:
            raise CommandError(f"Invalid {kind} name ({name})")
        return getattr(self, _KINDS[kind])[full]

    def table_action(self, table: TableInfo, name: str) -> ActionInfo:
        """The action `name` of `table`, or BMv2's error."""
        full = self._suffixes["action"].get(name)
        if full is None or full not in table.actions:
            raise CommandError(f"Table {table.name} has no action {name} (Invalid action name)")
        return self.actions[full]

    def profile_action(self, profile: ProfileInfo, name: str) -> ActionInfo:
        """The action `name` usable by members of `profile`, or BMv2's error."""
        full = self._suffixes["action"].get(name)
        if full is None or full not in profile.actions:
            raise CommandError(f"Action profile '{profile.name}' has no action '{name}' (Invalid action name)")
        return self.actions[full]


def _key_name(key: dict[str, Any]) -> str:
    """BMv2's CLI names a key by its target (`ipv4.dstAddr`), validity keys as `hdr_valid`."""
    target = key.get("target")
    if isinstance(target, list):
        if len(target) == 2 and target[1] == "$valid$":
            return f"{target[0]}_valid"
        return ".".join(str(t) for t in target)
    if isinstance(target, str):
        return f"{target}_valid" if key.get("match_type") == "valid" else target
    return str(key.get("name", "?"))


def _suffix_map(objects: dict[str, Any]) -> dict[str, str]:
    """Every unique dot-separated suffix of every full name, mapped to the full name."""
    counts: Counter[str] = Counter()
    owner: dict[str, str] = {}
    for full in objects:
        parts = full.split(".")
        for i in range(len(parts)):
            s = ".".join(parts[i:])
            counts[s] += 1
            owner[s] = full
    out = {s: owner[s] for s, c in counts.items() if c == 1}
    out.update({full: full for full in objects})
    return out
