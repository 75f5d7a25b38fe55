"""buffer_switch.p4 DSCP classes (queue choice seen in the egress order) and probe telemetry
(values against the engine's clock and the queue the probe found)."""

from buffer_switch_helpers import (
    H1,
    H3,
    SLOW_BPS,
    SWITCH_ID,
    on_port,
    outputs,
    seq_of,
    tx_ns,
    udp_frame,
)
from scapy.layers.inet import UDP

from bufferlab.traffic import layers

T0 = 1000  # ns


def seed_002_classes(switch):
    """QBSS (DSCP 8) → queue 0, best effort (default) → 1, AF11 (DSCP 10) → 2."""
    switch.configure_port(3, rate_bps=SLOW_BPS, num_queues=3)
    switch.table_set_default("dscp_class", "set_queue", {"queue": 1})
    switch.table_add("dscp_class", {"dscp": 8}, "set_queue", {"queue": 0})
    switch.table_add("dscp_class", {"dscp": 10}, "set_queue", {"queue": 2})


def probe(seq, dscp=0):
    return bytes(layers.probe_frame(H1, H3, "10.0.1.1", "10.0.1.3", flow=1, seq=seq, dscp=dscp))


def test_dscp_picks_the_queue_and_higher_queues_leave_first(switch):
    seed_002_classes(switch)
    switch.send(1, udp_frame(H1, H3, 400, seq=0), T0)  # starts out at once
    for seq, dscp in ((1, 8), (2, 0), (3, 10), (4, 46)):
        switch.send(1, udp_frame(H1, H3, 400, dscp=dscp, seq=seq), T0 + seq)
    switch.drain()
    assert [seq_of(f) for f in on_port(outputs(switch), 3)] == [0, 3, 2, 4, 1]
    assert [switch.register_read("queue_occupancy", 3 * 8 + q) for q in range(3)] == [0, 0, 0]


def test_probe_reports_its_queue(switch):
    seed_002_classes(switch)
    for seq, dscp in ((0, 8), (1, 0), (2, 10)):
        switch.send(1, probe(seq, dscp), T0 + seq * 1_000_000)
    switch.drain()
    stamped = {f[layers.BufferlabData].seq: f[layers.Telemetry].qid for f in on_port(outputs(switch), 3)}
    assert stamped == {0: 0, 1: 1, 2: 2}


def test_probe_telemetry_matches_the_clock_and_the_queue_it_found(switch):
    switch.configure_port(3, rate_bps=SLOW_BPS)
    for seq in range(3):  # seq 0 starts out at once; 1 and 2 wait: 800 B, 2 packets
        switch.send(1, udp_frame(H1, H3, 400, seq=seq), T0 + seq)
    sent = probe(7)
    switch.send(1, sent, T0 + 3)
    switch.send(1, udp_frame(H1, H3, 400, seq=8), T0 + 4)  # one frame behind the probe
    switch.drain()
    frames = [(f, t) for p, f, t in outputs(switch) if p == 3]
    (raw, arrival_ns), = [(f, t) for f, t in frames if len(f) == len(sent)]
    stamped = layers.Ether(raw)
    tel = stamped[layers.Telemetry]
    dequeued_ns = T0 + 3 * tx_ns(400)  # after three 400-byte frames
    assert arrival_ns == dequeued_ns + tx_ns(len(sent))
    assert int(tel.tel_flags) == 1 and tel.qid == 0
    assert (tel.ingress_port, tel.egress_port, tel.switch_id) == (1, 3, SWITCH_ID)
    assert tel.ingress_global_ts == (T0 + 3) // 1000
    assert tel.egress_global_ts == int(dequeued_ns) // 1000
    assert tel.enq_timestamp == tel.ingress_global_ts
    assert tel.deq_timedelta == tel.egress_global_ts - tel.enq_timestamp
    assert (tel.enq_qdepth, tel.deq_qdepth) == (2, 1)
    assert (tel.pool_occupancy, tel.port_occupancy) == (800, 800)
    assert stamped[UDP].chksum == 0
    # Everything but the block and the UDP checksum is as sent.
    assert raw[:40] == sent[:40] and raw[42:58] == sent[42:58]
    assert switch.counter_read("probes_stamped", 3)[0] == 1


def test_flooded_probe_is_stamped_without_occupancy(switch):
    sent = bytes(layers.probe_frame(H1, "ff:ff:ff:ff:ff:ff", "10.0.1.1", "10.0.1.255", 1, 1))
    switch.send(1, sent, T0)
    switch.drain()
    frames = outputs(switch)
    assert sorted(p for p, _f, _t in frames) == [2, 3]
    for port, raw, _t in frames:
        tel = layers.Ether(raw)[layers.Telemetry]
        assert (int(tel.tel_flags), tel.egress_port) == (1, port)
        assert (tel.pool_occupancy, tel.port_occupancy) == (0, 0)
