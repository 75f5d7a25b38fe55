"""Table entries: validation (spec "TableEntry", "Bytestrings") and translation to the target.

Checks follow the order a client can act on: the table, the entry's shape (const flag,
default entry rules, priority), the match, then the action; all before the target is called.
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from . import codec
from . import target as tgt
from .p4info_index import ActionInfo, MatchType, P4InfoIndex, TableInfo
from .status import P4RuntimeError

INT32_MAX = 2**31 - 1
Key = tuple[tgt.MatchParam, ...]
Scope = p4info_pb2.ActionRef.Scope


def to_target_priority(table: TableInfo, priority: int) -> int:
    """BMv2 priority (smaller wins) for a P4Runtime priority (larger wins)."""
    return INT32_MAX - priority if table.needs_priority else 0


def from_target_priority(table: TableInfo, priority: int) -> int:
    """P4Runtime priority for a BMv2 priority."""
    return INT32_MAX - priority if table.needs_priority else 0


def check_priority(table: TableInfo, priority: int) -> None:
    """Priority > 0 iff the table has ternary/range/optional fields (INVALID_ARGUMENT)."""
    if table.needs_priority and priority <= 0:
        raise P4RuntimeError("INVALID_ARGUMENT", f"table {table.name} needs a priority > 0")
    if not table.needs_priority and priority != 0:
        raise P4RuntimeError("INVALID_ARGUMENT", f"table {table.name} takes no priority")


def translate_match(table: TableInfo, matches: list[p4runtime_pb2.FieldMatch]) -> Key:
    """The target key for a P4Runtime match (omitted don't-care fields become wildcards)."""
    given: dict[int, p4runtime_pb2.FieldMatch] = {}
    for match in matches:
        if match.field_id not in table.fields_by_id:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"table {table.name} has no match field id {match.field_id}"
            )
        if match.field_id in given:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"match field id {match.field_id} given twice"
            )
        given[match.field_id] = match
    key = []
    for field in table.match_fields:
        match = given.get(field.id)
        what = f"{table.name} field {field.name}"
        width = field.bitwidth
        if match is None:
            key.append(_wildcard(field.match_type, width, what))
            continue
        kind = match.WhichOneof("field_match_type")
        expected = {
            MatchType.EXACT: "exact",
            MatchType.LPM: "lpm",
            MatchType.TERNARY: "ternary",
            MatchType.RANGE: "range",
            MatchType.OPTIONAL: "optional",
        }.get(field.match_type)
        if kind == "other" or expected is None:
            raise P4RuntimeError("UNIMPLEMENTED", f"{what}: match kind not supported")
        if kind != expected:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"{what} is a {expected} field, got a {kind} match"
            )
        key.append(_translate_field(kind, match, width, what))
    return tuple(key)


def _wildcard(match_type: int, width: int, what: str) -> tgt.MatchParam:
    """The explicit wildcard for an omitted field; exact fields cannot be omitted."""
    zero = codec.from_int(0, width)
    if match_type == MatchType.LPM:
        return tgt.MatchParam("lpm", zero, prefix_len=0)
    if match_type in (MatchType.TERNARY, MatchType.OPTIONAL):
        return tgt.MatchParam("ternary", zero, mask=zero)
    if match_type == MatchType.RANGE:
        return tgt.MatchParam("range", zero, high=codec.from_int((1 << width) - 1, width))
    if match_type == MatchType.EXACT:
        raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: exact match field missing")
    raise P4RuntimeError("UNIMPLEMENTED", f"{what}: match kind not supported")


def _translate_field(
    kind: str, match: p4runtime_pb2.FieldMatch, width: int, what: str
) -> tgt.MatchParam:
    """One present field, checked as spec "TableEntry" / "Bytestrings" say."""
    if kind == "exact":
        return tgt.MatchParam("exact", codec.decode(match.exact.value, width, what))
    if kind == "lpm":
        value = codec.decode(match.lpm.value, width, what)
        prefix_len = match.lpm.prefix_len
        if prefix_len <= 0 or prefix_len > width:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"{what}: prefix_len {prefix_len} not in 1..{width}"
            )
        if codec.to_int(value) & ((1 << (width - prefix_len)) - 1):
            raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: value has bits beyond the prefix")
        return tgt.MatchParam("lpm", value, prefix_len=prefix_len)
    if kind == "ternary":
        value = codec.decode(match.ternary.value, width, what)
        mask = codec.decode(match.ternary.mask, width, what + " mask")
        if codec.to_int(mask) == 0:
            raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: ternary mask 0 must be omitted")
        if codec.to_int(value) & ~codec.to_int(mask):
            raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: value has bits outside the mask")
        return tgt.MatchParam("ternary", value, mask=mask)
    if kind == "range":
        low = codec.decode(match.range.low, width, what + " low")
        high = codec.decode(match.range.high, width, what + " high")
        if codec.to_int(low) > codec.to_int(high):
            raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: range low > high")
        if codec.to_int(low) == 0 and codec.to_int(high) == (1 << width) - 1:
            raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: full range must be omitted")
        return tgt.MatchParam("range", low, high=high)
    value = codec.decode(match.optional.value, width, what)
    return tgt.MatchParam("ternary", value, mask=codec.from_int((1 << width) - 1, width))


def match_to_p4runtime(table: TableInfo, key: Key) -> list[p4runtime_pb2.FieldMatch]:
    """The P4Runtime match of a target key, wildcards omitted, values canonical."""
    matches = []
    for field, param in zip(table.match_fields, key, strict=True):
        match = p4runtime_pb2.FieldMatch(field_id=field.id)
        if param.kind == "exact":
            match.exact.value = codec.canonical(param.value)
        elif param.kind == "lpm":
            if not param.prefix_len:
                continue
            match.lpm.value = codec.canonical(param.value)
            match.lpm.prefix_len = param.prefix_len
        elif param.kind == "ternary":
            mask = codec.to_int(param.mask or b"")
            if mask == 0:
                continue
            if field.match_type == MatchType.OPTIONAL:
                match.optional.value = codec.canonical(param.value)
            else:
                match.ternary.value = codec.canonical(param.value)
                match.ternary.mask = codec.canonical(param.mask or b"")
        else:
            low, high = codec.to_int(param.value), codec.to_int(param.high or b"")
            if low == 0 and high == (1 << field.bitwidth) - 1:
                continue
            match.range.low = codec.canonical(param.value)
            match.range.high = codec.canonical(param.high or b"")
        matches.append(match)
    return matches


def translate_action_call(
    index: P4InfoIndex, action: p4runtime_pb2.Action, json_name: str
) -> tgt.ActionCall:
    """Parameters checked (each exactly once, fitting its width) and padded in P4Info order."""
    info: ActionInfo = index.actions[action.action_id]
    given: dict[int, bytes] = {}
    for param in action.params:
        spec = info.params_by_id.get(param.param_id)
        if spec is None:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"action {info.name} has no parameter id {param.param_id}"
            )
        if param.param_id in given:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"action {info.name} parameter {spec.name} given twice"
            )
        given[param.param_id] = codec.decode(
            param.value, spec.bitwidth, f"action {info.name} parameter {spec.name}"
        )
    missing = [p.name for p in info.params if p.id not in given]
    if missing:
        raise P4RuntimeError(
            "INVALID_ARGUMENT", f"action {info.name} misses parameters {', '.join(missing)}"
        )
    return tgt.ActionCall(json_name, tuple(given[p.id] for p in info.params))


def check_table_action(table: TableInfo, action_id: int, default: bool) -> None:
    """The action must be listed for the table with a scope allowing this use."""
    if action_id not in table.action_scopes:
        raise P4RuntimeError(
            "INVALID_ARGUMENT", f"action id {action_id} is not an action of table {table.name}"
        )
    scope = table.action_scopes[action_id]
    if default and scope == Scope.TABLE_ONLY:
        raise P4RuntimeError("PERMISSION_DENIED", "action is @tableonly, not a default action")
    if not default and scope == Scope.DEFAULT_ONLY:
        raise P4RuntimeError("PERMISSION_DENIED", "action is @defaultonly, not an entry action")


def translate_entry_action(
    index: P4InfoIndex, table: TableInfo, action: p4runtime_pb2.TableAction
) -> tgt.EntryAction:
    """The target action of a (non-default) entry: direct action or profile member/group."""
    kind = action.WhichOneof("type")
    if kind is None:
        raise P4RuntimeError("INVALID_ARGUMENT", "table entry has no action")
    if kind == "action_profile_action_set":
        raise P4RuntimeError("UNIMPLEMENTED", "one-shot action selector programming")
    if not table.implementation_id:
        if kind != "action":
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"table {table.name} is direct: it takes an action"
            )
        check_table_action(table, action.action.action_id, default=False)
        return translate_action_call(
            index, action.action, table.action_json_names[action.action.action_id]
        )
    profile = index.profile(table.implementation_id)
    if kind == "action":
        raise P4RuntimeError(
            "INVALID_ARGUMENT", f"table {table.name} is indirect: it takes a member or group"
        )
    if kind == "action_profile_group_id":
        if not profile.with_selector:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"profile {profile.name} has no selector: no groups"
            )
        return tgt.GroupRef(action.action_profile_group_id)
    return tgt.MemberRef(action.action_profile_member_id)


def action_to_p4runtime(
    index: P4InfoIndex, table: TableInfo, action: tgt.EntryAction
) -> p4runtime_pb2.TableAction:
    """The P4Runtime action of a target entry (parameters canonical)."""
    result = p4runtime_pb2.TableAction()
    if isinstance(action, tgt.MemberRef):
        result.action_profile_member_id = action.member_id
    elif isinstance(action, tgt.GroupRef):
        result.action_profile_group_id = action.group_id
    else:
        result.action.CopyFrom(action_call_to_p4runtime(index, table.action_json_names, action))
    return result


def action_call_to_p4runtime(
    index: P4InfoIndex, json_names: dict[int, str], call: tgt.ActionCall
) -> p4runtime_pb2.Action:
    """A P4Runtime Action for a target ActionCall, resolving the JSON name to a P4Info id."""
    action_id = next((i for i, n in json_names.items() if n == call.name), None)
    if action_id is None:
        raise P4RuntimeError("INTERNAL", f"target returned unknown action {call.name}")
    result = p4runtime_pb2.Action(action_id=action_id)
    for spec, value in zip(index.actions[action_id].params, call.params, strict=True):
        result.params.add(param_id=spec.id, value=codec.canonical(value))
    return result
