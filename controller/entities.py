"""P4Runtime entities built from names and user values, checked against the P4Info.

Match values follow the p4lang tutorials' runtime files: exact `v`; lpm `[v, prefix_len]`
or `"v/prefix_len"`; ternary `[v, mask]`; range `[low, high]`; optional `v`. "Don't care"
matches are left out of the message, as the P4Runtime spec requires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from p4.v1 import p4runtime_pb2

from bufferlab.controller.p4info import MatchField, P4InfoIndex
from bufferlab.controller.values import BadValue, encode, parse_value, prefix_mask


def _lpm(field: MatchField, spec: Any, what: str) -> p4runtime_pb2.FieldMatch | None:
    if isinstance(spec, str) and "/" in spec:
        value_text, _, length_text = spec.partition("/")
        spec = [value_text, length_text]
    if not (isinstance(spec, (list, tuple)) and len(spec) == 2):
        raise BadValue(f"{what}: an lpm match is [value, prefix_len] or 'value/prefix_len'")
    value = parse_value(spec[0], field.bitwidth, what)
    length = parse_value(spec[1], 16, f"{what} prefix length")
    if length > field.bitwidth:
        raise BadValue(f"{what}: prefix length {length} exceeds {field.bitwidth} bits")
    if length == 0:
        return None
    value &= prefix_mask(length, field.bitwidth)
    match = p4runtime_pb2.FieldMatch(field_id=field.id)
    match.lpm.value = encode(value, field.bitwidth)
    match.lpm.prefix_len = length
    return match


def field_match(field: MatchField, spec: Any, what: str) -> p4runtime_pb2.FieldMatch | None:
    """One key field's FieldMatch (None for a don't-care), from a tutorials-style value."""
    match = p4runtime_pb2.FieldMatch(field_id=field.id)
    if field.kind == "exact":
        match.exact.value = encode(parse_value(spec, field.bitwidth, what), field.bitwidth)
    elif field.kind == "lpm":
        return _lpm(field, spec, what)
    elif field.kind == "ternary":
        if not (isinstance(spec, (list, tuple)) and len(spec) == 2):
            raise BadValue(f"{what}: a ternary match is [value, mask]")
        mask = parse_value(spec[1], field.bitwidth, f"{what} mask")
        if mask == 0:
            return None
        value = parse_value(spec[0], field.bitwidth, what) & mask
        match.ternary.value = encode(value, field.bitwidth)
        match.ternary.mask = encode(mask, field.bitwidth)
    elif field.kind == "range":
        if not (isinstance(spec, (list, tuple)) and len(spec) == 2):
            raise BadValue(f"{what}: a range match is [low, high]")
        low = parse_value(spec[0], field.bitwidth, f"{what} low")
        high = parse_value(spec[1], field.bitwidth, f"{what} high")
        if low > high:
            raise BadValue(f"{what}: range low {low} is above high {high}")
        if low == 0 and high == (1 << field.bitwidth) - 1:
            return None
        match.range.low = encode(low, field.bitwidth)
        match.range.high = encode(high, field.bitwidth)
    elif field.kind == "optional":
        match.optional.value = encode(parse_value(spec, field.bitwidth, what), field.bitwidth)
    else:
        raise BadValue(f"{what}: match kind {field.kind!r} is not supported")
    return match


def action(index: P4InfoIndex, name: str, params: Mapping[str, Any], what: str) -> p4runtime_pb2.Action:
    """An Action with every parameter given exactly once."""
    info = index.get("action", name)
    message = p4runtime_pb2.Action(action_id=info.preamble.id)
    declared = index.params(name)
    unknown = set(params) - {p.name for p in declared}
    if unknown:
        raise BadValue(f"{what}: action {name!r} has no parameter {sorted(unknown)[0]!r}"
                       f" (parameters: {', '.join(p.name for p in declared) or 'none'})")
    for param in declared:
        if param.name not in params:
            raise BadValue(f"{what}: action {name!r} needs parameter {param.name!r}")
        value = parse_value(params[param.name], param.bitwidth, f"{what}.{param.name}")
        message.params.add(param_id=param.id, value=encode(value, param.bitwidth))
    return message


def table_entry(
    index: P4InfoIndex,
    table: str,
    match: Mapping[str, Any] | None = None,
    action_name: str | None = None,
    params: Mapping[str, Any] | None = None,
    priority: int | None = None,
    default_action: bool = False,
    what: str = "table entry",
) -> p4runtime_pb2.TableEntry:
    """A TableEntry for `table`; with `default_action`, the table's default entry."""
    info = index.get("table", table)
    entry = p4runtime_pb2.TableEntry(table_id=info.preamble.id)
    if default_action:
        if match:
            raise BadValue(f"{what}: a default action has no match")
        entry.is_default_action = True
    for name, spec in (match or {}).items():
        field = index.match_field(table, name)
        built = field_match(field, spec, f"{what}.match[{name!r}]")
        if built is not None:
            entry.match.append(built)
    needs_priority = index.requires_priority(table)
    if priority is not None:
        if not needs_priority:
            raise BadValue(f"{what}: table {table!r} has no ternary/range/optional key, so no priority")
        if priority <= 0:
            raise BadValue(f"{what}: priority must be positive, not {priority}")
        entry.priority = priority
    elif needs_priority and not default_action:
        raise BadValue(f"{what}: table {table!r} needs a priority (it has a ternary/range/optional key)")
    if action_name is not None:
        allowed = index.table_actions(table)
        full = index.get("action", action_name).preamble.name
        if full not in allowed:
            raise BadValue(f"{what}: table {table!r} cannot run action {action_name!r}"
                           f" (actions: {', '.join(allowed)})")
        entry.action.action.CopyFrom(action(index, action_name, params or {}, f"{what}.action_params"))
    elif params:
        raise BadValue(f"{what}: action parameters given without an action")
    return entry


def multicast_group(group_id: int, replicas: list[tuple[int, int]]) -> p4runtime_pb2.PacketReplicationEngineEntry:
    """A PRE multicast group: replicas are (egress port, instance)."""
    if group_id <= 0:
        raise BadValue(f"multicast group id must be positive, not {group_id}")
    entry = p4runtime_pb2.PacketReplicationEngineEntry()
    entry.multicast_group_entry.multicast_group_id = group_id
    for port, instance in replicas:
        entry.multicast_group_entry.replicas.add(egress_port=port, instance=instance)
    return entry


def clone_session(
    session_id: int,
    replicas: list[tuple[int, int]],
    class_of_service: int = 0,
    packet_length_bytes: int = 0,
) -> p4runtime_pb2.PacketReplicationEngineEntry:
    """A PRE clone session: replicas are (egress port, instance); length 0 = no truncation."""
    if session_id <= 0:
        raise BadValue(f"clone session id must be positive, not {session_id}")
    entry = p4runtime_pb2.PacketReplicationEngineEntry()
    session = entry.clone_session_entry
    session.session_id = session_id
    session.class_of_service = class_of_service
    session.packet_length_bytes = packet_length_bytes
    for port, instance in replicas:
        session.replicas.add(egress_port=port, instance=instance)
    return entry


def counter_entry(index: P4InfoIndex, counter: str, cell: int | None = None) -> p4runtime_pb2.CounterEntry:
    """A CounterEntry to read one cell (or, with `cell` None, the whole array)."""
    entry = p4runtime_pb2.CounterEntry(counter_id=index.get("counter", counter).preamble.id)
    if cell is not None:
        entry.index.index = cell
    return entry


def register_entry(index: P4InfoIndex, register: str, cell: int | None = None) -> p4runtime_pb2.RegisterEntry:
    """A RegisterEntry to read one cell (or, with `cell` None, the whole array)."""
    entry = p4runtime_pb2.RegisterEntry(register_id=index.get("register", register).preamble.id)
    if cell is not None:
        entry.index.index = cell
    return entry
