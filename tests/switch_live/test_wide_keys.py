"""Table keys on a 336-bit field (tests/p4/wide_field.p4) through the P4Runtime server and
`EngineTarget`, in process: 42-byte match values written, matched, read back and deleted;
values that do not fit are refused with the spec's code."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.client import P4RuntimeError, entity

#: a.big of the frames the entries match (42 bytes), and a copy one bit off in the lowest byte.
BIG = bytes(range(0x30, 0x30 + 42))
BIG_OFF = BIG[:-1] + bytes([BIG[-1] ^ 1])
#: The value of wide_const's const entry.
CONST = bytes(range(0xC0, 0xC0 + 42))


def verdict(engine, big: bytes) -> int:
    """The verdict byte the program emits for a frame carrying `big` (x = 0): 0x15 for any
    value but zero, K and all ones, plus 32/64/128 for a hit in wide_exact/ternary/const."""
    engine.send(0, big + b"\x00", engine.now())
    engine.drain()
    [(port, out, _)] = engine.received()
    assert port == 1
    return out[-1]


@pytest.fixture
def wide(switch, connect, programs):
    prog = programs("wide_field.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    return prog, controller


def exact_entry(index, value: int) -> p4runtime_pb2.Entity:
    return entity(entities.table_entry(index, "wide_exact", match={"hdr.a.big": value},
                                       action_name="mark", params={"bit_": 32}))


def test_exact_entry_on_a_wide_key_matches_reads_back_and_deletes(switch, wide):
    prog, controller = wide
    controller.insert(exact_entry(prog.index, int.from_bytes(BIG, "big")))
    assert verdict(switch.engine, BIG) == 0x15 | 32
    assert verdict(switch.engine, BIG_OFF) == 0x15

    [read] = controller.read(entity(p4runtime_pb2.TableEntry(
        table_id=prog.index.get("table", "wide_exact").preamble.id)))
    assert read.table_entry.match[0].exact.value == BIG

    controller.delete(exact_entry(prog.index, int.from_bytes(BIG, "big")))
    assert verdict(switch.engine, BIG) == 0x15
    assert switch.engine.table_entries("I.wide_exact") == []


def test_ternary_and_const_entries_on_a_wide_key(switch, wide):
    prog, controller = wide
    mask = (0xFF << 328) | 0x0F
    value = (0xEE << 328) | 0x05
    controller.insert(entity(entities.table_entry(
        prog.index, "wide_ternary", match={"hdr.a.big": [value, mask]},
        action_name="mark", params={"bit_": 64}, priority=1)))
    assert verdict(switch.engine, b"\xee" + BIG[1:-1] + b"\xa5") == 0x15 | 64
    assert verdict(switch.engine, b"\xee" + BIG[1:-1] + b"\xa6") == 0x15
    [read] = controller.read(entity(p4runtime_pb2.TableEntry(
        table_id=prog.index.get("table", "wide_ternary").preamble.id)))
    assert read.table_entry.match[0].ternary.value == value.to_bytes(42, "big")
    assert read.table_entry.match[0].ternary.mask == mask.to_bytes(42, "big")

    assert verdict(switch.engine, CONST) == 0x15 | 128
    [const] = controller.read(entity(p4runtime_pb2.TableEntry(
        table_id=prog.index.get("table", "wide_const").preamble.id)))
    assert const.table_entry.match[0].exact.value == CONST


def raw_exact_entry(index, value: bytes) -> p4runtime_pb2.Entity:
    """A wide_exact entry whose match value is `value` as given (not re-encoded)."""
    entry = entities.table_entry(index, "wide_exact", match={"hdr.a.big": 1},
                                 action_name="mark", params={"bit_": 32})
    entry.match[0].exact.value = value
    return entity(entry)


def test_wide_match_values_follow_the_bytestring_rules(switch, wide):
    prog, controller = wide
    # A zero byte in front is accepted and reads back in canonical form.
    controller.insert(raw_exact_entry(prog.index, b"\x00" + BIG))
    assert verdict(switch.engine, BIG) == 0x15 | 32
    [read] = controller.read(entity(p4runtime_pb2.TableEntry(
        table_id=prog.index.get("table", "wide_exact").preamble.id)))
    assert read.table_entry.match[0].exact.value == BIG
    # A value above 336 bits does not fit the field.
    with pytest.raises(P4RuntimeError) as refused:
        controller.insert(raw_exact_entry(prog.index, b"\x01" + BIG))
    assert refused.value.updates[0].code == "OUT_OF_RANGE"
    assert len(switch.engine.table_entries("I.wide_exact")) == 1
