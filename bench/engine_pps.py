"""Packets per second through the switch engine, in process and in virtual
time, for an IPv4 router (LPM + checksum update) and for plain L2 forwarding,
with 64-byte and 1500-byte frames, and for the same router written for Tofino's
TNA (tests/p4/tna/l3_forward.p4: checksum verified by the parser's Checksum,
recomputed by the deparser's, a bridged header, an egress table: two gresses
and the intrinsic metadata around them). Prints one JSON line.

`*_engine_pps` loads the engine from Rust (`send_repeated`); `*_python_pps`
includes one Python `send` call and one `received` frame per packet. Rates are
per second of this process's CPU time, so other load on the machine does not
skew them.
"""

import ipaddress
import json
import time
from pathlib import Path

from bufferlab.switch import Engine

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "engine" / "fixtures" / "l3.json"
TNA_L3 = ROOT / "tests" / "p4" / "tna" / "l3_forward.p4"
BATCH = 20_000


def csum16(data: bytes) -> int:
    s = sum(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_frame(size: int) -> bytes:
    payload = bytes(size - 34)
    hdr = bytearray(bytes([0x45, 0]) + (20 + len(payload)).to_bytes(2, "big") + bytes([0, 0, 0x40, 0, 64, 17, 0, 0]))
    hdr += ipaddress.IPv4Address("10.0.0.1").packed + ipaddress.IPv4Address("10.1.2.3").packed
    hdr[10:12] = csum16(bytes(hdr)).to_bytes(2, "big")
    return bytes(6) + bytes([0, 0, 0, 0, 0, 1]) + b"\x08\x00" + bytes(hdr) + payload


def l2_frame(size: int) -> bytes:
    return bytes.fromhex("080000000202") + bytes.fromhex("080000000101") + b"\x88\xb5" + bytes(size - 14)


def engine() -> Engine:
    e = Engine(FIXTURE)
    for i in range(256):
        e.table_add("MyIngress.ipv4_lpm", [(f"10.{i}.0.0", 16)], "MyIngress.ipv4_forward", [0x080000000202, 2])
    e.table_add("MyIngress.dmac", ["08:00:00:00:02:02"], "MyIngress.l2_forward", [2])
    return e


def tna_engine() -> Engine:
    from bufferlab.compiler import compile as compile_p4

    doc, _ = compile_p4(TNA_L3)
    e = Engine(json.dumps(doc))
    for i in range(256):
        e.table_add("pipe.Ingress.ipv4_lpm", [(f"10.{i}.0.0", 16)], "Ingress.route", [2, 0x080000000202])
    e.table_add("pipe.Egress.port_mac", [2], "Egress.set_source_mac", [0x080000000101])
    return e


def engine_pps(frame: bytes, build=engine) -> float:
    e = build()
    rounds = 10
    t0 = 0.0
    # Round 0 warms the packet pool and buffers up and is not timed.
    for r in range(rounds + 1):
        if r == 1:
            t0 = time.process_time()
        e.send_repeated(1, frame, BATCH, r * BATCH * 1000, 1000)
        e.advance((r + 1) * BATCH * 1000)
        assert e.discard_received() >= BATCH - 1
    return rounds * BATCH / (time.process_time() - t0)


def python_pps(frame: bytes) -> float:
    e = engine()
    n = BATCH
    t0 = time.process_time()
    for i in range(n):
        e.send(1, frame, i * 1000)
        if i % 1000 == 999:
            e.received()
    e.drain()
    e.received()
    return n / (time.process_time() - t0)


def main() -> None:
    figures = {"benchmark": "engine_pps", "unit": "packets per CPU-second (pps), Gbit per CPU-second"}
    for name, build in (("l3", ipv4_frame), ("l2", l2_frame)):
        for size in (64, 1500):
            frame = build(size)
            pps = engine_pps(frame)
            figures[f"{name}_{size}B_engine_pps"] = round(pps)
            figures[f"{name}_{size}B_engine_gbps"] = round(pps * size * 8 / 1e9, 2)
    for size in (64, 1500):
        pps = engine_pps(ipv4_frame(size), tna_engine)
        figures[f"tna_l3_{size}B_engine_pps"] = round(pps)
        figures[f"tna_l3_{size}B_engine_gbps"] = round(pps * size * 8 / 1e9, 2)
    figures["l3_64B_python_pps"] = round(python_pps(ipv4_frame(64)))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
