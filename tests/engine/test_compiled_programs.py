"""tests/p4 programs compiled by bufferlab-p4c, run on the engine where the STF
format cannot express the check (virtual time, port rates, packet-in, digests)."""

import json
from pathlib import Path

import pytest
from engine_helpers import eth

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "tests" / "p4").glob("*.p4"))


def engine(name: str) -> Engine:
    doc, _ = compile_p4(ROOT / "tests" / "p4" / f"{name}.p4")
    return Engine(json.dumps(doc))


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_every_test_program_loads(program):
    doc, _ = compile_p4(program)
    e = Engine(json.dumps(doc))
    assert set(e.tables()) == {t["name"] for p in doc["pipelines"] for t in p["tables"]}


def test_queue_telemetry_probe_reports_queueing(tmp_path):
    e = engine("queue_telemetry_probe")
    e.table_add("TelIngress.out_port", [1], "TelIngress.forward", [2, 0])
    e.configure_port(2, rate_bps=100_000_000)  # 100 Mb/s: a 100-byte frame takes 9.92 µs
    probe = bytes(8 + 8 + 12 + 1 + 2)
    frame = eth(2, src=1, ethertype=0x88B6, payload=probe, size=100)
    for _ in range(4):
        e.send(1, frame, 5_000)
    e.drain()
    out = e.received()
    assert [p for p, _, _ in out] == [2, 2, 2, 2]
    wire_ns = (100 + 24) * 8 * 10
    assert [t for _, _, t in out] == [5_000 + wire_ns * k for k in range(1, 5)]
    fields = []
    for _, f, _ in out:
        p = f[14:]
        fields.append({
            "enq_ts": int.from_bytes(p[0:4], "big"),
            "deq_timedelta": int.from_bytes(p[4:8], "big"),
            "enq_qdepth": int.from_bytes(p[8:11], "big"),
            "deq_qdepth": int.from_bytes(p[11:14], "big"),
            "ingress_ts": int.from_bytes(p[14:20], "big"),
            "egress_ts": int.from_bytes(p[20:26], "big"),
            "packet_length": int.from_bytes(p[27:29], "big"),
        })
    assert [x["enq_qdepth"] for x in fields] == [0, 0, 1, 2]
    assert [x["deq_qdepth"] for x in fields] == [0, 2, 1, 0]
    assert all(x["enq_ts"] == 5 and x["ingress_ts"] == 5 for x in fields)
    starts = [5_000 + wire_ns * k for k in range(4)]
    assert [x["egress_ts"] for x in fields] == [s // 1000 for s in starts]
    assert [x["deq_timedelta"] for x in fields] == [s // 1000 - 5 for s in starts]
    assert all(x["packet_length"] == 100 for x in fields)


def test_packet_io_through_cpu_port():
    e = engine("packet_io_controller_header")
    e.set_cpu_port(255)
    e.table_add("IoIngress.punt", [0x9000], "IoIngress.send_to_cpu", [])
    frame = eth(2, size=60)
    # Punted: to the CPU with the packet_in header (ingress_port 1, 9 bits + 7 pad).
    e.send(1, frame, 0)
    e.drain()
    assert e.received() == []
    assert e.packet_in() == [(255, (1 << 7).to_bytes(2, "big") + frame, 0)]
    # Packet-out: the packet_out header names the egress port and is removed.
    e.send(255, (3 << 7).to_bytes(2, "big") + frame, 10)
    e.drain()
    assert e.received() == [(3, frame, 10)]
    assert e.packet_in() == []


def test_ecn_marks_above_queue_threshold():
    from engine_helpers import csum16, ipv4

    e = engine("ecn_queue_threshold")
    e.table_add("EcnIngress.fwd", [("10.0.0.0", 8)], "EcnIngress.forward", [2])
    e.table_add("EcnEgress.ecn_threshold", [2], "EcnEgress.set_threshold", [3])
    e.configure_port(2, rate_bps=100_000_000)
    ect = bytearray(ipv4("10.1.1.1", payload=bytes(60)))
    ect[15] = 0x02  # ECN = ECT(0)
    ect[24:26] = b"\0\0"
    ect[24:26] = csum16(bytes(ect[14:34])).to_bytes(2, "big")
    for _ in range(10):
        e.send(1, bytes(ect), 0)
    e.send(1, ipv4("10.1.1.1", payload=bytes(60)), 0)  # not ECN-capable: never marked
    e.drain()
    out = e.received()
    assert len(out) == 11
    ecn = [f[15] & 3 for _, f, _ in out]
    assert ecn == [2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 0]
    assert all(csum16(f[14:34]) == 0 for _, f, _ in out)
    assert e.counter_read("EcnEgress.ce_marked", 2) == (6, 6 * len(ect))
    assert e.register_read("EcnEgress.max_depth", 2) == 9


def test_digest_mac_learning():
    e = engine("digest_mac_learning")
    e.mc_group_set(1, [(1, 0), (2, 0), (3, 0)])
    src = 0x0800000001AB
    e.send(2, eth(0x0800000002CD, src=src, size=60), 7_000)
    e.drain()
    ((name, list_id, values, t),) = e.digests()
    assert values == [src, 2] and t == 7_000 and list_id >= 1 and name
    assert sorted(p for p, _, _ in e.received()) == [1, 2, 3]
    # Once learned, no more digests for that source.
    e.table_add("LearnIngress.smac", [src], "NoAction", [])
    e.table_add("LearnIngress.dmac", [0x0800000002CD], "LearnIngress.forward", [3])
    e.send(2, eth(0x0800000002CD, src=src, size=60), 8_000)
    e.drain()
    assert e.digests() == []
    assert [p for p, _, _ in e.received()] == [3]


def test_direct_meter_policer_drops_red():
    e = engine("direct_meter_policer")
    h = e.table_add("DmIngress.policer", [0xAA], "DmIngress.metered", [])
    # 1000 packets/s committed (burst 2), 2000 packets/s peak (burst 3).
    e.table_meter_set("DmIngress.policer", h, 1000, 2, 2000, 3)
    for _ in range(5):
        e.send(4, eth(1, src=0xAA, size=60), 0)
    e.drain()
    # Green, green, yellow pass; the peak bucket is empty for the last two: red, dropped.
    assert len(e.received()) == 3
    # After 10 ms both buckets are full again.
    e.send(4, eth(1, src=0xAA, size=60), 10_000_000)
    e.drain()
    assert len(e.received()) == 1


def test_parser_value_set_controls_parsing():
    e = engine("parser_value_set")
    e.table_add("PvsIngress.tunnel_exit", [7], "PvsIngress.to_port", [4])
    frame = eth(2, ethertype=0x9999, payload=bytes([0, 7, 8, 0]) + bytes(40))
    e.send(1, frame, 0)
    e.drain()
    assert [p for p, _, _ in e.received()] == [0]
    e.value_set_add("PvsParser.tunnel_ethertypes", 0x9999)
    e.send(1, frame, 10)
    e.drain()
    assert e.received() == [(4, frame, 10)]
    e.value_set_clear("PvsParser.tunnel_ethertypes")
    e.send(1, frame, 20)
    e.drain()
    assert [p for p, _, _ in e.received()] == [0]


def test_value_set_transition_mask():
    doc, _ = compile_p4(ROOT / "tests" / "p4" / "parser_value_set.p4")
    # The transition masks the key with 0xff00 before looking it up in the set.
    doc["parsers"][0]["parse_states"][0]["transitions"][0]["mask"] = "0xff00"
    e = Engine(json.dumps(doc))
    e.table_add("PvsIngress.tunnel_exit", [7], "PvsIngress.to_port", [4])
    e.value_set_add("PvsParser.tunnel_ethertypes", 0x9900)
    e.send(1, eth(2, ethertype=0x99AB, payload=bytes([0, 7, 8, 0]) + bytes(40)), 0)
    e.drain()
    assert [p for p, _, _ in e.received()] == [4]


def test_acl_const_entries_with_optional_key():
    from engine_helpers import ipv4

    e = engine("acl_ternary_const_entries")
    cases = [
        (ipv4("10.0.0.1", src="10.9.9.9", proto=6), 1),
        (ipv4("10.0.0.7", src="10.9.9.9", proto=17), 2),
        (ipv4("192.168.3.4", src="172.16.0.1", proto=6), 3),
    ]
    for i, (frame, _) in enumerate(cases):
        e.send(1, frame, i)
    e.send(1, ipv4("10.0.0.7", src="172.16.0.1", proto=6), 10)  # last entry: deny
    e.drain()
    assert [p for p, _, _ in e.received()] == [port for _, port in cases]
    assert all(x["const"] for x in e.table_entries("AclIngress.acl"))


def test_log_msg_assume_and_assert_on_compiled_program():
    from engine_helpers import ipv4

    e = engine("log_assert_assume")
    e.table_add("LogIngress.tracing", [3], "LogIngress.trace", [5])
    e.send(3, ipv4("10.1.2.3", ttl=9), 0)
    e.drain()
    assert e.log() == ["packet received", "trace level 5 on port 3", f"ttl=9 dst={0x0A010203}"]
    bad = bytearray(ipv4("10.1.2.3"))
    bad[14] = 0x44  # IHL 4 fails the assert: the packet is discarded
    e.send(3, bytes(bad), 10)
    e.drain()
    assert len(e.received()) == 1
    assert e.stats()["assert_failures"] == 1


def test_register_flow_state_uses_ingress_timestamps():
    from engine_helpers import ipv4

    e = engine("register_flow_state")
    f = ipv4("10.0.0.5")
    for t in (2_000_000_000, 2_000_500_000, 2_002_000_000):  # ns
        e.send(1, f, t)
    e.drain()
    # First packet: the gap from 0 is 2e6 µs > 1e6 µs; then 500 µs; then 1500 µs.
    assert [p for p, _, _ in e.received()] == [2, 1, 1]
    regs = e.register_names()
    packets = next(r for r in regs if r.endswith("flow_packets"))
    last_seen = next(r for r in regs if r.endswith("flow_last_seen"))
    idx = next(i for i in range(4096) if e.register_read(packets, i))
    assert e.register_read(packets, idx) == 3
    assert e.register_read(last_seen, idx) == 2_002_000


def test_range_classes_select_priority_queues():
    from engine_helpers import ipv4

    e = engine("range_match_l4_ports")
    e.configure_port(1, num_queues=8, rate_bps=1_000_000_000)

    def tcp(sport, dport):
        return sport.to_bytes(2, "big") + dport.to_bytes(2, "big") + bytes(8) + b"\x50\x00" + bytes(6)

    flows = [(40000, 80, 7), (40000, 5205, 3), (53, 9999, 5), (40000, 9999, 0), (80, 5205, 5)]
    for i, (sport, dport, _) in enumerate(flows):
        e.send(2, ipv4("10.0.0.2", proto=6, payload=tcp(sport, dport)), i)
    e.drain()
    assert len(e.received()) == len(flows)
    per_queue = {q: e.queue_stats(1, q)["enqueued_pkts"] for q in range(8)}
    assert per_queue == {q: sum(1 for *_, c in flows if c == q) for q in range(8)}
    # With the default single queue, BMv2 drops frames whose priority has no queue.
    e2 = engine("range_match_l4_ports")
    e2.send(2, ipv4("10.0.0.2", proto=6, payload=tcp(40000, 80)), 0)
    e2.drain()
    assert e2.received() == [] and e2.stats()["dropped_by_tm"] == 1


def test_indirect_counters_by_type():
    e = engine("counters_indirect")
    e.table_add("CntIngress.fwd", [2], "CntIngress.to_port", [5])
    for i in range(3):
        e.send(2, eth(1, size=100), i)
    e.drain()
    assert len(e.received()) == 3
    # BMv2 counters always count packets and bytes, whatever the P4 type says.
    assert e.counter_read("CntIngress.rx_packets", 2) == (3, 300)
    assert e.counter_read("CntIngress.rx_both", 5) == (3, 300)
    assert e.counter_read("CntEgress.tx_both", 5) == (3, 300)
    e.counter_reset("CntIngress.rx_both")
    assert e.counter_read("CntIngress.rx_both", 5) == (0, 0)


def test_ecmp_selector_spreads_flows_consistently():
    from engine_helpers import ipv4

    e = engine("action_selector_ecmp")
    prof = "EcmpIngress.ecmp_group_selector"
    for m in range(4):
        e.profile_member_set(prof, m, "EcmpIngress.set_port", [m + 1])
    e.profile_group_set(prof, 1, [0, 1, 2, 3])
    e.table_add_group("EcmpIngress.ecmp_group", [("10.0.0.0", 8)], 1)

    def flow(sport):
        tcp = sport.to_bytes(2, "big") + (80).to_bytes(2, "big") + bytes(8) + b"\x50\x00" + bytes(6)
        return ipv4("10.1.1.1", proto=6, payload=tcp)

    for i, sport in enumerate(range(1000, 1064)):
        e.send(9, flow(sport), 2 * i)
        e.send(9, flow(sport), 2 * i + 1)
    e.drain()
    got = [p for p, _, _ in e.received()]

    def crc16_arc(data):
        crc = 0
        for b in data:
            crc ^= b
            for _ in range(8):
                crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
        return crc

    # Member = crc16(srcAddr, protocol, srcPort, dstPort) mod group size, as BMv2 selects.
    src = bytes([10, 0, 0, 1])
    want = [1 + crc16_arc(src + b"\x06" + sp.to_bytes(2, "big") + (80).to_bytes(2, "big")) % 4
            for sp in range(1000, 1064) for _ in range(2)]
    assert got == want
    e.profile_group_set(prof, 1, [0, 1, 2], modify=True)
    e.send(9, flow(1000), 1_000)
    e.drain()
    assert [p for p, _, _ in e.received()] == [
        1 + crc16_arc(src + b"\x06" + (1000).to_bytes(2, "big") + (80).to_bytes(2, "big")) % 3
    ]


def test_byte_meter_marks_yellow_and_drops_red():
    from engine_helpers import ipv4

    e = engine("meter_color_marking")
    e.table_add("MtrIngress.classify", [46], "MtrIngress.police", [3])
    # Committed 1000 B/s, burst 200 B; peak 2000 B/s, burst 300 B; 100-byte frames.
    e.meter_set("MtrIngress.class_meter", 3, 1000, 200, 2000, 300)
    assert e.meter_get("MtrIngress.class_meter", 3) == (1000, 200, 2000, 300)
    frame = bytearray(ipv4("10.0.0.1", payload=bytes(100 - 34)))
    frame[15] = 46 << 2  # DSCP EF
    for _ in range(4):
        e.send(2, bytes(frame), 0)
    e.drain()
    dscp = [f[15] >> 2 for _, f, _ in e.received()]
    assert dscp == [46, 46, 10]  # green, green, yellow (remarked); the fourth is red


def test_shared_action_profile_across_tables():
    from engine_helpers import ipv4

    e = engine("action_profile_wcmp")
    prof = "ApIngress.next_hops"
    e.profile_member_set(prof, 1, "ApIngress.set_next_hop", [0x0A0A0A0A0A0A, 2])
    e.profile_member_set(prof, 2, "ApIngress.set_next_hop", [0x0B0B0B0B0B0B, 3])
    e.table_add_member("ApIngress.host_routes", ["10.0.0.7"], 1)
    e.table_add_member("ApIngress.prefix_routes", [("10.0.0.0", 8)], 2)
    e.send(1, ipv4("10.0.0.7"), 0)
    e.send(1, ipv4("10.0.0.8"), 1)
    e.drain()
    got = [(p, f[:6].hex()) for p, f, _ in e.received()]
    assert got == [(2, "0a0a0a0a0a0a"), (3, "0b0b0b0b0b0b")]
    # One member update changes every table that points at it.
    e.profile_member_set(prof, 2, "ApIngress.set_next_hop", [0x0C0C0C0C0C0C, 4], modify=True)
    e.send(1, ipv4("10.0.0.8"), 2)
    e.drain()
    assert [(p, f[:6].hex()) for p, f, _ in e.received()] == [(4, "0c0c0c0c0c0c")]


def test_random_sampling_clones_about_one_in_n_deterministically():
    from engine_helpers import ipv4

    def run(seed):
        doc, _ = compile_p4(ROOT / "tests" / "p4" / "random_sampling.p4")
        e = Engine(json.dumps(doc), seed=seed)
        e.table_add("RndIngress.sampling", [1], "RndIngress.sample", [4])
        e.clone_session_set(100, port=9)
        e.send_repeated(1, ipv4("10.0.0.1"), 400, 0, 100)
        e.drain()
        return [p for p, _, _ in e.received()]

    a = run(1)
    assert a.count(1) == 400
    assert 60 <= a.count(9) <= 140
    assert run(1) == a


def test_annotated_names_and_masked_ternary_key():
    e = engine("table_properties_annotations")
    e.table_add("global_port_vrf", {"port": 1}, "PropIngress.set_vrf", {"vrf": 5})
    e.table_add("PropIngress.l2_by_vrf",
                {"meta.vrf": 5, "hdr.ethernet.dstAddr": 2, "ethertype_hi": (0x0800, 0xFF00)},
                "PropIngress.forward", {"port": 3, "vrf_hint": 7}, priority=1)
    e.send(1, eth(2, ethertype=0x0806, size=60), 0)  # 0x0806 & 0xff00 matches 0x0800
    e.send(2, eth(2, ethertype=0x0806, size=60), 1)  # port 2: const default drop()
    e.send(1, eth(2, ethertype=0x86DD, size=60), 2)  # high byte differs: default drop()
    e.drain()
    assert [p for p, _, _ in e.received()] == [3]
    from bufferlab.switch import PermissionDeniedError

    with pytest.raises(PermissionDeniedError):
        e.table_set_default("global_port_vrf", "PropIngress.set_vrf", [1])
