"""Tofino externs from Python, as a controller drives them: a RegisterParam written
through the register API, an ActionSelector whose member is the CRC16 of the flow,
and the loader's refusals of malformed extern JSON, each naming its place. The
arithmetic (filters, math units, CRC catalogue) is tested in Rust
(switch/src/externs/, switch/tests/tna_externs.rs)."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine
from bufferlab.switch.errors import LoadError

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "p4" / "tna"


def compiled(name: str) -> dict:
    """tests/p4/tna/<name>.p4 compiled (TNA JSON)."""
    doc, _ = compile_p4(PROGRAMS / f"{name}.p4")
    return doc


def udp_frame(src: int, report: bytes, sport: int = 1234) -> bytes:
    """Ethernet/IPv4/UDP from 10.0.0.x `src` to 10.0.0.99, source port `sport`, then `report`."""
    ip = bytes([0x45, 0]) + (28 + len(report)).to_bytes(2, "big") + bytes([0, 0, 0, 0, 64, 17, 0, 0])
    ip += bytes([10, 0, 0, src, 10, 0, 0, 99])
    udp = sport.to_bytes(2, "big") + (5678).to_bytes(2, "big") + (8 + len(report)).to_bytes(2, "big") + b"\0\0"
    return b"\xff" * 6 + bytes(5) + b"\x01\x08\x00" + ip + udp + report


def run(e: Engine, frame: bytes, t: int) -> tuple[int, bytes]:
    """Sends `frame` on port 1 at `t`; the one frame out: its port and report."""
    e.send(1, frame, t)
    e.drain()
    out = e.received()
    assert len(out) == 1
    port, data, _ = out[0]
    return port, data[42:]


def test_a_register_param_is_a_one_cell_register_to_the_controller():
    e = Engine(json.dumps(compiled("param_math")))
    report = (10).to_bytes(4, "big") + bytes(12)
    counts = [int.from_bytes(run(e, udp_frame(1, report), i * 1000)[1][4:8], "big") for i in range(4)]
    assert counts == [1, 2, 3, 3], "the initial limit, 3"
    assert e.register_read("pipe.Ingress.limit", 0) == 3
    e.register_write("Ingress.limit", 0, 6)
    counts = [int.from_bytes(run(e, udp_frame(1, report), (4 + i) * 1000)[1][4:8], "big") for i in range(4)]
    assert counts == [4, 5, 6, 6]


def crc16_arc(data: bytes) -> int:
    """CRC-16/ARC bit by bit."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def test_an_action_selector_spreads_flows_by_their_crc16():
    e = Engine(json.dumps(compiled("hash_select")))
    for member, port in enumerate((5, 6, 7, 8)):
        e.profile_member_set("Ingress.next_hop_selector", member, "Ingress.forward", {"port": port})
    e.profile_group_set("Ingress.next_hop_selector", 7, [0, 1, 2, 3], False)
    e.table_add_group("Ingress.next_hop", {"hdr.ipv4.dst_addr": "10.0.0.99"}, 7)
    seen = set()
    for i, src in enumerate(range(1, 33)):
        sport = 1000 + 7 * src
        port, _ = run(e, udp_frame(src, bytes(31), sport), i * 1000)
        # The selector's Hash<bit<8>> keeps the CRC16's low 8 bits of (source, source port).
        want = 5 + (crc16_arc(bytes([10, 0, 0, src]) + sport.to_bytes(2, "big")) & 0xFF) % 4
        assert port == want, f"10.0.0.{src}"
        seen.add(port)
    assert seen == {5, 6, 7, 8}


def ingress(doc: dict) -> dict:
    return doc["pipes"][0]["ingress"]


def test_a_math_unit_with_an_unknown_operation_is_refused_by_name():
    doc = compiled("param_math")
    unit = next(x for x in ingress(doc)["extern_instances"] if x["type"] == "MathUnit")
    unit["attribute_values"][0]["value"] = "LOG"
    with pytest.raises(LoadError, match=r"ingress: extern_instances\[\d+\] 'Ingress\.\w+'.*arg0 is not a MathOp_t"):
        Engine(json.dumps(doc))


def test_a_direct_call_on_an_indexed_filter_is_refused():
    doc = compiled("lpf_wred")
    for action in ingress(doc)["actions"]:
        for prim in action["primitives"]:
            if prim["op"] == "_Lpf_execute":
                prim["op"] = "_DirectLpf_execute"
                del prim["parameters"][2]
    with pytest.raises(LoadError, match=r"'Ingress\.port_lpf' is not a DirectLpf instance"):
        Engine(json.dumps(doc))


def test_a_direct_filter_bound_to_an_unknown_table_is_refused():
    doc = compiled("lpf_wred")
    lpf = next(x for x in ingress(doc)["extern_instances"] if x["type"] == "DirectLpf")
    lpf["binding"] = "Ingress.nowhere"
    with pytest.raises(LoadError, match=r"binding: unknown table 'Ingress\.nowhere'"):
        Engine(json.dumps(doc))


def test_a_symmetric_pair_of_unequal_widths_is_refused():
    doc = compiled("hash_select")
    calc = next(c for c in ingress(doc)["calculations"] if c.get("symmetric"))
    calc["symmetric"] = [[0, 2]]  # a 32-bit address with a 16-bit port
    with pytest.raises(LoadError, match=r"symmetric pair \[0,2\] is not two field inputs of one width"):
        Engine(json.dumps(doc))
