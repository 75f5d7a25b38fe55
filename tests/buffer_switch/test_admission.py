"""buffer_switch.p4 shared-buffer admission: tail drop exactly at the static (percent) and
dynamic (alpha) port thresholds and at the per-queue cap, counted per port and per queue,
with the occupancy registers back at zero once everything has left."""

import pytest
from buffer_switch_helpers import (
    H1,
    H3,
    SLOW_BPS,
    on_port,
    outputs,
    programmed,
    seq_of,
    udp_frame,
)

HOLD_NS = 1_000_000_000  # long enough for every frame of a test to arrive while port 3 is held


def hold_port_3(switch, queues: int = 1) -> None:
    """Keep port 3's queues from draining (as if its peer had sent PAUSE), so the
    occupancy is exactly the bytes sent."""
    switch.configure_port(3, rate_bps=SLOW_BPS, num_queues=queues)
    switch.pause(3, 0xFF, HOLD_NS)


def send_burst(switch, sizes, dscp: int = 0, first_seq: int = 0, t0: int = 1000) -> None:
    for i, size in enumerate(sizes):
        switch.send(1, udp_frame(H1, H3, size, dscp=dscp, seq=first_seq + i), t0 + i)


def assert_registers_drained(switch, port: int = 3, queues: int = 1) -> None:
    assert switch.register_read("pool_occupancy", 0) == 0
    assert switch.register_read("port_occupancy", port) == 0
    for q in range(queues):
        assert switch.register_read("queue_occupancy", port * 8 + q) == 0


def test_static_threshold_admits_up_to_exactly_its_share(switch):
    # 1 % of 100,000 B = 1,000 B. With 900 B queued a 101-byte frame would overfill it by
    # one byte and is refused; a 100-byte frame fills it exactly and is admitted; then full.
    switch.table_add("buffer_threshold", {"port": 3}, "static_threshold", {"percent": 1})
    hold_port_3(switch)
    send_burst(switch, [100] * 9 + [101, 100, 60])
    assert switch.register_read("port_occupancy", 3) == 1000
    assert switch.register_read("queue_occupancy", 3 * 8) == 1000
    assert switch.register_read("pool_occupancy", 0) == 1000
    assert switch.counter_read("port_drops", 3) == (2, 161)
    assert switch.counter_read("queue_drops", 3 * 8) == (2, 161)
    switch.drain()
    assert [seq_of(f) for f in on_port(outputs(switch), 3)] == [*range(9), 10]
    assert_registers_drained(switch)


def test_static_threshold_counts_bytes_not_frames(switch):
    # 2 % = 2,000 B: 1,500 + 500 fits exactly; the next 60-byte frame does not.
    switch.table_add("buffer_threshold", {"port": 3}, "static_threshold", {"percent": 2})
    hold_port_3(switch)
    send_burst(switch, [1500, 500, 60])
    assert switch.register_read("port_occupancy", 3) == 2000
    assert switch.counter_read("port_drops", 3) == (1, 60)


@pytest.mark.parametrize(("alpha_num", "alpha_shift", "admitted"), [
    # Q ≤ α·(B − Q) with B = 3,000 B: the fixed point αB/(1+α) in 100-byte frames.
    (1, 1, 10),  # α = 1/2: 1,000 B
    (1, 0, 15),  # α = 1:   1,500 B
    (2, 0, 20),  # α = 2:   2,000 B
    (1, 3, 3),   # α = 1/8: 333 B, so three frames
])
def test_dynamic_threshold_stops_at_the_choudhury_hahne_fixed_point(
        program_json, alpha_num, alpha_shift, admitted):
    switch = programmed(program_json, pool_bytes=3000)
    switch.table_add("buffer_threshold", {"port": 3}, "dynamic_threshold",
                     {"alpha_num": alpha_num, "alpha_shift": alpha_shift})
    hold_port_3(switch)
    send_burst(switch, [100] * 25)
    assert switch.register_read("port_occupancy", 3) == admitted * 100
    assert switch.counter_read("port_drops", 3) == (25 - admitted, (25 - admitted) * 100)
    assert switch.counter_read("queue_drops", 3 * 8) == (25 - admitted, (25 - admitted) * 100)
    switch.drain()
    assert [seq_of(f) for f in on_port(outputs(switch), 3)] == list(range(admitted))
    assert_registers_drained(switch)


def test_dynamic_threshold_shrinks_as_other_ports_fill_the_pool(program_json):
    switch = programmed(program_json, pool_bytes=3000)
    switch.table_add("buffer_threshold", {"port": 3}, "dynamic_threshold",
                     {"alpha_num": 1, "alpha_shift": 0})
    # 1,000 B already held for port 2: port 3 may now grow to Q ≤ 2,000 − Q, i.e. 1,000 B.
    switch.register_write("pool_occupancy", 0, 1000)
    hold_port_3(switch)
    send_burst(switch, [100] * 15)
    assert switch.register_read("port_occupancy", 3) == 1000
    assert switch.counter_read("port_drops", 3) == (5, 500)


def test_pool_limit_applies_even_under_a_full_share(program_json):
    switch = programmed(program_json, pool_bytes=1000)
    hold_port_3(switch)
    send_burst(switch, [400, 400, 400])  # 100 % share, but 1,200 B would overfill the pool
    assert switch.register_read("pool_occupancy", 0) == 800
    assert switch.counter_read("port_drops", 3) == (1, 400)


def test_queue_cap_drops_per_queue_and_leaves_the_other_queue_alone(switch):
    switch.table_add("dscp_class", {"dscp": 10}, "set_queue", {"queue": 1})
    switch.table_add("queue_threshold", {"port": 3, "queue": 1}, "queue_cap", {"cap_bytes": 500})
    hold_port_3(switch, queues=2)
    send_burst(switch, [100] * 7, dscp=10)
    send_burst(switch, [100] * 7, dscp=0, first_seq=100, t0=2000)
    assert switch.register_read("queue_occupancy", 3 * 8 + 1) == 500
    assert switch.register_read("queue_occupancy", 3 * 8 + 0) == 700
    assert switch.register_read("port_occupancy", 3) == 1200
    assert switch.counter_read("queue_drops", 3 * 8 + 1) == (2, 200)
    assert switch.counter_read("queue_drops", 3 * 8 + 0) == (0, 0)
    assert switch.counter_read("port_drops", 3) == (2, 200)
    switch.drain()
    assert sorted(seq_of(f) for f in on_port(outputs(switch), 3)) == [
        *range(5), *range(100, 107)]
    assert_registers_drained(switch, queues=2)


def test_frames_that_leave_free_their_bytes_for_later_arrivals(switch):
    # Same 1,000 B share, port draining at 10 Mb/s: the first frame starts out at once, so
    # four 400-byte frames find 0, 400 and 800 B queued; only the fourth is refused.
    switch.table_add("buffer_threshold", {"port": 3}, "static_threshold", {"percent": 1})
    switch.configure_port(3, rate_bps=SLOW_BPS)
    send_burst(switch, [400] * 4)
    switch.drain()
    assert [seq_of(f) for f in on_port(outputs(switch), 3)] == [0, 1, 2]
    assert switch.counter_read("port_drops", 3) == (1, 400)
    assert_registers_drained(switch)
