"""Finding P4Info objects by the names users write: full names or any unique dotted suffix.

p4runtime-shell accepts `MyIngress.ipv4_lpm` or just `ipv4_lpm` when no other table ends
with that suffix; the controller does the same, so names in config files read naturally.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

# P4Info repeated fields whose elements carry a `preamble`, by the kind users name them with.
KINDS = {
    "table": "tables",
    "action": "actions",
    "action_profile": "action_profiles",
    "counter": "counters",
    "direct_counter": "direct_counters",
    "meter": "meters",
    "direct_meter": "direct_meters",
    "register": "registers",
    "digest": "digests",
    "controller_packet_metadata": "controller_packet_metadata",
    "value_set": "value_sets",
}


class UnknownName(KeyError):
    """A name that matches no P4Info object of that kind, or matches more than one."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class MatchField:
    """A table key field: P4Runtime id, width in bits and match kind (exact, lpm, …)."""

    id: int
    name: str
    bitwidth: int
    kind: str


@dataclass(frozen=True)
class Param:
    """An action parameter: P4Runtime id and width in bits."""

    id: int
    name: str
    bitwidth: int


MATCH_KINDS = {
    p4info_pb2.MatchField.EXACT: "exact",
    p4info_pb2.MatchField.LPM: "lpm",
    p4info_pb2.MatchField.TERNARY: "ternary",
    p4info_pb2.MatchField.RANGE: "range",
    p4info_pb2.MatchField.OPTIONAL: "optional",
}


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read a P4Info file in protobuf text format (what p4c's --p4runtime-files writes)."""
    message = p4info_pb2.P4Info()
    text_format.Parse(Path(path).read_text(), message, allow_unknown_field=True)
    return message


class P4InfoIndex:
    """Name -> object lookups over one P4Info message."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self._by_kind: dict[str, dict[str, object]] = {}
        self._by_id: dict[int, object] = {}
        for kind, attr in KINDS.items():
            objects = list(getattr(p4info, attr))
            suffixes: dict[str, list[object]] = {}
            for obj in objects:
                self._by_id[obj.preamble.id] = obj
                for suffix in _suffixes(obj.preamble.name):
                    suffixes.setdefault(suffix, []).append(obj)
            # Unique suffixes first; P4Info aliases (unique by construction) and full names win.
            names = {suffix: objs[0] for suffix, objs in suffixes.items() if len(objs) == 1}
            names.update({obj.preamble.alias: obj for obj in objects if obj.preamble.alias})
            names.update({obj.preamble.name: obj for obj in objects})
            self._by_kind[kind] = names

    def get(self, kind: str, name: str) -> object:
        """The object of `kind` named `name` (full name, alias or unique suffix)."""
        found = self._by_kind[kind].get(name)
        if found is None:
            known = sorted(o.preamble.name for o in getattr(self.p4info, KINDS[kind]))
            raise UnknownName(f"no {kind} named {name!r} (known: {', '.join(known) or 'none'})")
        return found

    def by_id(self, object_id: int) -> object:
        """The object with P4Runtime id `object_id`."""
        try:
            return self._by_id[object_id]
        except KeyError:
            raise UnknownName(f"no P4Info object with id {object_id:#x}") from None

    def match_fields(self, table: str) -> list[MatchField]:
        """A table's key fields, in key order."""
        return [
            MatchField(mf.id, mf.name, mf.bitwidth, MATCH_KINDS.get(mf.match_type, "other"))
            for mf in self.get("table", table).match_fields
        ]

    def match_field(self, table: str, name: str) -> MatchField:
        """One key field of a table, by its P4Info name (e.g. `hdr.ipv4.dstAddr`)."""
        for field in self.match_fields(table):
            if field.name == name:
                return field
        known = ", ".join(f.name for f in self.match_fields(table))
        raise UnknownName(f"table {table!r} has no key field {name!r} (keys: {known})")

    def params(self, action: str) -> list[Param]:
        """An action's parameters, in declaration order."""
        return [Param(p.id, p.name, p.bitwidth) for p in self.get("action", action).params]

    def table_actions(self, table: str) -> list[str]:
        """Names of the actions a table may run."""
        return [self.by_id(ref.id).preamble.name for ref in self.get("table", table).action_refs]

    def requires_priority(self, table: str) -> bool:
        """Whether the table's entries need a priority (a ternary, range or optional key)."""
        return any(f.kind in ("ternary", "range", "optional") for f in self.match_fields(table))


def _suffixes(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[i:]) for i in range(len(parts))}
