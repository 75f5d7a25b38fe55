"""Our BMv2 JSON runs on the bufferlab switch engine and does what the P4 source says."""

import ipaddress
from pathlib import Path

import pytest

from bufferlab.compiler import compile
from bufferlab.compiler.jsonwriter import dumps

engine_module = pytest.importorskip("bufferlab.switch.engine")

P4 = Path(__file__).resolve().parents[1] / "p4"


def engine(name):
    return engine_module.Engine(dumps(compile(P4 / name)[0]))


def send(e, port, frame, t=0):
    e.send(port, frame, t)
    e.drain()
    return e.received()


def mac(n):
    return n.to_bytes(6, "big")


def csum16(data):
    s = sum(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_frame(dst, ttl=64, proto=17, payload=b"payload", version_ihl=0x45):
    hdr = bytearray(bytes([version_ihl, 0, 0, 20 + len(payload), 0, 0, 0x40, 0, ttl, proto, 0, 0])
                    + ipaddress.IPv4Address("10.0.0.1").packed + ipaddress.IPv4Address(dst).packed)
    hdr[10:12] = csum16(bytes(hdr)).to_bytes(2, "big")
    return mac(2) + mac(1) + b"\x08\x00" + bytes(hdr) + payload


def test_router_forwards_decrements_ttl_and_fixes_checksum():
    e = engine("ipv4_lpm_router.p4")
    e.table_add("RouterIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)}, "RouterIngress.ipv4_forward",
                {"dstAddr": 0x0A0B0C0D0E0F, "port": 3})
    out = send(e, 1, ipv4_frame("10.0.1.5", ttl=64))
    assert len(out) == 1
    port, frame, _ = out[0]
    assert port == 3
    assert frame[:6] == bytes.fromhex("0a0b0c0d0e0f") and frame[6:12] == mac(2)
    assert frame[22] == 63
    assert csum16(frame[14:34]) == 0
    assert send(e, 1, ipv4_frame("10.0.2.5")) == []


def calc_frame(op, a, b):
    body = bytes([op]) + a.to_bytes(4, "big") + b.to_bytes(4, "big") + bytes(4) + bytes(2) + bytes(1)
    return mac(1) + mac(2) + b"\x12\x34" + body


def calc_result(frame):
    body = frame[14:]
    return {"result": int.from_bytes(body[9:13], "big"), "signed": int.from_bytes(body[13:15], "big"),
            "sat8": body[15]}


@pytest.mark.parametrize(
    ("op", "a", "b", "field", "expected"),
    [
        (0x00, 0xFFFFFFFF, 2, "result", 1),
        (0x01, 1, 2, "result", 0xFFFFFFFF),
        (0x05, 0x0F0F0F0F, 0, "result", 0xF0F0F0F0),
        (0x06, 0x80000001, 1, "result", 2),
        (0x07, 0x12345678, 0, "result", 0x01234567),
        (0x08, 0x80000001, 0, "result", 0x80000003),
        (0x09, 1, 0, "result", 0xFFFFFFFF),
        (0x0A, 200, 100, "sat8", 255),
        (0x0B, 100, 200, "sat8", 0),
        (0x0C, 50, 0, "signed", (50 - 100) & 0xFFFF),
        (0x0D, 0x11223344, 0x55667788, "result", 0x33445566),
        (0x0E, 0xAA, 0x0000000F, "result", 0x0E00000F),
        (0x0F, 7, 9, "result", 9),
    ],
)
def test_expression_semantics(op, a, b, field, expected):
    e = engine("bit_arithmetic_ops.p4")
    out = send(e, 4, calc_frame(op, a, b))
    assert len(out) == 1 and out[0][0] == 4
    assert calc_result(out[0][1])[field] == expected


def test_signed_shift_is_arithmetic():
    e = engine("bit_arithmetic_ops.p4")
    out = send(e, 1, calc_frame(0x0C, 50, 0))
    assert calc_result(out[0][1])["result"] == ((50 - 100) >> 2) & 0xFFFF


def test_acl_const_entries_in_priority_order():
    e = engine("acl_ternary_const_entries.p4")
    assert [p for p, _, _ in send(e, 1, ipv4_frame("10.0.0.1", proto=6))] == [1]
    assert [p for p, _, _ in send(e, 1, ipv4_frame("10.0.0.2", proto=17))] == [2]
    assert [p for p, _, _ in send(e, 1, ipv4_frame("192.168.3.4", proto=17))] == [2]
    assert [p for p, _, _ in send(e, 1, ipv4_frame("192.168.3.4", proto=6))] == [3]
    assert send(e, 1, ipv4_frame("1.2.3.4", proto=6)) == []


def test_parser_masks_ranges_and_errors():
    e = engine("parser_select_masks_ranges.p4")
    tcp = ipv4_frame("10.0.0.9", proto=6, payload=bytes(20))
    assert [p for p, _, _ in send(e, 5, tcp)] == [1]
    udp = ipv4_frame("10.0.0.9", proto=17, payload=bytes(8))
    assert [p for p, _, _ in send(e, 5, udp)] == [2]
    short = ipv4_frame("10.0.0.9", proto=6, payload=bytes(4))
    assert send(e, 5, short) == []


def mpls_frame(labels):
    body = b""
    for i, label in enumerate(labels):
        bos = 1 if i == len(labels) - 1 else 0
        body += ((label << 12) | (bos << 8) | 64).to_bytes(4, "big")
    return mac(1) + mac(2) + b"\x88\x47" + body + ipv4_frame("10.0.0.1")[14:]


def test_mpls_stack_push_pop_swap():
    e = engine("header_stack_mpls.p4")
    e.table_add("MplsIngress.lfib", {"hdr.mpls[0].label": 100}, "MplsIngress.pop_label", {"port": 2})
    e.table_add("MplsIngress.lfib", {"hdr.mpls[0].label": 200}, "MplsIngress.swap_label", {"label": 201, "port": 3})
    e.table_add("MplsIngress.lfib", {"hdr.mpls[0].label": 300}, "MplsIngress.push_label", {"label": 7, "port": 4})
    sent = mpls_frame([100, 55])
    port, frame, _ = send(e, 1, sent)[0]
    assert port == 2 and frame[14:18] == sent[18:22]
    port, frame, _ = send(e, 1, mpls_frame([200]))[0]
    assert port == 3 and int.from_bytes(frame[14:18], "big") >> 12 == 201 and frame[17] == 63
    port, frame, _ = send(e, 1, mpls_frame([300]))[0]
    assert port == 4
    assert int.from_bytes(frame[14:18], "big") >> 12 == 7 and frame[17] == 64
    assert int.from_bytes(frame[18:22], "big") >> 12 == 300


def test_hit_miss_branches_and_exit():
    e = engine("table_hit_miss_exit.p4")
    e.table_add("HmIngress.dmac", {"hdr.ethernet.dstAddr": 9}, "HmIngress.to_port", {"port": 6})
    frame = mac(9) + mac(2) + b"\x90\x00" + bytes(46)
    assert [p for p, _, _ in send(e, 1, frame)] == [6]
    e.table_add("HmIngress.blocked", {"hdr.ethernet.srcAddr": 2}, "NoAction", {})
    assert send(e, 1, frame) == []


def test_switch_on_action_run():
    e = engine("switch_action_run_locals.p4")
    e.table_add("SwIngress.l2", {"hdr.ethernet.dstAddr": 9}, "SwIngress.unicast", {"port": 6})
    e.table_add("SwIngress.l2", {"hdr.ethernet.dstAddr": 8}, "SwIngress.to_cpu", {})
    assert [p for p, _, _ in send(e, 1, mac(9) + mac(2) + b"\x90\x00" + bytes(46))] == [6]
    assert [p for p, _, _ in send(e, 1, mac(8) + mac(2) + b"\x90\x00" + bytes(46))] == [64]


def test_inlined_sub_controls_classify_both_addresses():
    e = engine("subcontrol_nested_actions.p4")
    cls = "NestIngress.src_classifier.classify"
    e.table_add(cls, {"addr": ("10.0.0.0", 8)}, "NestIngress.src_classifier.set_class", {"c": 1})
    e.table_add("NestIngress.dst_classifier.classify", {"addr": ("10.0.1.0", 24)},
                "NestIngress.dst_classifier.set_class", {"c": 2})
    e.table_add("NestIngress.class_route", {"meta.src_class": 1, "meta.dst_class": 2}, "NestIngress.route",
                {"smac": 0xAA, "dmac": 0xBB, "port": 7})
    port, frame, _ = send(e, 1, ipv4_frame("10.0.1.1", ttl=10))[0]
    assert port == 7 and frame[:6] == mac(0xBB) and frame[6:12] == mac(0xAA) and frame[22] == 9


def test_header_union_branches():
    e = engine("header_union_ip.p4")
    port, frame, _ = send(e, 1, ipv4_frame("10.0.0.1", ttl=5))[0]
    assert port == 1 and frame[22] == 4
    assert send(e, 1, mac(1) + mac(2) + b"\x90\x00" + bytes(46)) == []


def test_registers_and_counters():
    e = engine("counters_indirect.p4")
    e.table_add("CntIngress.fwd", {"standard_metadata.ingress_port": 3}, "CntIngress.to_port", {"port": 4})
    send(e, 3, mac(1) + mac(2) + b"\x90\x00" + bytes(46))
    assert e.counter_read("CntIngress.rx_packets", 3)[0] == 1
    assert e.counter_read("CntIngress.rx_bytes", 3)[1] == 60
    assert e.counter_read("CntIngress.rx_both", 4) == (1, 60)
    assert e.counter_read("CntEgress.tx_both", 4) == (1, 60)
    r = engine("register_flow_state.p4")
    send(r, 1, ipv4_frame("10.0.0.7"))
    send(r, 1, ipv4_frame("10.0.0.7"), 5_000)
    assert r.register_read("RegIngress.flow_packets", 7) == 2


def frame60(dst=1, src=2, ethertype=0x9000):
    return mac(dst) + mac(src) + ethertype.to_bytes(2, "big") + bytes(46)


def test_runtime_stack_index_writes_the_indexed_element():
    e = engine("header_stack_runtime_index.p4")
    e.table_add("HopEgress.hop_slot", {"hdr.hops.count": 1}, "HopEgress.record", {"switch_id": 0x42, "slot": 1})
    frame = mac(1) + mac(2) + b"\x88\xb5" + bytes([1]) + b"\x90\x00" + bytes([7, 0, 0, 9]) + bytes(40)
    port, out, _ = send(e, 1, frame)[0]
    assert out[14] == 2
    assert out[17:21] == bytes([7, 0, 0, 9])
    assert out[21] == 0x42


def test_lookahead_advance_and_parser_errors():
    e = engine("parser_lookahead_advance_verify.p4")
    assert send(e, 1, ipv4_frame("10.0.0.1")) == []
    with_options = ipv4_frame("10.0.0.1", version_ihl=0x46, payload=bytes(12))
    assert [p for p, _, _ in send(e, 1, with_options)] == [1]


def test_value_set_membership_from_the_control_plane():
    e = engine("parser_value_set.p4")
    e.table_add("PvsIngress.tunnel_exit", {"hdr.tunnel.tunnelId": 5}, "PvsIngress.to_port", {"port": 9})
    frame = mac(1) + mac(2) + b"\x99\x99" + b"\x00\x05\x08\x00" + bytes(42)
    assert [p for p, _, _ in send(e, 1, frame)] == [0]
    e.value_set_add("PvsParser.tunnel_ethertypes", 0x9999)
    assert [p for p, _, _ in send(e, 1, frame)] == [9]


def test_clone_preserving_field_list():
    e = engine("clone_sessions_mirror.p4")
    e.clone_session_set(5, 9, None, None)
    e.table_add("MirIngress.mirror_select", {"hdr.ethernet.srcAddr": (2, 0xFFFFFFFFFFFF)},
                "MirIngress.mirror_tagged", {"reason": 7}, 1)
    out = sorted(send(e, 4, frame60()))
    assert [(p, len(f)) for p, f, _ in out] == [(1, 60), (9, 63)]
    assert out[1][1][14:17] == bytes([7, 0, 4])


def test_resubmit_and_recirculate_keep_their_field_lists():
    e = engine("resubmit_recirculate.p4")
    assert [(p, f[11]) for p, f, _ in send(e, 4, frame60(ethertype=0x9001))] == [(2, 2)]
    assert [(p, f[11]) for p, f, _ in send(e, 4, frame60(ethertype=0x9002))] == [(1, 3)]


def test_digest_and_multicast():
    e = engine("digest_mac_learning.p4")
    e.mc_group_set(1, [(1, 0), (2, 0)])
    assert sorted(p for p, _, _ in send(e, 3, frame60(src=0x22))) == [1, 2]
    assert [(name, values) for name, _, values, _ in e.digests()] == [("learn_t", [0x22, 3])]


def test_multicast_replicas_and_truncate():
    e = engine("multicast_truncate.p4")
    e.mc_group_set(1, [(1, 1), (2, 2), (3, 3)])
    e.table_add("McEgress.replica", {"standard_metadata.egress_rid": 2}, "McEgress.monitor_copy", {"snap_bytes": 20})
    assert sorted((p, len(f)) for p, f, _ in send(e, 3, frame60())) == [(1, 60), (2, 20)]


def test_identity_hash_and_log_messages():
    e = engine("hash_all_algorithms.p4")
    port, frame, _ = send(e, 1, ipv4_frame("10.1.2.3"))[0]
    hashes = frame[34:]
    assert hashes[4 + 4 + 2 + 2 + 2:4 + 4 + 2 + 2 + 2 + 4] == ipaddress.IPv4Address("10.1.2.3").packed
    log = engine("log_assert_assume.p4")
    log.table_add("LogIngress.tracing", {"standard_metadata.ingress_port": 1}, "LogIngress.trace", {"level": 3})
    send(log, 1, ipv4_frame("10.1.2.3"))
    assert log.log()[:2] == ["packet received", "trace level 3 on port 1"]


@pytest.mark.parametrize(
    ("op", "count", "port", "acc", "kind"),
    [
        (1, 0, 1, 0, 0),
        (1, 5, 1, 1 + 2 + 4 + 5, 0),
        (1, 20, 1, 55 - 3, 0),
        (2, 7, 1, 7000, 0),
        (3, 0, 1, 0, 1),
        (4, 2, 1, 0, 2),
        (3, 9, 1, 0, 3),
        (9, 1, 2, 0, 0),
    ],
)
def test_value_switch_for_loops_and_functions(op, count, port, acc, kind):
    e = engine("value_switch_loops_functions.p4")
    frame = mac(1) + mac(2) + b"\x88\xb8" + bytes([op, count]) + bytes(3) + bytes(41)
    out_port, out, _ = send(e, 3, frame)[0]
    assert (out_port, int.from_bytes(out[16:18], "big"), out[18]) == (port, acc, kind)


@pytest.mark.parametrize(
    ("dst_port", "src_port", "queue"),
    [(9999, 40000, 0), (22, 40000, 7), (5205, 2000, 3), (9999, 80, 5), (5205, 80, 5)],
)
def test_range_entries_choose_the_priority_queue(dst_port, src_port, queue):
    e = engine("range_match_l4_ports.p4")
    e.configure_port(1, num_queues=8)
    tcp = src_port.to_bytes(2, "big") + dst_port.to_bytes(2, "big") + bytes(16)
    assert [p for p, _, _ in send(e, 2, ipv4_frame("10.0.0.1", proto=6, payload=tcp))] == [1]
    assert e.queue_stats(1, queue)["enqueued_pkts"] == 1


def test_action_selector_spreads_flows_over_members():
    e = engine("action_selector_ecmp.p4")
    profile = "EcmpIngress.ecmp_group_selector"
    e.profile_member_set(profile, 1, "EcmpIngress.set_port", [5], False)
    e.profile_member_set(profile, 2, "EcmpIngress.set_port", [6], False)
    e.profile_group_set(profile, 10, [1, 2], False)
    e.table_add_group("EcmpIngress.ecmp_group", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)}, 10)
    ports = set()
    for src_port in range(40):
        tcp = src_port.to_bytes(2, "big") + (80).to_bytes(2, "big") + bytes(16)
        ports |= {p for p, _, _ in send(e, 1, ipv4_frame("10.1.1.1", proto=6, payload=tcp))}
    assert ports == {5, 6}


def test_meter_marks_excess_packets_red():
    e = engine("meter_color_marking.p4")
    e.meter_set("MtrIngress.port_meter", 1, 1, 1, 1, 1)
    assert [len(send(e, 1, ipv4_frame("10.0.0.1"), t)) for t in (0, 1_000, 2_000)] == [1, 0, 0]


def test_packet_in_and_packet_out_headers():
    e = engine("packet_io_controller_header.p4")
    e.set_cpu_port(255)
    e.table_add("IoIngress.punt", {"hdr.ethernet.etherType": 0x88CC}, "IoIngress.send_to_cpu", {})
    send(e, 3, mac(1) + mac(2) + b"\x88\xcc" + bytes(46))
    punted = e.packet_in()
    assert [(p, f[:2]) for p, f, _ in punted] == [(255, (3 << 7).to_bytes(2, "big"))]
    out = send(e, 255, (7 << 7).to_bytes(2, "big") + mac(1) + mac(2) + b"\x90\x00" + bytes(46))
    assert [(p, len(f)) for p, f, _ in out] == [(7, 60)]


def test_ecn_marking_from_queue_depth():
    e = engine("ecn_queue_threshold.p4")
    e.configure_port(2, rate_bps=10_000_000)
    e.table_add("EcnIngress.fwd", {"hdr.ipv4.dstAddr": ("10.0.0.0", 8)}, "EcnIngress.forward", {"port": 2})
    e.table_add("EcnEgress.ecn_threshold", {"standard_metadata.egress_port": 2}, "EcnEgress.set_threshold",
                {"packets": 2})
    frame = bytearray(ipv4_frame("10.0.0.9"))
    frame[15] = 0x01
    for _ in range(6):
        e.send(1, bytes(frame), 0)
    e.drain()
    marks = [f[15] & 3 for _, f, _ in e.received()]
    assert len(marks) == 6 and 3 in marks
    assert marks == sorted(marks) and set(marks) == {1, 3}
    assert e.counter_read("EcnEgress.ce_marked", 2)[0] == marks.count(3)
    assert e.register_read("EcnEgress.max_depth", 2) >= 2


def test_in_arguments_are_copied_when_the_callee_overwrites_their_source():
    e = engine("copy_in_arguments.p4")
    port, frame, _ = send(e, 3, mac(1) + mac(2) + b"\x90\x00" + bytes([5, 6, 7]) + bytes(43))[0]
    assert frame[14:17] == bytes([9, 5 + 7, 0])


def fn_frame(a, b):
    return mac(1) + mac(2) + b"\x88\xb9" + bytes([a, b]) + bytes(4 + 6 + 4 + 1) + bytes(20)


def fn_fields(frame):
    body = frame[14:]
    return {"a": body[0], "b": body[1], "mixed": int.from_bytes(body[2:6], "big"),
            "mac": int.from_bytes(body[6:12], "big"), "count": int.from_bytes(body[12:16], "big"),
            "parsed": body[16]}


def test_functions_and_register_reads_inside_expressions():
    e = engine("function_calls_in_expressions.p4")
    port, frame, _ = send(e, 1, fn_frame(3, 5))[0]
    # twice(twice(3) + max8(3, 5)) = 2 * (6 + 5); the parser's xor_plus_one(3, 0x0f) = 13.
    assert port == 2
    assert fn_fields(frame) == {"a": 3, "b": 5, "mixed": 22, "mac": 0x0A0000000001, "count": 1, "parsed": 13}
    assert fn_fields(send(e, 4, fn_frame(3, 5))[0][1])["mac"] == 0x0A0000000104
    third = fn_fields(send(e, 4, fn_frame(3, 5))[0][1])
    # The third packet reads 3 from the register: twice(3) > 4 sets b, which max8 then picks.
    assert third["count"] == 3 and third["b"] == 0xFF and third["mixed"] == 2 * (6 + 255)
    assert e.register_read("FnIngress.hits", 0) == 3


def tagged_frame(kind, cls, color, seq):
    return mac(1) + mac(2) + b"\x88\xba" + bytes([kind, (cls << 4) | color]) + seq.to_bytes(2, "big") + bytes(42)


def test_struct_fields_in_headers_named_package_arguments_and_old_mark_to_drop():
    e = engine("header_struct_fields_named_args.p4")
    port, frame, _ = send(e, 1, tagged_frame(1, 3, 0, 0x100))[0]
    # recolor(5) from the @priority(1) entry writes tag.color; seq grows by tag.cls.
    assert port == 2 and frame[14:18] == bytes([1, 0x35, 0x01, 0x03])
    # Kind 2 is resubmitted once; the preserved @field_list(KEEP_LIST) field marks the second pass.
    port, frame, _ = send(e, 1, tagged_frame(2, 3, 0, 0x100))[0]
    assert port == 2 and frame[14:18] == bytes([2, 0x37, 0xBE, 0xEF])
    # Any other kind hits the wildcard entry: the argument-less mark_to_drop() drops it.
    assert send(e, 1, tagged_frame(3, 3, 0, 0x100)) == []
    # (tagged_t){#} invalidates the header: it is not emitted.
    port, frame, _ = send(e, 1, tagged_frame(1, 0xF, 0, 0x100))[0]
    assert port == 3 and len(frame) == 56 and frame[12:14] == b"\x88\xba"


def count_frame(dst, src, n):
    return mac(dst) + mac(src) + b"\x88\xbb" + bytes([n, 0, 0, 0]) + bytes(42)


def test_for_loop_in_apply_block_and_table_results_inside_conditions():
    e = engine("control_loops_and_table_results.p4")
    # Both tables miss: known_src.apply().hit is false, blocked_dst.apply().miss is true.
    port, frame, _ = send(e, 1, count_frame(9, 2, 5))[0]
    # The loop sums 1..5 but skips 3: 12.
    assert port == 3 and frame[14:18] == bytes([5, 0, 12, 1])
    e.table_add("LoopIngress.known_src", {"hdr.ethernet.srcAddr": 2}, "LoopIngress.allow", {})
    e.table_add("LoopIngress.blocked_dst", {"hdr.ethernet.dstAddr": 9}, "LoopIngress.allow", {})
    port, frame, _ = send(e, 1, count_frame(9, 2, 5))[0]
    assert port == 2 and frame[14:18] == bytes([5, 0, 12, 2])
    port, frame, _ = send(e, 1, count_frame(9, 2, 12))[0]
    assert port == 3 and frame[14:18] == bytes([12, 0, 75, 2])
    port, frame, _ = send(e, 1, count_frame(9, 2, 0))[0]
    assert port == 2 and frame[14:18] == bytes([0, 0, 0, 1])


@pytest.mark.parametrize(("ethertype", "kind", "seen"), [(0x88BC, 1, 1), (0x88BC, 2, 1), (0x88BC, 3, 1), (0x0BAD, 1, 0)])
def test_reject_ends_parsing_without_an_error_as_with_p4c_json(ethertype, kind, seen):
    e = engine("parser_reject_transitions.p4")
    frame = mac(1) + mac(2) + ethertype.to_bytes(2, "big") + bytes([kind, 0]) + bytes(44)
    # Port 1: parser_error stayed NoError; headers extracted before the reject stay valid.
    port, out, _ = send(e, 1, frame)[0]
    assert port == 1 and out[14:16] == bytes([kind, seen])


@pytest.mark.parametrize(("ethertype", "flags", "port", "mark"), [(0x88BD, 1, 11, 0), (0x88BD, 2, 12, 0xEE),
                                                                  (0x0800, 0, 0, None)])
def test_if_statements_in_parser_states(ethertype, flags, port, mark):
    e = engine("parser_if_statements.p4")
    frame = mac(1) + mac(2) + ethertype.to_bytes(2, "big") + bytes([flags, 7, 0]) + bytes(43)
    out_port, out, _ = send(e, 1, frame)[0]
    assert out_port == port
    if mark is not None:
        assert out[14:17] == bytes([flags, 7, mark])
    else:
        assert out[14:17] == bytes([flags, 7, 0])


@pytest.mark.parametrize(("kind", "calls", "result", "picks"), [(1, 1, 0xBB, 0x10), (2, 1, 0x21, 0x20)])
def test_calls_right_of_and_or_and_in_conditional_branches_run_only_when_needed(kind, calls, result, picks):
    e = engine("short_circuit_calls.p4")
    # kind 1: `&&` calls (true), `||` does not, `?:` picks 0x10; kind 2: the other way round.
    port, out, _ = send(e, 1, bytes([kind, 0, 0, 0]) + bytes(56))[0]
    assert port == 1 and out[:4] == bytes([kind, calls, result, picks])


@pytest.mark.parametrize(("a", "b", "port", "out"), [(0, 0, 9, b"\x00\x09"), (4, 1, 5, b"\x04\x44"),
                                                     (7, 2, 8, b"\x03\x03")])
def test_functions_returning_structs_and_headers_and_in_table_keys(a, b, port, out):
    e = engine("function_results_composite.p4")
    e.table_add("I.t", {"a_plus_one": 5}, "I.setb", {"b": 0x44})
    # meta.p = mk(a) ({9, 9} for 0, else {a, a + 1}); b = mk(b).y; key inc(a); a == 7 -> fresh(3).
    out_port, frame, _ = send(e, 1, bytes([a, b]) + bytes(58))[0]
    assert out_port == port and frame[:2] == out


@pytest.mark.parametrize(("stop_at", "low_byte"), [(0, 15), (3, 3), (1, 0)])
def test_for_in_loops_over_a_range_and_a_list(stop_at, low_byte):
    e = engine("for_in_loops.p4")
    port, out, _ = send(e, 1, bytes([stop_at, 0, 0]) + bytes(57))[0]
    # The range loop adds 1.. up to stop_at (exclusive); the list loop adds (2 + 8) << 8, skipping 4.
    assert port == 1 and out[:3] == bytes([stop_at, 10, low_byte])
