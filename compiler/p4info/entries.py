"""The `--p4runtime-entries-files` output: a WriteRequest inserting every const/initial entry."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from ..bmv2.model import ControlPlane
from .build import value_bytes


def build_entries(cp: ControlPlane, info: p4info_pb2.P4Info) -> p4runtime_pb2.WriteRequest:
    """INSERT updates for the entries of every table, ids taken from `info` (p4c's order)."""
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a.preamble.id for a in info.actions}
    request = p4runtime_pb2.WriteRequest()
    for table in cp.tables:
        if not table.entries:
            continue
        msg = tables[table.name]
        for entry in table.entries:
            update = request.updates.add()
            update.type = p4runtime_pb2.Update.INSERT
            te = update.entity.table_entry
            te.table_id = msg.preamble.id
            for position, kind, values, width in entry.matches:
                fm = te.match.add()
                fm.field_id = msg.match_fields[position - 1].id
                if kind == "exact":
                    fm.exact.value = value_bytes(values[0], width)
                elif kind == "ternary":
                    fm.ternary.value = value_bytes(values[0], width)
                    fm.ternary.mask = value_bytes(values[1], width)
                elif kind == "optional":
                    fm.optional.value = value_bytes(values[0], width)
                elif kind == "lpm":
                    fm.lpm.value = value_bytes(values[0], width)
                    fm.lpm.prefix_len = values[1]
                elif kind == "range":
                    fm.range.low = value_bytes(values[0], width)
                    fm.range.high = value_bytes(values[1], width)
            te.action.action.action_id = actions[entry.action]
            for param_id, value, width in entry.args:
                param = te.action.action.params.add()
                param.param_id = param_id
                param.value = value_bytes(value, width)
            te.priority = entry.priority
            te.is_const = table.is_const
    return request
