"""buffer_switch.p4 flow control: 802.3x XOFF to the source whose frame crossed XOFF, refresh
of every paused port after refresh_us, XON to every paused port but the congested one when
the port drains below XON; 802.1Qbb PFC per queue; PAUSE wins over BCN on the same frame."""

from buffer_switch_helpers import (
    H1,
    H2,
    H3,
    SLOW_BPS,
    SWITCH_ID,
    kinds,
    on_port,
    outputs,
    seq_of,
    tx_ns,
    udp_frame,
)

from bufferlab.traffic import layers

XOFF, XON, QUANTA = 1000, 500, 0xFFFF
T0 = 1000  # ns
LINK = 8  # the flow-control unit of 802.3x


def enable(switch, action="pause_enable", refresh_us=100_000, queues=1):
    switch.configure_port(3, rate_bps=SLOW_BPS, num_queues=queues)
    switch.table_add("pause_config", {"port": 3}, action, {
        "xoff_bytes": XOFF, "xon_bytes": XON, "quanta": QUANTA, "refresh_us": refresh_us})


def interleave(switch, count, size=400, dscp=0):
    """`count` frames to H3, alternately from port 1 (even seq) and port 2 (odd seq), 1 ns apart."""
    for seq in range(count):
        port = 1 + seq % 2
        switch.send(port, udp_frame(H1 if port == 1 else H2, H3, size, dscp, seq), T0 + seq)


def control_frames(frames, port):
    return [(kind, t) for (p, kind), (_p, _f, t) in zip(kinds(frames), frames, strict=True)
            if p == port and kind != "data"]


def test_xoff_goes_only_to_the_source_that_crossed_it_and_xon_comes_after_draining(switch):
    enable(switch)
    for seq in range(4):
        switch.send(1, udp_frame(H1, H3, 400, seq=seq), T0 + seq)
    switch.drain()
    frames = outputs(switch)
    # Frame 0 starts out at once; 1 and 2 queue (800 B); 3 takes port 3 to 1,200 B ≥ XOFF.
    pause, xon = on_port(frames, 1)
    assert (pause.dst, pause.src, pause.type) == (layers.PAUSE_DST_MAC,
                                                  layers.port_mac(SWITCH_ID, 1), 0x8808)
    assert pause[layers.MACControl].opcode == 1 and pause[layers.Pause].quanta == QUANTA
    assert len(bytes(pause)) == 60 and bytes(pause)[18:] == bytes(42)
    assert xon[layers.Pause].quanta == 0 and len(bytes(xon)) == 60
    # XON when frame 2 leaves at T0 + 2·tx: 400 B left < XON 500 B (frame 1 left 800 B).
    assert control_frames(frames, 1) == [("pause 0xffff", T0 + 3),
                                         ("pause 0x0000", T0 + 2 * int(tx_ns(400)))]
    assert [seq_of(f) for f in on_port(frames, 3)] == [0, 1, 2, 3]
    assert on_port(frames, 2) == []
    assert switch.counter_read("pause_frames", 1)[0] == 1
    assert switch.counter_read("xon_frames", 1)[0] == 1
    assert switch.register_read("paused", 1 * 16 + LINK) == 0
    assert switch.register_read("xoff_active", 3 * 16 + LINK) == 0


def test_two_sources_are_paused_refreshed_and_released_together(switch):
    enable(switch, refresh_us=500)
    interleave(switch, 6)
    switch.drain()
    frames = outputs(switch)
    tx = int(tx_ns(400))
    # Seq 3 (port 2) finds 800 B queued: XOFF to port 2; seq 4 (port 1) finds 1,200 B: XOFF to
    # port 1; seq 5 (port 2 again, already paused) sends nothing.
    # Dequeues at T0 + k·tx: the one at 1·tx is 339 µs after the XOFFs (< 500 µs), the one at
    # 2·tx is 678 µs after: refresh. At 4·tx seq 4 leaves 400 B < XON: XON to both.
    for port, xoff_at in ((1, T0 + 4), (2, T0 + 3)):
        assert control_frames(frames, port) == [
            ("pause 0xffff", xoff_at), ("pause 0xffff", T0 + 2 * tx), ("pause 0x0000", T0 + 4 * tx)]
    assert kinds(frames).count((3, "data")) == 6 and control_frames(frames, 3) == []
    assert [switch.counter_read("pause_frames", p)[0] for p in (1, 2, 3)] == [2, 2, 0]
    assert [switch.counter_read("xon_frames", p)[0] for p in (1, 2, 3)] == [1, 1, 0]


def test_pfc_pauses_only_the_queue_whose_occupancy_crossed(switch):
    enable(switch, action="pfc_enable", queues=3)
    switch.table_add("dscp_class", {"dscp": 10}, "set_queue", {"queue": 2})
    # Seq 0 starts out at once; then 800 B wait in queue 0 and 800 B in queue 2: the port
    # holds 1,600 B (802.3x would pause) but no queue reaches XOFF.
    for seq in range(3):
        switch.send(1, udp_frame(H1, H3, 400, seq=seq), T0 + seq)
    for seq in (10, 11):
        switch.send(1, udp_frame(H1, H3, 400, dscp=10, seq=seq), T0 + seq)
    switch.advance(T0 + 100)
    assert control_frames(outputs(switch), 1) == []
    switch.send(1, udp_frame(H1, H3, 400, dscp=10, seq=12), T0 + 200)  # queue 2: 1,200 B
    switch.drain()
    frames = outputs(switch)
    assert [seq_of(f) for f in on_port(frames, 3)] == [0, 10, 11, 12, 1, 2]  # priority 2 first
    pfc, xon = on_port(frames, 1)
    assert pfc[layers.MACControl].opcode == 0x0101
    assert pfc[layers.PFC].class_enable == 1 << 2
    assert list(pfc[layers.PFC].quanta) == [0, 0, QUANTA, 0, 0, 0, 0, 0]
    assert len(bytes(pfc)) == 60 and bytes(pfc)[34:] == bytes(26)
    assert xon[layers.PFC].class_enable == 1 << 2 and list(xon[layers.PFC].quanta) == [0] * 8
    assert switch.register_read("paused", 1 * 16 + 2) == 0
    assert switch.counter_read("pause_frames", 1)[0] == 1


def test_pause_wins_over_bcn_from_the_same_arrival(switch):
    enable(switch)
    switch.table_add("bcn_config", {"port": 3, "queue": 0}, "bcn_enable", {
        "qeq_pages": 0, "w": 2, "qsc_pages": 0, "sample_bytes": 1, "jitter_bytes": 0})
    for seq in range(4):
        switch.send(1, udp_frame(H1, H3, 400, seq=seq), T0 + seq)
    switch.drain()
    sent_back = [kind for port, kind in kinds(outputs(switch)) if port == 1]
    # Every arrival is a negative-feedback sample; the 4th also crosses XOFF.
    assert sent_back == ["bcn", "bcn", "bcn", "pause 0xffff", "pause 0x0000"]
    assert switch.counter_read("bcn_suppressed", 3 * 8)[0] == 1
    assert switch.counter_read("bcn_frames", 3 * 8)[0] == 3


def test_a_paused_source_is_paused_again_by_its_own_arrivals_after_refresh_us(switch):
    enable(switch, refresh_us=500)
    switch.pause(3, 0xFF, 10**9)  # port 3 never drains: no XON, no dequeue-driven refresh
    sends = [(0, 600), (1, 600),  # 1,200 B ≥ XOFF: PAUSE to port 1
             (2, 100),            # already paused: nothing
             (400_000, 100),      # 400 µs later: still within refresh_us
             (600_000, 100)]      # 600 µs after the XOFF: PAUSE again
    for seq, (t, size) in enumerate(sends):
        switch.send(1, udp_frame(H1, H3, size, seq=seq), T0 + t)
    switch.advance(T0 + 700_000)
    assert control_frames(outputs(switch), 1) == [("pause 0xffff", T0 + 1),
                                                  ("pause 0xffff", T0 + 600_000)]
    assert switch.register_read("pause_sent_at", 1 * 16 + LINK) == (T0 + 600_000) // 1000
    assert switch.counter_read("pause_frames", 1)[0] == 2
