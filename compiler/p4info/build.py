"""P4Info message from the lowered program's control-plane model (formats.md §3)."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2

from ..bmv2.model import ControlPlane, CpParam
from .ids import Prefix, allocate_ids
from .names import SuffixSet

MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
SCOPES = {
    "TABLE_AND_DEFAULT": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
    "TABLE_ONLY": p4info_pb2.ActionRef.TABLE_ONLY,
    "DEFAULT_ONLY": p4info_pb2.ActionRef.DEFAULT_ONLY,
}
COUNTER_UNITS = {"BYTES": p4info_pb2.CounterSpec.BYTES, "PACKETS": p4info_pb2.CounterSpec.PACKETS,
                 "BOTH": p4info_pb2.CounterSpec.BOTH}
METER_UNITS = {"BYTES": p4info_pb2.MeterSpec.BYTES, "PACKETS": p4info_pb2.MeterSpec.PACKETS}


def field_ids(params: list[CpParam]) -> list[int]:
    """p4c's FieldIdAllocator: `@id` wins, others take the next free position (from 1)."""
    taken = {p.explicit_id for p in params if p.explicit_id is not None}
    ids: list[int] = []
    position = 0
    for param in params:
        position += 1
        if param.explicit_id is not None:
            ids.append(param.explicit_id)
            continue
        while position in taken:
            position += 1
        ids.append(position)
        taken.add(position)
    return ids


def value_bytes(value: int, bitwidth: int) -> bytes:
    """A P4Runtime value padded to ceil(W/8) bytes, as p4c writes them."""
    return value.to_bytes(max(1, (bitwidth + 7) // 8), "big")


def build_p4info(cp: ControlPlane) -> p4info_pb2.P4Info:
    """The P4Info message for control-plane model `cp`."""
    symbols: list[tuple[int, str, int | None]] = []
    kinds = [
        (Prefix.TABLE, cp.tables),
        (Prefix.ACTION, cp.actions),
        (Prefix.ACTION_PROFILE, cp.action_profiles),
        (Prefix.COUNTER, cp.counters),
        (Prefix.DIRECT_COUNTER, cp.direct_counters),
        (Prefix.METER, cp.meters),
        (Prefix.DIRECT_METER, cp.direct_meters),
        (Prefix.VALUE_SET, cp.value_sets),
        (Prefix.REGISTER, cp.registers),
        (Prefix.DIGEST, cp.digests),
    ]
    names = SuffixSet()
    for prefix, objects in kinds:
        for obj in objects:
            symbols.append((prefix, obj.name, obj.explicit_id))
            names.add(obj.name)
    for header in cp.controller_headers:
        symbols.append((Prefix.CONTROLLER_HEADER, header.type_name, header.explicit_id))
    ids = allocate_ids(symbols)

    def preamble(msg: object, prefix: int, name: str, annotations: list[str] = ()) -> None:
        msg.preamble.id = ids[(prefix, name)]
        msg.preamble.name = name
        msg.preamble.alias = names.alias(name)
        msg.preamble.annotations.extend(annotations)

    info = p4info_pb2.P4Info()
    for key, value in cp.pkg_info.items():
        if key in ("name", "version", "organization", "contact", "url"):
            setattr(info.pkg_info, key, value)
        elif key == "doc":
            info.pkg_info.doc.brief = value
    info.pkg_info.arch = cp.pkg_info.get("arch", "v1model")
    info.type_info.SetInParent()
    for table in cp.tables:
        msg = info.tables.add()
        preamble(msg, Prefix.TABLE, table.name, table.annotations)
        for key, field_id in zip(table.keys, field_ids(table.keys), strict=True):
            if key.match_kind == "selector":
                continue
            match = msg.match_fields.add()
            match.id = field_id
            match.name = key.name
            match.bitwidth = key.bitwidth
            match.match_type = MATCH_TYPES[key.match_kind]
        for ref in table.actions:
            if (Prefix.ACTION, ref.action) not in ids:
                continue  # a @hidden action: not in P4Info
            action_ref = msg.action_refs.add()
            action_ref.id = ids[(Prefix.ACTION, ref.action)]
            if ref.scope != "TABLE_AND_DEFAULT":
                action_ref.scope = SCOPES[ref.scope]
            action_ref.annotations.extend(ref.annotations)
        if table.default_action is not None and (Prefix.ACTION, table.default_action) in ids:
            default_id = ids[(Prefix.ACTION, table.default_action)]
            if table.const_default:
                msg.const_default_action_id = default_id
            # p4c lists the initial default only when the source declares one (not the
            # implicit NoAction) and the table is direct (indirect tables have no default).
            if table.explicit_default and table.implementation is None:
                msg.initial_default_action.action_id = default_id
                for param_id, value, width in table.default_args:
                    arg = msg.initial_default_action.arguments.add()
                    arg.param_id = param_id
                    arg.value = value_bytes(value, width)
        if table.implementation is not None:
            msg.implementation_id = ids[(Prefix.ACTION_PROFILE, table.implementation)]
        for kind, resource in table.direct_resources:
            prefix = Prefix.DIRECT_COUNTER if kind == "counter" else Prefix.DIRECT_METER
            msg.direct_resource_ids.append(ids[(prefix, resource)])
        msg.size = table.size
        if table.support_timeout:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if table.is_const:
            msg.is_const_table = True
        if table.has_initial_entries:
            msg.has_initial_entries = True
    for action in cp.actions:
        msg = info.actions.add()
        preamble(msg, Prefix.ACTION, action.name, action.annotations)
        for param, param_id in zip(action.params, field_ids(action.params), strict=True):
            p = msg.params.add()
            p.id = param_id
            p.name = param.name
            p.bitwidth = param.bitwidth
    table_ids = {t.name: ids[(Prefix.TABLE, t.name)] for t in cp.tables}
    for profile in cp.action_profiles:
        msg = info.action_profiles.add()
        preamble(msg, Prefix.ACTION_PROFILE, profile.name)
        msg.table_ids.extend(table_ids[name] for name in profile.tables)
        if profile.with_selector:
            msg.with_selector = True
        msg.size = profile.size
    for counter in cp.counters:
        msg = info.counters.add()
        preamble(msg, Prefix.COUNTER, counter.name)
        msg.spec.unit = COUNTER_UNITS[counter.unit]
        msg.size = counter.size
    for counter in cp.direct_counters:
        msg = info.direct_counters.add()
        preamble(msg, Prefix.DIRECT_COUNTER, counter.name)
        msg.spec.unit = COUNTER_UNITS[counter.unit]
        if counter.table is not None:
            msg.direct_table_id = table_ids[counter.table]
    for meter in cp.meters:
        msg = info.meters.add()
        preamble(msg, Prefix.METER, meter.name)
        msg.spec.unit = METER_UNITS[meter.unit]
        msg.size = meter.size
    for meter in cp.direct_meters:
        msg = info.direct_meters.add()
        preamble(msg, Prefix.DIRECT_METER, meter.name)
        msg.spec.unit = METER_UNITS[meter.unit]
        if meter.table is not None:
            msg.direct_table_id = table_ids[meter.table]
    for header in cp.controller_headers:
        msg = info.controller_packet_metadata.add()
        msg.preamble.id = ids[(Prefix.CONTROLLER_HEADER, header.type_name)]
        msg.preamble.name = header.name
        msg.preamble.alias = header.name
        msg.preamble.annotations.append(f'@controller_header("{header.name}")')
        for param, param_id in zip(header.fields, field_ids(header.fields), strict=True):
            m = msg.metadata.add()
            m.id = param_id
            m.name = param.name
            m.bitwidth = param.bitwidth
    for vset in cp.value_sets:
        msg = info.value_sets.add()
        preamble(msg, Prefix.VALUE_SET, vset.name)
        members = vset.fields or [CpParam("", vset.bitwidth)]
        for field_id, member in enumerate(members, start=1):
            match = msg.match.add()
            match.id = field_id
            if member.name:
                match.name = member.name
            match.bitwidth = member.bitwidth
            match.match_type = p4info_pb2.MatchField.EXACT
        msg.size = vset.size
    for register in cp.registers:
        msg = info.registers.add()
        preamble(msg, Prefix.REGISTER, register.name)
        if register.signed:
            msg.type_spec.bitstring.int.bitwidth = register.bitwidth
        else:
            msg.type_spec.bitstring.bit.bitwidth = register.bitwidth
        msg.size = register.size
    for digest in cp.digests:
        msg = info.digests.add()
        preamble(msg, Prefix.DIGEST, digest.name)
        msg.type_spec.struct.name = digest.struct_name
        struct = info.type_info.structs[digest.struct_name]
        for member in digest.fields:
            m = struct.members.add()
            m.name = member.name
            if member.kind == "bool":
                m.type_spec.bool.SetInParent()
            elif member.kind == "error":
                m.type_spec.error.SetInParent()
                if not info.type_info.error.members:
                    info.type_info.error.members.extend(cp.errors)
            elif member.kind == "int":
                m.type_spec.bitstring.int.bitwidth = member.bitwidth
            else:
                m.type_spec.bitstring.bit.bitwidth = member.bitwidth
    for name, width, members in cp.serializable_enums:
        spec = info.type_info.serializable_enums[name]
        spec.underlying_type.bitwidth = width
        for member, value in members:
            m = spec.members.add()
            m.name = member
            m.value = value_bytes(value & ((1 << width) - 1), width)
    return info


