"""Primitive families and packet-path operations through the meta.json fixture."""

import pytest
from engine_helpers import TEL_BYTES, eth, tel

from bufferlab.switch import InvalidArgumentError, NotFoundError


def run(e, frames, until=None):
    for port, frame, t in frames:
        e.send(port, frame, t)
    if until is None:
        e.drain()
    else:
        e.advance(until)
    return e.received()


def test_unicast_sets_metadata_and_counts(meta):
    meta.table_add("MyIngress.fwd", {"hdr.ethernet.dstAddr": 1}, "MyIngress.fwd_port", {"port": 5})
    out = run(meta, [(2, eth(1, size=60), 3_000)])
    assert len(out) == 1
    port, frame, t = out[0]
    assert port == 5 and t == 3_000
    assert len(frame) == 60 + TEL_BYTES
    m = tel(frame)
    assert m["eport"] == 5
    assert m["igts"] == 3 and m["egts"] == 3 and m["enq_ts"] == 3
    assert m["itype"] == 0 and m["eitype"] == 0
    assert m["post"] == 1
    assert m["plen"] == 60
    assert meta.counter_read("MyIngress.c", 1) == (1, 60)


def test_default_action_drops(meta):
    out = run(meta, [(2, eth(9, size=60), 0)])
    assert out == []
    assert meta.stats()["dropped_by_program"] == 1


def test_exit_skips_rest_of_ingress(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_exit", [4])
    (port, frame, _), = run(meta, [(2, eth(1, size=60), 0)])
    assert port == 4
    assert tel(frame)["post"] == 0


def test_multicast_replicates_with_rid(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_mcast", [7])
    meta.mc_group_set(7, [(3, 100), (4, 101), (6, 102)])
    out = run(meta, [(2, eth(1, size=60), 0)])
    got = sorted((p, tel(f)["rid"], tel(f)["eitype"]) for p, f, _ in out)
    assert got == [(3, 100, 5), (4, 101, 5), (6, 102, 5)]
    assert meta.mc_group_get(7) == [(3, 100), (4, 101), (6, 102)]
    meta.mc_group_delete(7)
    with pytest.raises(NotFoundError):
        meta.mc_group_get(7)


def test_multicast_to_unknown_group_sends_nothing(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_mcast", [8])
    assert run(meta, [(2, eth(1, size=60), 0)]) == []


def test_i2e_clone_is_original_packet_with_preserved_field_list(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_clone", [3, 9])
    meta.clone_session_set(9, port=6)
    out = run(meta, [(2, eth(1, size=60), 0)])
    by_port = {p: tel(f) for p, f, _ in out}
    assert set(by_port) == {3, 6}
    assert by_port[3]["eitype"] == 0 and by_port[3]["mark"] == 0x5A and by_port[3]["post"] == 1
    # The clone: instance_type 1, metadata reset except the preserved `mark`.
    assert by_port[6]["eitype"] == 1 and by_port[6]["mark"] == 0x5A and by_port[6]["post"] == 0


def test_clone_without_session_makes_no_copy(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_clone", [3, 10])
    out = run(meta, [(2, eth(1, size=60), 0)])
    assert [p for p, _, _ in out] == [3]


def test_clone_session_to_multicast_group(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_clone", [3, 9])
    meta.mc_group_set(2, [(10, 1), (11, 2)])
    meta.clone_session_set(9, mcast_grp=2)
    out = run(meta, [(2, eth(1, size=60), 0)])
    got = sorted((p, tel(f)["eitype"], tel(f)["rid"]) for p, f, _ in out)
    assert got == [(3, 0, 0), (10, 1, 1), (11, 1, 2)]


def test_e2e_clone_copies_egress_packet(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.table_add("MyEgress.eg", [1], "MyEgress.e2e_clone", [4])
    meta.clone_session_set(4, port=8)
    out = run(meta, [(2, eth(1, size=60), 0)])
    by_port = {p: f for p, f, _ in out}
    assert set(by_port) == {3, 8}
    assert tel(by_port[8])["eitype"] == 2
    assert tel(by_port[3])["eitype"] == 0


def test_egress_mark_to_drop(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.table_add("MyEgress.eg", [1], "MyEgress.eg_drop", [])
    assert run(meta, [(2, eth(1, size=60), 0)]) == []
    assert meta.stats()["dropped_by_program"] == 1


def test_resubmit_reruns_ingress_with_field_list(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_resubmit", [3])
    (port, frame, _), = run(meta, [(2, eth(1, size=60), 0)])
    m = tel(frame)
    assert port == 3
    assert m["mark"] == 2  # incremented in both passes, preserved across
    assert m["itype"] == 6  # second pass saw instance_type RESUBMIT
    assert meta.stats()["resubmitted"] == 1


def test_recirculate_reparses_deparsed_packet(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_recirc", [3])
    (port, frame, _), = run(meta, [(2, eth(1, size=60), 0)])
    first_pass = tel(frame, 14 + TEL_BYTES)
    second_pass = tel(frame)
    assert first_pass["mark"] == 1 and first_pass["itype"] == 0
    assert second_pass["mark"] == 2 and second_pass["itype"] == 4
    assert second_pass["plen"] == 60 + TEL_BYTES
    assert len(frame) == 60 + 2 * TEL_BYTES
    assert meta.stats()["recirculated"] == 1


def test_digest_carries_learn_list(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_digest", [3])
    run(meta, [(5, eth(1, src=0xABCDEF, size=60), 2_000)])
    assert meta.digests() == [("digest_t", 1, [0xABCDEF, 5], 2_000)]
    assert meta.digests() == []


def test_random_is_in_range_and_seeded():
    from engine_helpers import FIXTURES

    from bufferlab.switch import Engine

    def values(seed):
        e = Engine(FIXTURES / "meta.json", seed=seed)
        e.table_add("MyIngress.fwd", [1], "MyIngress.fwd_random", [3])
        return [tel(f)["rnd"] for _, f, _ in run(e, [(2, eth(1, size=60), i) for i in range(200)])]

    a, b = values(1), values(1)
    assert a == b
    assert set(a) == set(range(10, 21))
    assert values(2) != a


def test_hash_crc16_matches_reference(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_hash", [3])
    (_, frame, _), = run(meta, [(2, eth(1, src=0x123456789ABC, size=60), 0)])

    def crc16_arc(data):
        crc = 0
        for b in data:
            crc ^= b
            for _ in range(8):
                crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
        return crc

    assert tel(frame)["hash"] == crc16_arc(bytes.fromhex("123456789abc"))


def test_truncate_caps_frame(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_truncate", [3])
    (_, frame, _), = run(meta, [(2, eth(1, size=60), 0)])
    assert len(frame) == 20
    assert frame[:6] == (1).to_bytes(6, "big")


def test_log_msg_formats_arguments(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_log", [3])
    run(meta, [(2, eth(1, size=60), 0)])
    assert meta.log() == ["in=2 seven=7"]


def test_failed_assert_discards_packet(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_assert", [3])
    assert run(meta, [(2, eth(1, size=60), 0)]) == []
    assert run(meta, [(99, eth(1, size=60), 10)]) != []
    s = meta.stats()
    assert s["assert_failures"] == 1 and s["dropped_by_assert"] == 1


def test_register_read_write_and_api(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_register", [3])
    out = run(meta, [(2, eth(1, size=60), i) for i in range(3)])
    assert [tel(f)["reg"] for _, f, _ in out] == [0, 1, 2]
    assert meta.register_read("MyIngress.pkt_count", 0) == 3
    meta.register_write("MyIngress.pkt_count", 0, 100)
    (_, f, _), = run(meta, [(2, eth(1, size=60), 10)])
    assert tel(f)["reg"] == 100
    with pytest.raises(InvalidArgumentError):
        meta.register_write("MyIngress.pkt_count", 0, 1 << 32)
    meta.register_reset("MyIngress.pkt_count")
    assert meta.register_read("MyIngress.pkt_count", 0) == 0


def test_meter_colours_packets(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_meter", [3])
    # Unconfigured: green.
    (_, f, _), = run(meta, [(2, eth(1, size=60), 0)])
    assert tel(f)["colour"] == 0
    # 1000 pkt/s committed, burst 2; 2000 pkt/s peak, burst 3; four back-to-back packets.
    meta.meter_set("MyIngress.m", 0, 1000, 2, 2000, 3)
    out = run(meta, [(2, eth(1, size=60), 10) for _ in range(4)])
    assert [tel(f)["colour"] for _, f, _ in out] == [0, 0, 1, 2]


def test_priority_out_of_range_is_dropped_by_tm(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_prio", [3, 5])
    assert run(meta, [(2, eth(1, size=60), 0)]) == []
    assert meta.stats()["dropped_by_tm"] == 1


def test_hash_over_header_and_field():
    import json

    from engine_helpers import FIXTURES

    from bufferlab.switch import Engine

    doc = json.loads((FIXTURES / "meta.json").read_text())
    doc["calculations"][0]["input"] = [
        {"type": "header", "value": "ethernet"},
        {"type": "field", "value": ["ethernet", "srcAddr"]},
        {"type": "hexstr", "value": "0x5", "bitwidth": 4},
    ]
    e = Engine(json.dumps(doc))
    e.table_add("MyIngress.fwd", [1], "MyIngress.fwd_hash", [3])
    frame = eth(1, src=0x123456789ABC, size=60)
    (_, out, _), = run(e, [(2, frame, 0)])

    def crc16_arc(data):
        crc = 0
        for b in data:
            crc ^= b
            for _ in range(8):
                crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
        return crc

    # 14 header bytes, 6 field bytes, then the 4-bit constant padded with zeros.
    assert tel(out)["hash"] == crc16_arc(frame[:14] + frame[6:12] + b"\x50")


def test_endless_resubmission_is_bounded():
    import json

    from engine_helpers import FIXTURES

    from bufferlab.switch import Engine

    doc = json.loads((FIXTURES / "meta.json").read_text())
    action = next(a for a in doc["actions"] if a["name"] == "MyIngress.fwd_resubmit")
    # Without the instance_type check the action resubmits on every pass.
    action["primitives"] = [p for p in action["primitives"] if p["op"] != "_jump_if_zero"]
    e = Engine(json.dumps(doc))
    e.table_add("MyIngress.fwd", [1], "MyIngress.fwd_resubmit", [3])
    assert run(e, [(2, eth(1, size=60), 0)]) == []
    s = e.stats()
    assert s["dropped_pass_limit"] == 1 and s["resubmitted"] == 256
    # The engine keeps working afterwards.
    e.table_add("MyIngress.fwd", [2], "MyIngress.fwd_port", [4])
    assert [p for p, _, _ in run(e, [(2, eth(2, size=60), 10)])] == [4]


def test_endless_e2e_cloning_is_bounded():
    import json

    from engine_helpers import FIXTURES

    from bufferlab.switch import Engine

    doc = json.loads((FIXTURES / "meta.json").read_text())
    action = next(a for a in doc["actions"] if a["name"] == "MyEgress.e2e_clone")
    # Without the instance_type check every clone clones itself again.
    action["primitives"] = [p for p in action["primitives"] if p["op"] != "_jump_if_zero"]
    e = Engine(json.dumps(doc))
    e.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    e.table_add("MyEgress.eg", [1], "MyEgress.e2e_clone", [4])
    e.clone_session_set(4, port=8)
    out = run(e, [(2, eth(1, size=60), 0)])
    s = e.stats()
    assert s["cloned"] == 255 and s["dropped_pass_limit"] == 1
    assert sorted({p for p, _, _ in out}) == [3, 8] and len(out) == 256


def test_pending_digests_are_bounded(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_digest", [3])
    meta.send_repeated(2, eth(1, size=60), 65536 + 4, 0, 10)
    meta.drain()
    assert meta.discard_received() == 65540
    assert len(meta.digests()) == 65536
    assert meta.stats()["digests_dropped"] == 4
