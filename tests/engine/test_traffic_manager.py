"""The traffic manager seen through the engine: port rate, caps, priorities, DRR,
delay, pool thresholds and the queueing metadata egress reads (meta.json)."""

import pytest
from engine_helpers import eth, tel

from bufferlab.switch import InvalidArgumentError

GBPS = 1_000_000_000
WIRE_60 = (60 + 24) * 8  # ns to serialise a 60-byte frame at 1 Gb/s with Ethernet overhead


def test_queue_builds_at_port_rate_with_bmv2_queueing_metadata(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS)
    for _ in range(5):
        meta.send(2, eth(1, size=60), 0)
    meta.drain()
    out = meta.received()
    assert [t for _, _, t in out] == [WIRE_60 * k for k in range(1, 6)]
    m = [tel(f) for _, f, _ in out]
    assert [x["enq_qdepth"] for x in m] == [0, 0, 1, 2, 3]
    assert [x["deq_qdepth"] for x in m] == [0, 3, 2, 1, 0]
    starts_us = [WIRE_60 * k // 1000 for k in range(5)]
    assert [x["egts"] for x in m] == starts_us
    assert [x["deq_timedelta"] for x in m] == starts_us
    assert all(x["enq_ts"] == 0 for x in m)


def test_state_mid_burst(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS)
    for _ in range(5):
        meta.send(2, eth(1, size=60), 0)
    meta.advance(0)
    q = meta.queue_stats(3, 0)
    assert q["depth_pkts"] == 4 and q["depth_bytes"] == 240
    assert meta.port_occupancy_bytes(3) == 240
    assert meta.pool_used_bytes() == 240
    meta.advance(WIRE_60 * 2)
    assert meta.queue_stats(3, 0)["depth_pkts"] == 2
    assert [t for _, _, t in meta.received()] == [WIRE_60, WIRE_60 * 2]


def test_tail_drop_exactly_at_queue_cap(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS)
    meta.set_queue_depth(3, port=3)
    for _ in range(10):
        meta.send(2, eth(1, size=60), 0)
    meta.drain()
    # One frame is on the wire at once, three wait; the other six are dropped.
    assert len(meta.received()) == 4
    q = meta.queue_stats(3, 0)
    assert q["dropped_queue_full_pkts"] == 6 and q["max_depth_pkts"] == 3
    assert meta.stats()["dropped_by_tm"] == 6


def test_strict_priority_serves_highest_queue_first(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_prio", [3, 0])
    meta.table_add("MyIngress.fwd", [2], "MyIngress.fwd_prio", [3, 7])
    meta.configure_port(3, rate_bps=GBPS, num_queues=8)
    order = [1, 1, 1, 1, 2, 2, 2]
    for dst in order:
        meta.send(2, eth(dst, size=60), 0)
    meta.drain()
    got = [f[5] for _, f, _ in meta.received()]
    assert got == [1, 2, 2, 2, 1, 1, 1]


def test_drr_shares_follow_quanta(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_prio", [3, 0])
    meta.table_add("MyIngress.fwd", [2], "MyIngress.fwd_prio", [3, 1])
    meta.configure_port(3, rate_bps=GBPS, num_queues=2, drr_quantum_bytes=[1000, 2000])
    for _ in range(300):
        meta.send(2, eth(1, size=1000), 0)
        meta.send(2, eth(2, size=1000), 0)
    meta.advance(300 * (1000 + 24) * 8)
    got = [f[5] for _, f, _ in meta.received()]
    q0, q1 = got.count(1), got.count(2)
    assert q0 + q1 == 300
    assert abs(q1 - 2 * q0) <= 3


def test_propagation_delay_adds_to_arrival(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS, delay_ns=5_000)
    meta.send(2, eth(1, size=60), 1_000)
    meta.advance(1_000 + WIRE_60 + 4_999)
    assert meta.received() == []
    meta.advance(1_000 + WIRE_60 + 5_000)
    (_, _, t), = meta.received()
    assert t == 1_000 + WIRE_60 + 5_000


def test_shared_pool_full_drops(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS)
    meta.set_pool_bytes(3000)
    for _ in range(5):
        meta.send(2, eth(1, size=1000), 0)
    meta.drain()
    assert len(meta.received()) == 4
    assert meta.queue_stats(3, 0)["dropped_pool_full_pkts"] == 1


def test_static_port_threshold(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS, threshold=("static_bytes", 2000, None))
    for _ in range(5):
        meta.send(2, eth(1, size=1000), 0)
    meta.drain()
    assert len(meta.received()) == 3
    assert meta.queue_stats(3, 0)["dropped_port_threshold_pkts"] == 2
    assert meta.port_config(3)["threshold"] == ("static_bytes", 2000, None)


def test_queue_rate_spaces_departures(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.set_queue_rate(1000, port=3, queue=0)
    for _ in range(3):
        meta.send(2, eth(1, size=60), 0)
    meta.drain()
    assert [t for _, _, t in meta.received()] == [0, 1_000_000, 2_000_000]


def test_time_cannot_go_backwards(meta):
    meta.send(2, eth(1, size=60), 1_000)
    with pytest.raises(Exception, match="before the engine's time"):
        meta.send(2, eth(1, size=60), 999)


def test_bad_port_settings_are_refused(meta):
    with pytest.raises(InvalidArgumentError, match="num_queues"):
        meta.configure_port(3, num_queues=9)
    with pytest.raises(InvalidArgumentError):
        meta.configure_port(600, rate_bps=GBPS)


def test_next_event_tracks_transmissions_and_deliveries(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS, delay_ns=10_000)
    assert meta.next_event_ns() is None
    meta.send(2, eth(1, size=60), 0)
    meta.send(2, eth(1, size=60), 0)
    # The second frame starts when the first has left the port.
    assert meta.next_event_ns() == WIRE_60
    meta.advance(WIRE_60)
    assert meta.next_event_ns() == WIRE_60 + 10_000
    meta.advance(WIRE_60 + 10_000)
    assert len(meta.received()) == 1
    assert meta.next_event_ns() == 2 * WIRE_60 + 10_000
    assert meta.drain() == 2 * WIRE_60 + 10_000
    assert meta.next_event_ns() is None


def pause_frame(quanta):
    return bytes.fromhex("0180c2000001") + bytes(6) + b"\x88\x08" + b"\x00\x01" + quanta.to_bytes(2, "big") + bytes(42)


def pfc_frame(times):
    enable = sum(1 << c for c in times)
    body = b"".join(times.get(c, 0).to_bytes(2, "big") for c in range(8))
    return bytes.fromhex("0180c2000001") + bytes(6) + b"\x88\x08" + b"\x01\x01" + enable.to_bytes(2, "big") + body + bytes(26)


def test_received_pause_holds_the_port(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.configure_port(3, rate_bps=GBPS)
    meta.set_honour_pause(3)
    for _ in range(3):
        meta.send(2, eth(1, size=60), 0)
    # 10 quanta of 512 bit times at 1 Gb/s = 5120 ns, from t = 100 ns.
    meta.send(3, pause_frame(10), 100)
    meta.drain()
    assert [t for _, _, t in meta.received()] == [WIRE_60, 5_220 + WIRE_60, 5_220 + 2 * WIRE_60]
    s = meta.stats()
    assert s["pause_frames"] == 1 and s["received"] == 4


def test_pause_zero_resumes_and_other_ports_pass_pause_to_pipeline(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_port", [3])
    meta.table_add("MyIngress.fwd", [0x0180C2000001], "MyIngress.fwd_port", [4])
    meta.configure_port(3, rate_bps=GBPS)
    meta.set_honour_pause(3)
    meta.send(2, eth(1, size=60), 0)
    meta.send(2, eth(1, size=60), 0)
    meta.send(3, pause_frame(0xFFFF), 100)
    meta.send(3, pause_frame(0), 1_000)
    # Port 5 does not honour pause: the frame is switched like any other.
    meta.send(5, pause_frame(0xFFFF), 1_000)
    meta.drain()
    out = meta.received()
    assert [(p, t) for p, _, t in out if p == 3] == [(3, WIRE_60), (3, 1_000 + WIRE_60)]
    assert [p for p, _, _ in out if p != 3] == [4]


def test_pfc_holds_only_enabled_classes(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_prio", [3, 0])
    meta.table_add("MyIngress.fwd", [2], "MyIngress.fwd_prio", [3, 1])
    meta.configure_port(3, rate_bps=GBPS, num_queues=2)
    meta.set_honour_pause(3)
    meta.send(3, pfc_frame({1: 100}), 0)  # hold queue 1 for 51.2 µs
    meta.send(2, eth(2, size=60), 10)
    meta.send(2, eth(1, size=60), 10)
    meta.drain()
    got = [(f[5], t) for _, f, t in meta.received()]
    assert got == [(1, 10 + WIRE_60), (2, 51_200 + WIRE_60)]


def test_pause_on_port_without_rate_is_counted_as_ignored(meta):
    meta.set_honour_pause(3)
    meta.send(3, pause_frame(10), 0)
    s = meta.stats()
    assert s["pause_frames"] == 1 and s["pause_frames_ignored"] == 1


def test_priority_without_a_queue_is_dropped_counted_per_port_and_logged_once(meta):
    meta.table_add("MyIngress.fwd", [1], "MyIngress.fwd_prio", [3, 0])
    meta.table_add("MyIngress.fwd", [2], "MyIngress.fwd_prio", [3, 7])
    meta.table_add("MyIngress.fwd", [4], "MyIngress.fwd_prio", [3, 5])
    meta.table_add("MyIngress.fwd", [5], "MyIngress.fwd_prio", [5, 7])
    meta.configure_port(3, num_queues=4)  # port 5 keeps the default single queue
    for dst in [1, 2, 2, 4, 2, 1, 5]:
        meta.send(2, eth(dst, size=60), 0)
    meta.drain()
    assert [f[5] for _, f, _ in meta.received()] == [1, 1]
    stats = meta.stats()
    assert stats["dropped_priority_out_of_range"] == 5 and stats["dropped_by_tm"] == 5
    p3, p5 = meta.port_stats(3), meta.port_stats(5)
    assert (p3["dropped_priority_out_of_range_pkts"], p3["dropped_priority_out_of_range_bytes"]) == (4, 240)
    assert (p5["dropped_priority_out_of_range_pkts"], p5["dropped_priority_out_of_range_bytes"]) == (1, 60)
    assert p3["transmitted_pkts"] == 2
    assert meta.log() == [
        "Priority out of range: port 3 has 4 queue(s), priority 7; its packets are dropped (counted per port)",
        "Priority out of range: port 3 has 4 queue(s), priority 5; its packets are dropped (counted per port)",
        "Priority out of range: port 5 has 1 queue(s), priority 7; its packets are dropped (counted per port)",
    ]
    # The same (port, priority) again: counted, not logged again.
    meta.send(2, eth(2, size=60), meta.now())
    meta.drain()
    assert meta.port_stats(3)["dropped_priority_out_of_range_pkts"] == 5
    assert meta.log() == []
