"""P4Info index: ids ↔ P4Info names ↔ BMv2 JSON names, widths and table properties.

p4c gives P4Info objects their control-plane names and BMv2 JSON objects normally the same
names (formats.md §3.4, §2.9), but not always: JSON may hold several copies of one action
(one per table, same name), hidden tables/actions that P4Info leaves out, and names that
differ by a leading prefix. Resolution therefore goes: the exact name, else the single JSON
object whose dotted name ends with the P4Info name (or vice versa). Actions resolve within
the JSON action list of each table that uses them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypeVar

from p4.config.v1 import p4info_pb2

from ..tna_json import control_plane_view, is_tna
from .status import P4RuntimeError

MatchType = p4info_pb2.MatchField.MatchType
T = TypeVar("T")


@dataclass(frozen=True)
class FieldInfo:
    """A match field, action parameter, controller-header field or digest member."""

    id: int
    name: str
    bitwidth: int
    match_type: int = 0


@dataclass
class ActionInfo:
    """An action: P4Info name and parameters by id, in P4Info order."""

    id: int
    name: str
    params: list[FieldInfo]
    params_by_id: dict[int, FieldInfo] = field(default_factory=dict)


@dataclass
class TableInfo:
    """A table with everything the entity rules need."""

    id: int
    name: str
    json_name: str
    match_fields: list[FieldInfo]
    fields_by_id: dict[int, FieldInfo]
    action_scopes: dict[int, int]
    action_json_names: dict[int, str]
    const_default_action_id: int
    implementation_id: int
    direct_counter_id: int
    direct_meter_id: int
    size: int
    is_const: bool
    supports_timeout: bool

    @property
    def needs_priority(self) -> bool:
        """True iff the table has a ternary, range or optional field (spec: priority > 0)."""
        return any(
            f.match_type in (MatchType.TERNARY, MatchType.RANGE, MatchType.OPTIONAL)
            for f in self.match_fields
        )


@dataclass(frozen=True)
class ArrayInfo:
    """A counter, meter or register array (direct ones have `table_id`)."""

    id: int
    name: str
    json_name: str
    size: int
    unit: int = 0
    bitwidth: int = 0
    table_id: int = 0


@dataclass(frozen=True)
class ProfileInfo:
    """An action profile or selector."""

    id: int
    name: str
    json_name: str
    table_ids: tuple[int, ...]
    with_selector: bool
    size: int
    max_group_size: int


@dataclass(frozen=True)
class DigestInfo:
    """A digest: its learn-list JSON name and member widths; `is_struct` picks P4Data form."""

    id: int
    name: str
    json_name: str
    members: tuple[FieldInfo, ...]
    is_struct: bool


@dataclass(frozen=True)
class ControllerHeader:
    """A controller_packet_metadata header (packet_in / packet_out) and its fields in order."""

    id: int
    name: str
    fields: tuple[FieldInfo, ...]

    @property
    def byte_length(self) -> int:
        """ceil(sum of field widths / 8): the header's length on the CPU port."""
        return (sum(f.bitwidth for f in self.fields) + 7) // 8


def _json_names(document: dict, section: str) -> list[str]:
    """Names of the objects of one JSON section (action profiles live inside pipelines)."""
    if section == "action_profiles":
        return [p["name"] for pipe in document.get("pipelines", []) for p in pipe.get(
            "action_profiles", [])]
    if section == "tables":
        return [t["name"] for pipe in document.get("pipelines", []) for t in pipe.get(
            "tables", [])]
    return [o["name"] for o in document.get(section, [])]


def resolve_name(name: str, candidates: list[str], what: str) -> str:
    """The JSON name that `name` (a P4Info name) stands for, or INVALID_ARGUMENT."""
    if name in candidates:
        return name
    matches = {
        c for c in candidates if c.endswith("." + name) or name.endswith("." + c)
    }
    if len(matches) == 1:
        return matches.pop()
    raise P4RuntimeError(
        "INVALID_ARGUMENT", f"P4Info {what} '{name}' has no counterpart in the BMv2 JSON"
    )


class P4InfoIndex:
    """Lookups over one P4Info, cross-referenced with its BMv2 JSON when one is given."""

    def __init__(self, p4info: p4info_pb2.P4Info, device_json: str | None = None) -> None:
        self.p4info = p4info
        document = _parse_json(device_json) if device_json is not None else None
        self.actions: dict[int, ActionInfo] = {}
        for action in p4info.actions:
            params = [FieldInfo(p.id, p.name, p.bitwidth) for p in action.params]
            self.actions[action.preamble.id] = ActionInfo(
                action.preamble.id, action.preamble.name, params, {p.id: p for p in params}
            )
        json_tables = {
            t["name"]: t
            for pipe in (document or {}).get("pipelines", [])
            for t in pipe.get("tables", [])
        }
        self.tables: dict[int, TableInfo] = {}
        direct_counters = {c.direct_table_id: c.preamble.id for c in p4info.direct_counters}
        direct_meters = {m.direct_table_id: m.preamble.id for m in p4info.direct_meters}
        for table in p4info.tables:
            name = table.preamble.name
            json_name = name
            json_actions: list[str] | None = None
            if document is not None:
                json_name = resolve_name(name, list(json_tables), "table")
                json_actions = list(json_tables[json_name].get("actions", []))
            action_json_names = {}
            for ref in table.action_refs:
                action = self.actions.get(ref.id)
                if action is None:
                    raise P4RuntimeError(
                        "INVALID_ARGUMENT", f"table '{name}' refers to unknown action {ref.id}"
                    )
                action_json_names[ref.id] = (
                    action.name
                    if json_actions is None
                    else resolve_name(action.name, json_actions, f"action of table {json_name}")
                )
            fields = [
                FieldInfo(f.id, f.name, f.bitwidth, f.match_type) for f in table.match_fields
            ]
            self.tables[table.preamble.id] = TableInfo(
                id=table.preamble.id,
                name=name,
                json_name=json_name,
                match_fields=fields,
                fields_by_id={f.id: f for f in fields},
                action_scopes={ref.id: ref.scope for ref in table.action_refs},
                action_json_names=action_json_names,
                const_default_action_id=table.const_default_action_id,
                implementation_id=table.implementation_id,
                direct_counter_id=direct_counters.get(table.preamble.id, 0),
                direct_meter_id=direct_meters.get(table.preamble.id, 0),
                size=table.size,
                is_const=table.is_const_table,
                supports_timeout=table.idle_timeout_behavior
                == p4info_pb2.Table.NOTIFY_CONTROL,
            )

        def json_name_of(name: str, section: str, what: str) -> str:
            """The JSON name of a P4Info object of one JSON section."""
            if document is None:
                return name
            return resolve_name(name, _json_names(document, section), what)

        self.profiles: dict[int, ProfileInfo] = {
            p.preamble.id: ProfileInfo(
                p.preamble.id,
                p.preamble.name,
                json_name_of(p.preamble.name, "action_profiles", "action profile"),
                tuple(p.table_ids),
                p.with_selector,
                p.size,
                p.max_group_size,
            )
            for p in p4info.action_profiles
        }
        self.counters = {
            c.preamble.id: ArrayInfo(
                c.preamble.id, c.preamble.name,
                json_name_of(c.preamble.name, "counter_arrays", "counter"), c.size, c.spec.unit,
            )
            for c in p4info.counters
        }
        self.direct_counters = {
            c.preamble.id: ArrayInfo(
                c.preamble.id, c.preamble.name,
                json_name_of(c.preamble.name, "counter_arrays", "direct counter"), 0,
                c.spec.unit, table_id=c.direct_table_id,
            )
            for c in p4info.direct_counters
        }
        self.meters = {
            m.preamble.id: ArrayInfo(
                m.preamble.id, m.preamble.name,
                json_name_of(m.preamble.name, "meter_arrays", "meter"), m.size, m.spec.unit,
            )
            for m in p4info.meters
        }
        self.direct_meters = {
            m.preamble.id: ArrayInfo(
                m.preamble.id, m.preamble.name,
                json_name_of(m.preamble.name, "meter_arrays", "direct meter"), 0, m.spec.unit,
                table_id=m.direct_table_id,
            )
            for m in p4info.direct_meters
        }
        self.registers = {
            r.preamble.id: ArrayInfo(
                r.preamble.id, r.preamble.name,
                json_name_of(r.preamble.name, "register_arrays", "register"), r.size,
                bitwidth=_bitstring_width(r.type_spec),
            )
            for r in p4info.registers
        }
        self.digests: dict[int, DigestInfo] = {}
        for digest in p4info.digests:
            members, is_struct = self._digest_members(digest)
            self.digests[digest.preamble.id] = DigestInfo(
                digest.preamble.id,
                digest.preamble.name,
                json_name_of(digest.preamble.name, "learn_lists", "digest"),
                members,
                is_struct,
            )
        self.digest_by_json_name = {d.json_name: d for d in self.digests.values()}
        self.controller_headers = {
            h.preamble.name: ControllerHeader(
                h.preamble.id,
                h.preamble.name,
                tuple(FieldInfo(m.id, m.name, m.bitwidth) for m in h.metadata),
            )
            for h in p4info.controller_packet_metadata
        }

    def _digest_members(self, digest: p4info_pb2.Digest) -> tuple[tuple[FieldInfo, ...], bool]:
        """Member widths of a digest's type: a struct of bitstrings or one bitstring."""
        spec = digest.type_spec
        if spec.HasField("struct"):
            struct = self.p4info.type_info.structs.get(spec.struct.name)
            if struct is None:
                raise P4RuntimeError(
                    "INVALID_ARGUMENT",
                    f"digest '{digest.preamble.name}' uses unknown struct '{spec.struct.name}'",
                )
            return tuple(
                FieldInfo(i + 1, m.name, _bitstring_width(m.type_spec))
                for i, m in enumerate(struct.members)
            ), True
        return (FieldInfo(1, digest.preamble.name, _bitstring_width(spec)),), False

    def table(self, table_id: int) -> TableInfo:
        """The table with this id, else NOT_FOUND."""
        return _lookup(self.tables, table_id, "table")

    def action(self, action_id: int) -> ActionInfo:
        """The action with this id, else NOT_FOUND."""
        return _lookup(self.actions, action_id, "action")

    def profile(self, profile_id: int) -> ProfileInfo:
        """The action profile with this id, else NOT_FOUND."""
        return _lookup(self.profiles, profile_id, "action profile")

    def counter(self, counter_id: int) -> ArrayInfo:
        """The indirect counter with this id, else NOT_FOUND."""
        return _lookup(self.counters, counter_id, "counter")

    def meter(self, meter_id: int) -> ArrayInfo:
        """The indirect meter with this id, else NOT_FOUND."""
        return _lookup(self.meters, meter_id, "meter")

    def register(self, register_id: int) -> ArrayInfo:
        """The register with this id, else NOT_FOUND."""
        return _lookup(self.registers, register_id, "register")

    def digest(self, digest_id: int) -> DigestInfo:
        """The digest with this id, else NOT_FOUND."""
        return _lookup(self.digests, digest_id, "digest")


def _lookup(objects: dict[int, T], object_id: int, what: str) -> T:
    """objects[object_id] or NOT_FOUND naming the kind."""
    try:
        return objects[object_id]
    except KeyError:
        raise P4RuntimeError("NOT_FOUND", f"unknown {what} id {object_id}") from None


def _bitstring_width(spec: object) -> int:
    """The width of a `bit<W>`/`int<W>` P4DataTypeSpec (0 for anything else)."""
    if spec.HasField("bitstring"):
        bitstring = spec.bitstring
        for kind in ("bit", "int", "varbit"):
            if bitstring.HasField(kind):
                inner = getattr(bitstring, kind)
                return inner.max_bitwidth if kind == "varbit" else inner.bitwidth
    if spec.HasField("bool"):
        return 1
    return 0


def _parse_json(device_json: str) -> dict:
    """The BMv2 JSON document, or INVALID_ARGUMENT if it is not a JSON object."""
    try:
        document = json.loads(device_json)
    except ValueError as error:
        raise P4RuntimeError("INVALID_ARGUMENT", f"device config is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise P4RuntimeError("INVALID_ARGUMENT", "device config is not a BMv2 JSON object")
    if is_tna(document):
        try:
            return control_plane_view(document)
        except ValueError as error:
            raise P4RuntimeError("INVALID_ARGUMENT", str(error)) from None
    return document
