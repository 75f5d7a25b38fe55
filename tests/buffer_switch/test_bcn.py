"""buffer_switch.p4 BCN congestion point: frame fields and Fb for constructed queue states,
positive feedback only for a matching RLT, the severe flag, saturation, sampling cadence."""

from buffer_switch_helpers import H1, H3, SWITCH_ID, on_port, outputs, seq_of, udp_frame
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers

QEQ_PAGES = 375  # 24,000 B (congestion.md §9)
W = 2
SLOT = 3 * 8 + 0  # congestion point: port 3, queue 0
CPID = layers.make_cpid(SWITCH_ID, 3, 0)
T_NS = 5_000_000  # arrival time of the sampled frame: 5,000 µs on the switch clock


def enable_bcn(switch, qeq_pages=QEQ_PAGES, w=W, qsc_pages=0, sample_bytes=1, jitter_bytes=0,
               queue=0):
    """BCN on port 3; with sample_bytes 1 every arrival is a sample."""
    switch.table_add("bcn_config", {"port": 3, "queue": queue}, "bcn_enable", {
        "qeq_pages": qeq_pages, "w": w, "qsc_pages": qsc_pages,
        "sample_bytes": sample_bytes, "jitter_bytes": jitter_bytes})


def queue_state(switch, queued_bytes: int, qold_pages: int) -> None:
    """Port 3's queue 0 as the program sees it: bytes already queued and Q at the last sample."""
    switch.register_write("queue_occupancy", SLOT, queued_bytes)
    switch.register_write("bcn_qold", SLOT, qold_pages)


def bcn_frames(frames) -> list[Ether]:
    return [f for f in on_port(frames, 1) if f.haslayer(layers.BCN)]


def test_negative_feedback_frame_fields(switch):
    enable_bcn(switch)
    queue_state(switch, 30_000, 400)
    frame = udp_frame(H1, H3, 200)
    switch.send(1, frame, T_NS)
    switch.drain()
    frames = outputs(switch)
    (bcn,) = bcn_frames(frames)
    q = (30_000 + 200) // 64  # Q after this arrival, pages: 471
    qoff, qdelta = q - QEQ_PAGES, q - 400
    assert (bcn.dst, bcn.src, bcn.type) == (H1, layers.port_mac(SWITCH_ID, 3), 0x88B5)
    header = bcn[layers.BCN]
    assert (header.version, int(header.flags), header.reserved) == (0, 0, 0)
    assert header.cpid == CPID
    assert (header.qoff, header.qdelta, header.fb) == (qoff, qdelta, -(qoff + W * qdelta))
    assert header.fb == -238
    assert header.timestamp == T_NS // 1000
    assert header.sample_len == 90 and header.sample == frame[:90]
    assert len(bytes(bcn)) == 128
    # The sampled frame itself still goes out; the sample's Q becomes Qold.
    assert [bytes(f) for f in on_port(frames, 3)] == [frame]
    assert switch.register_read("bcn_qold", SLOT) == q
    assert switch.counter_read("bcn_frames", SLOT)[0] == 1


def test_short_frame_is_sampled_whole(switch):
    enable_bcn(switch, qeq_pages=0)
    queue_state(switch, 6400, 0)  # Q = 100 pages: negative feedback
    frame = udp_frame(H1, H3, 60)
    switch.send(1, frame, T_NS)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    assert bcn[layers.BCN].sample_len == 60 and bcn[layers.BCN].sample == frame
    assert len(bytes(bcn)) == 14 + 24 + 60


def test_positive_feedback_needs_an_rlt_naming_this_congestion_point(switch):
    enable_bcn(switch)
    # Empty queue, Q = 3 pages far below Qeq: Fb > 0.
    switch.send(1, udp_frame(H1, H3, 200), T_NS)
    other_queue = layers.insert_rlt(udp_frame(H1, H3, 200), layers.make_cpid(SWITCH_ID, 3, 1))
    other_switch = layers.insert_rlt(udp_frame(H1, H3, 200), layers.make_cpid(2, 3, 0))
    switch.send(1, other_queue, T_NS + 100_000)
    switch.send(1, other_switch, T_NS + 200_000)
    switch.drain()
    assert bcn_frames(outputs(switch)) == []
    tagged = layers.insert_rlt(udp_frame(H1, H3, 200), CPID)
    switch.send(1, tagged, T_NS + 300_000)
    switch.drain()
    frames = outputs(switch)
    (bcn,) = bcn_frames(frames)
    header = bcn[layers.BCN]
    q = 210 // 64  # the RLT adds 10 bytes
    assert int(header.flags) == 0b10  # positive
    assert header.qoff == q - QEQ_PAGES and header.qdelta == 0  # Qold was 3 from the last sample
    assert header.fb == QEQ_PAGES - q > 0
    assert header.sample == tagged[:90]
    # The tagged frame is forwarded with its tag.
    assert [bytes(f) for f in on_port(frames, 3)] == [tagged]


def test_severe_flag_at_qsc_even_when_fb_is_positive(switch):
    # Qeq above Qsc makes Fb positive while Q ≥ Qsc: severe alone must send the frame.
    enable_bcn(switch, qeq_pages=1000, qsc_pages=471)
    queue_state(switch, 30_000, 471)
    switch.send(1, udp_frame(H1, H3, 200), T_NS)
    queue_state(switch, 29_900, 471)  # Q = 470 pages, just under Qsc: Fb > 0, untagged
    switch.send(1, udp_frame(H1, H3, 200), T_NS + 1_000_000)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    header = bcn[layers.BCN]
    assert int(header.flags) == 0b01
    assert header.fb == -(471 - 1000)


def test_severe_flag_with_negative_feedback(switch):
    enable_bcn(switch, qsc_pages=450)
    queue_state(switch, 30_000, 471)
    switch.send(1, udp_frame(H1, H3, 200), T_NS)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    assert int(bcn[layers.BCN].flags) == 0b01 and bcn[layers.BCN].fb == -(471 - QEQ_PAGES)


def test_fields_saturate_where_fb_does_not(switch):
    enable_bcn(switch)
    queue_state(switch, 0xFFFF0000, 0)
    switch.send(1, udp_frame(H1, H3, 200), T_NS)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    q = (0xFFFF0000 + 200) >> 6
    header = bcn[layers.BCN]
    assert (header.qoff, header.qdelta) == (32767, 32767)
    assert header.fb == -((q - QEQ_PAGES) + W * q)


def test_negative_qdelta_saturates(switch):
    enable_bcn(switch)
    queue_state(switch, 0, 100_000)
    switch.send(1, layers.insert_rlt(udp_frame(H1, H3, 200), CPID), T_NS)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    q = 210 // 64
    header = bcn[layers.BCN]
    assert header.qdelta == -32768
    assert header.fb == -((q - QEQ_PAGES) + W * (q - 100_000))


def sampled_seqs(switch, frames_sent: int, size: int = 200) -> list[int]:
    for seq in range(frames_sent):
        switch.send(1, udp_frame(H1, H3, size, seq=seq), T_NS + seq * 100_000)
    switch.drain()
    return [seq_of(layers.BCN(bytes(f[layers.BCN])).sampled_frame())
            for f in bcn_frames(outputs(switch))]


def test_samples_every_sample_bytes_of_arrivals(switch):
    # Qeq 0 makes every sample negative, so every sample is a frame. The first arrival finds
    # the budget empty; then 1,000 B = five 200-byte frames between samples.
    enable_bcn(switch, qeq_pages=0, sample_bytes=1000)
    assert sampled_seqs(switch, 21) == [0, 5, 10, 15, 20]
    assert switch.counter_read("bcn_frames", SLOT)[0] == 5


def test_jitter_spreads_samples_within_its_bounds(switch):
    # Budget 1,000 ± 200 B: the next sample is the 4th, 5th or 6th 200-byte frame.
    enable_bcn(switch, qeq_pages=0, sample_bytes=1000, jitter_bytes=200)
    seqs = sampled_seqs(switch, 120)
    gaps = [b - a for a, b in zip(seqs, seqs[1:], strict=False)]
    assert seqs[0] == 0 and len(gaps) >= 19
    assert set(gaps) <= {4, 5, 6}
    assert len(set(gaps)) > 1


def test_congestion_points_are_per_queue(switch):
    queue = 1
    switch.configure_port(3, num_queues=2)
    switch.table_add("dscp_class", {"dscp": 10}, "set_queue", {"queue": queue})
    enable_bcn(switch, qeq_pages=0, queue=queue)
    switch.send(1, udp_frame(H1, H3, 200), T_NS)  # queue 0: BCN disabled there
    switch.send(1, udp_frame(H1, H3, 200, dscp=10), T_NS + 100_000)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    assert bcn[layers.BCN].cpid == layers.make_cpid(SWITCH_ID, 3, queue)
    assert switch.counter_read("bcn_frames", 3 * 8 + queue)[0] == 1
