"""Width rules: a table's key must fit one stage's input crossbar and an action's data
the stage's action data bus; wider tables are refused (bf-p4c cannot split a key).

Action data of more than 32 bits cannot ride in the match entry (immediate data) and
needs an action data table: allowed, worth a note because it costs memory.
"""

from __future__ import annotations

from .program import Gress, position
from .report import Finding
from .targets import Device

IMMEDIATE_BITS = 32
# Tofino matches a range key within 5 nibbles of one PHV container.
RANGE_KEY_BITS = 20


def check_gress(g: Gress, device: Device) -> list[Finding]:
    """Every table key and every action's data of one gress."""
    found: list[Finding] = []
    for node in g.nodes.values():
        if node.kind != "table" or node.hidden:
            continue
        limit = device.exact_key_bytes if node.key_kind == "exact" else device.ternary_key_bytes
        key_bytes = -(-node.key_bits // 8)
        if key_bytes > limit:
            found.append(Finding("key-width", node.pos,
                                 f"table {node.name} has a {node.key_bits}-bit {node.key_kind} key "
                                 f"({key_bytes} bytes); one stage's crossbar takes {limit}"))
    for table in g.pipeline.get("tables", []):
        for key in table.get("key", []):
            target = key.get("target")
            if key.get("match_type") != "range" or not isinstance(target, list):
                continue
            width = g.widths.field((target[0], target[1])) or 0
            if width > RANGE_KEY_BITS:
                found.append(Finding("key-width", position(table.get("source_info")),
                                     f"table {table['name']} range-matches {key.get('name')} "
                                     f"({width} bits); Tofino's range match takes {RANGE_KEY_BITS} "
                                     "bits (5 nibbles)"))
    # Where an action is used, for actions our JSON gives no position of their own.
    used = {a: node.pos for node in g.nodes.values() if node.kind == "table" and not node.hidden
            for a in node.actions}
    for name, table_pos in sorted(used.items()):
        action = g.actions[name]
        pos = position(action.get("source_info"), table_pos)
        bits = sum(int(p.get("bitwidth", 0)) for p in action.get("runtime_data", []))
        if bits > device.action_data_bytes * 8:
            found.append(Finding("action-data-width", pos,
                                 f"action {name} takes {bits} bits of data; the action data bus "
                                 f"carries {device.action_data_bytes * 8}"))
        elif bits > IMMEDIATE_BITS:
            found.append(Finding("action-data-width", pos,
                                 f"action {name} takes {bits} bits of data: more than {IMMEDIATE_BITS} "
                                 "bits go to an action data table, not the match entry", "note"))
    return found
