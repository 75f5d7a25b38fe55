"""p4src/tna/buffer_switch.p4 (the Tofino port) on the engine's TNA target: forwarding,
discards, flooding, telemetry in Tofino's units, ECN against queue depth in cells, and the
BCN congestion point in egress whose frames come from E2E mirror copies. Queue depths are
read from the probes' own telemetry, so the checks hold whatever the TM counts per cell."""

import json
from pathlib import Path

import pytest
from buffer_switch_helpers import H1, H2, H3, SLOW_BPS, SWITCH_ID, udp_frame
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bufferlab.compiler.api import compile_program
from bufferlab.switch import Engine
from bufferlab.traffic import layers

ROOT = Path(__file__).resolve().parents[2]
PORT_PROGRAM = ROOT / "p4src" / "tna" / "buffer_switch.p4"
PORT_SESSION_BASE = 1
FLOOD_GROUP = 1
BCN_MIRROR_HEADER_BYTES = 21
SAMPLE_BYTES = 90
CELL_BYTES = 80
TOFINO_UNITS = 0x02


@pytest.fixture(scope="module")
def port_json() -> str:
    """The Tofino port compiled by bufferlab-p4c (TNA JSON)."""
    return json.dumps(compile_program(PORT_PROGRAM).json)


@pytest.fixture
def tna(port_json) -> Engine:
    """The port on ports 1..3 as the controller sets it up: switch id 1, hosts H1..H3, an
    E2E mirror session per port keeping the mirror header and 90 sample bytes."""
    engine = Engine(port_json, seed=1)
    engine.table_set_default("switch_config", "set_switch", {
        "switch_id": SWITCH_ID, "pool_bytes": 100_000,
        "port_session_base": PORT_SESSION_BASE, "all_ports_session": 511})
    engine.mc_group_set(FLOOD_GROUP, [(p, 0) for p in (1, 2, 3)])
    for port, mac in ((1, H1), (2, H2), (3, H3)):
        engine.table_add("l2_forward", {"dst_addr": mac}, "l2_to_port", {"port": port})
        engine.clone_session_set(PORT_SESSION_BASE + port, port=port,
                                 truncate_bytes=BCN_MIRROR_HEADER_BYTES + SAMPLE_BYTES)
    return engine


def out(engine) -> list[tuple[int, bytes]]:
    """Everything delivered once the engine has run dry."""
    engine.drain()
    return [(port, bytes(frame)) for port, frame, _t in engine.received()]


def probe(seq, ecn=0, dscp=0, size=400, rlt_cpid=None) -> bytes:
    """A probe from H1 to H3 with the IPv4 ECN field set (checksum recomputed)."""
    frame = layers.probe_frame(H1, H3, "10.0.1.1", "10.0.1.3", flow=1, seq=seq, dscp=dscp,
                               frame_bytes=size)
    frame[IP].tos = (dscp << 2) | ecn
    del frame[IP].chksum
    raw = bytes(frame)
    return layers.insert_rlt(raw, rlt_cpid) if rlt_cpid is not None else raw


def test_a_bridged_frame_leaves_byte_exact(tna):
    frame = udp_frame(H1, H3, 200)
    tna.send(1, frame, 1000)
    assert out(tna) == [(3, frame)]
    assert tna.counter_read("port_rx", 1) == (1, 200)
    assert tna.counter_read("queue_tx", 3 * 8)[0] == 1


def test_routing_rewrites_macs_ttl_and_checksum(tna):
    tna.table_add("ipv4_lpm", {"dst_addr": ("10.0.9.0", 24)}, "ipv4_forward",
                  {"dst_mac": "08:00:00:00:09:09", "port": 2})
    tna.send(1, udp_frame(H1, H3, 120, dst_ip="10.0.9.7", ttl=64), 1000)
    ((port, raw),) = out(tna)
    frame = Ether(raw)
    assert port == 2
    assert (frame.dst, frame.src) == ("08:00:00:00:09:09", layers.port_mac(SWITCH_ID, 2))
    assert frame[IP].ttl == 63
    checksum = frame[IP].chksum
    del frame[IP].chksum
    assert Ether(bytes(frame))[IP].chksum == checksum


def test_discards_are_counted_once_by_reason(tna):
    tna.table_add("ipv4_lpm", {"dst_addr": ("10.0.9.0", 24)}, "ipv4_forward",
                  {"dst_mac": "08:00:00:00:09:09", "port": 2})
    tna.send(1, udp_frame(H1, H3, 120, dst_ip="10.0.9.7", ttl=1), 1000)
    tna.send(1, bytes(layers.pause_frame(H1, 100)), 2000)
    tna.table_add("l2_forward", {"dst_addr": "08:00:00:00:07:07"}, "drop", {})
    tna.send(1, udp_frame(H1, "08:00:00:00:07:07", 120), 3000)
    assert out(tna) == []
    assert tna.counter_read("ingress_discards", 3)[0] == 1  # TTL expired
    assert tna.counter_read("ingress_discards", 1)[0] == 1  # MAC Control
    assert tna.counter_read("ingress_discards", 4)[0] == 1  # drop action
    assert tna.counter_read("port_rx", 1)[0] == 3


def test_a_flooded_frame_is_not_echoed(tna):
    tna.table_set_default("l2_forward", "flood", {"group": FLOOD_GROUP})
    frame = udp_frame(H1, "08:00:00:00:05:05", 100)
    tna.send(1, frame, 1000)
    assert sorted(out(tna)) == [(2, frame), (3, frame)]


def test_telemetry_in_tofino_units(tna):
    tna.configure_port(3, rate_bps=SLOW_BPS, num_queues=2)
    tna.table_add("dscp_class", {"dscp": 10}, "set_queue", {"queue": 1})
    for seq in range(4):
        tna.send(1, probe(seq, dscp=10), 1000 + seq)
    frames = [Ether(raw) for port, raw in out(tna) if port == 3]
    assert len(frames) == 4
    depths = []
    for seq, frame in enumerate(frames):
        tel = frame[layers.Telemetry]
        assert int(tel.tel_flags) == 0x01 | TOFINO_UNITS
        assert (tel.qid, tel.ingress_port, tel.egress_port, tel.switch_id) == (1, 1, 3, SWITCH_ID)
        assert frame[UDP].chksum == 0 and frame[layers.BufferlabData].seq == seq
        assert tel.egress_global_ts >= tel.ingress_global_ts
        depths.append(tel.enq_qdepth)
    # Back to back on a slow port: the first leaves at once, the second waits for it on
    # the wire with nothing queued ahead, the others find the earlier ones queued (cells).
    assert depths[0] == depths[1] == 0 and 0 < depths[2] < depths[3]
    assert depths[2] >= -(-400 // CELL_BYTES)
    assert tna.counter_read("probes_stamped", 3)[0] == 4


def tofino2_port() -> Engine:
    """The port compiled for Tofino 2 (176-byte cells), set up as `tna` is."""
    engine = Engine(json.dumps(compile_program(PORT_PROGRAM, target="tofino2").json), seed=1)
    engine.table_set_default("switch_config", "set_switch", {
        "switch_id": SWITCH_ID, "pool_bytes": 100_000,
        "port_session_base": PORT_SESSION_BASE, "all_ports_session": 511})
    engine.table_add("l2_forward", {"dst_addr": H3}, "l2_to_port", {"port": 3})
    return engine


@pytest.mark.parametrize("target,cell_bytes", [("tofino", CELL_BYTES), ("tofino2", 176)])
def test_ecn_marks_above_k_bytes_of_cells(tna, target, cell_bytes):
    if target == "tofino2":
        tna = tofino2_port()
        assert tna.arch() == ("tna", "tofino2")
    tna.configure_port(3, rate_bps=SLOW_BPS)
    k_bytes = 1000
    tna.table_add("ecn_threshold", {"port": 3, "queue": 0}, "ecn_mark_above", {"k_bytes": k_bytes})
    for seq in range(6):
        tna.send(1, probe(seq, ecn=0b10 if seq != 5 else 0), 1000 + seq)
    frames = [Ether(raw) for port, raw in out(tna) if port == 3]
    marked = 0
    for frame in frames:
        depth_bytes = frame[layers.Telemetry].enq_qdepth * cell_bytes
        ect = frame[layers.BufferlabData].seq != 5
        expected = (0b11 if depth_bytes > k_bytes else 0b10) if ect else 0
        assert frame[IP].tos & 0b11 == expected, (frame[layers.BufferlabData].seq, depth_bytes)
        checksum = frame[IP].chksum
        del frame[IP].chksum
        assert Ether(bytes(frame))[IP].chksum == checksum
        marked += expected == 0b11
    assert 0 < marked < 5
    assert tna.counter_read("ecn_marked", 3 * 8)[0] == marked


def enable_bcn(engine, qeq_pages=2, w=2, qsc_pages=0):
    """BCN on port 3, queue 0, sampling every departure (S = 1 byte, no jitter)."""
    engine.configure_port(3, rate_bps=SLOW_BPS)
    engine.table_add("bcn_config", {"port": 3, "queue": 0}, "bcn_enable", {
        "qeq_pages": qeq_pages, "w": w, "qsc_pages": qsc_pages,
        "sample_bytes": 1, "jitter_bytes": 0})


def expected_samples(departed, qeq_pages, w, qoff_max=0):
    """(seq, Q, Qoff, Qdelta, Fb) of each departure, from the cells it left behind."""
    rows, qold = [], 0
    for frame in departed:
        cells = frame[layers.Telemetry].deq_qdepth
        q = cells + cells // 4  # pages of 64 B: cells * 80 / 64
        qoff, qdelta = q - qeq_pages, q - qold
        term = max(-qoff_max, min(qoff, qoff_max)) if qoff_max else qoff
        rows.append((frame[layers.BufferlabData].seq, q, qoff, qdelta, -(term + w * qdelta)))
        qold = q
    return rows


def bcn_by_seq(frames):
    """BCN frames that left by port 1, by the sequence number of their sample."""
    found = {}
    for port, raw in frames:
        frame = Ether(raw)
        if port == 1 and frame.haslayer(layers.BCN):
            sample = Ether(bytes(frame[layers.BCN].sample))
            found[sample[layers.BufferlabData].seq] = (frame, raw)
    return found


def test_bcn_frames_from_departures_and_cells(tna):
    enable_bcn(tna, qeq_pages=2, w=2)
    sent = [probe(seq) for seq in range(6)]
    for seq, frame in enumerate(sent):
        tna.send(1, frame, 1000 + seq)
    frames = out(tna)
    departed = [Ether(raw) for port, raw in frames if port == 3]
    assert [f[layers.BufferlabData].seq for f in departed] == list(range(6))
    rows = expected_samples(departed, 2, 2)
    bcn = bcn_by_seq(frames)
    # Negative feedback (no RLT, so no positive frames) for every sample with Fb < 0.
    assert sorted(bcn) == [seq for seq, *_rest, fb in rows if fb < 0]
    assert bcn, rows
    for seq, _q, qoff, qdelta, fb in rows:
        if seq not in bcn:
            continue
        frame, raw = bcn[seq]
        header = frame[layers.BCN]
        assert (frame.dst, frame.src) == (H1, layers.port_mac(SWITCH_ID, 3))
        assert header.cpid == layers.make_cpid(SWITCH_ID, 3, 0)
        assert (header.qoff, header.qdelta, header.fb, int(header.flags)) == (qoff, qdelta, fb, 0)
        # The sample is the frame as it left (telemetry filled), cut to 90 bytes.
        assert header.sample_len == SAMPLE_BYTES and len(raw) == 14 + 24 + SAMPLE_BYTES
        assert bytes(header.sample) == bytes(departed[seq])[:SAMPLE_BYTES]
    last_sent = rows[max(bcn)][4]
    assert tna.counter_read("bcn_frames", 3 * 8)[0] == len(bcn)
    assert tna.register_read("bcn_last_fb", 3 * 8) == last_sent & 0xFFFFFFFF
    assert tna.register_read("bcn_qold", 3 * 8) == rows[-1][1]


def test_w_rounds_down_to_a_power_of_two(tna):
    enable_bcn(tna, qeq_pages=2, w=3)
    for seq in range(4):
        tna.send(1, probe(seq), 1000 + seq)
    frames = out(tna)
    departed = [Ether(raw) for port, raw in frames if port == 3]
    rows = {seq: fb for seq, *_rest, fb in expected_samples(departed, 2, 2)}
    bcn = bcn_by_seq(frames)
    assert bcn
    for seq, (frame, _raw) in bcn.items():
        assert frame[layers.BCN].fb == rows[seq]


def test_positive_feedback_to_tagged_sources_or_any(tna):
    cpid = layers.make_cpid(SWITCH_ID, 3, 0)
    enable_bcn(tna, qeq_pages=40, w=1)
    for seq in range(5):
        tna.send(1, probe(seq, rlt_cpid=cpid if seq % 2 else None), 1000 + seq)
    frames = out(tna)
    bcn = bcn_by_seq(frames)
    positive = {seq for seq, (frame, _raw) in bcn.items() if frame[layers.BCN].fb > 0}
    assert positive and all(seq % 2 for seq in positive)
    assert all(int(bcn[seq][0][layers.BCN].flags) == 2 for seq in positive)
    # positive_any: untagged sources get positive feedback too.
    tna.table_add("bcn_feedback", {"port": 3, "queue": 0}, "bcn_send", {
        "qoff_max_pages": 0, "positive_any": 1, "fb_range_pages": 0,
        "fb_code_mul": 0, "fb_step_mul": 0})
    for seq in range(10, 15):
        tna.send(1, probe(seq), 100_000_000 + seq)
    bcn = bcn_by_seq(out(tna))
    assert any(frame[layers.BCN].fb > 0 for frame, _raw in bcn.values())


def test_qoff_saturates_in_fb_only(tna):
    enable_bcn(tna, qeq_pages=0, w=1)
    tna.table_add("bcn_feedback", {"port": 3, "queue": 0}, "bcn_send", {
        "qoff_max_pages": 3, "positive_any": 0, "fb_range_pages": 0,
        "fb_code_mul": 0, "fb_step_mul": 0})
    for seq in range(5):
        tna.send(1, probe(seq), 1000 + seq)
    frames = out(tna)
    departed = [Ether(raw) for port, raw in frames if port == 3]
    rows = {seq: row for seq, *row in expected_samples(departed, 0, 1, qoff_max=3)}
    bcn = bcn_by_seq(frames)
    assert any(rows[seq][1] > 3 for seq in bcn)  # a sample whose Qoff was saturated
    for seq, (frame, _raw) in bcn.items():
        _q, qoff, qdelta, fb = rows[seq]
        assert (frame[layers.BCN].qoff, frame[layers.BCN].qdelta, frame[layers.BCN].fb) == (qoff, qdelta, fb)


def test_quantised_fb_through_bcn_quantise(tna):
    enable_bcn(tna, qeq_pages=2, w=2)
    tna.table_add("bcn_feedback", {"port": 3, "queue": 0}, "bcn_send", {
        "qoff_max_pages": 0, "positive_any": 0, "fb_range_pages": 64,
        "fb_code_mul": 0, "fb_step_mul": 0})
    # Every Fb in -256..-1 (two's complement 0xFFFFFF00/24 bits) is sent as -8.
    tna.table_add("bcn_quantise", {"port": 3, "queue": 0, "fb": (0xFFFFFF00, 0xFFFFFF00)},
                  "bcn_quantised", {"fb": (-8) & 0xFFFFFFFF}, priority=1)
    for seq in range(6):
        tna.send(1, probe(seq), 1000 + seq)
    frames = out(tna)
    departed = [Ether(raw) for port, raw in frames if port == 3]
    rows = {seq: fb for seq, *_rest, fb in expected_samples(departed, 2, 2)}
    bcn = bcn_by_seq(frames)
    assert bcn and sorted(bcn) == sorted(seq for seq, fb in rows.items() if -256 <= fb < 0)
    assert {frame[layers.BCN].fb for frame, _raw in bcn.values()} == {-8}
    assert any(rows[seq] != -8 for seq in bcn)


TM_TABLES = {"buffer_threshold", "queue_threshold", "pause_config"}


@pytest.fixture(scope="module")
def indexes():
    """The controller's name index of the v1model program and of the port."""
    from bufferlab.controller.p4info import P4InfoIndex

    return (P4InfoIndex(compile_program(ROOT / "p4src" / "buffer_switch.p4").p4info),
            P4InfoIndex(compile_program(PORT_PROGRAM).p4info))


@pytest.mark.parametrize("config_name", sorted(
    p.name for p in (ROOT / "experiments" / "configs").glob("seed*.json")))
def test_every_seed_config_writes_the_same_entries_to_the_port(indexes, config_name):
    """What the controller writes for a seed config against the v1model program is, key
    for key and parameter for parameter, an entry of the port's P4Info, for every table the
    port keeps; only the TM's tables (buffer and PAUSE) have no P4 entry on Tofino."""
    from bufferlab.controller import buffer_program
    from bufferlab.controller.config import load_config

    v1, port = indexes
    config = load_config(ROOT / "experiments" / "configs" / config_name)
    updates = (buffer_program.default_updates(v1, config)
               + buffer_program.forwarding_updates(v1, config)
               + buffer_program.port_updates(v1, config))
    written = set()
    for update in updates:
        entry = update.entity.table_entry
        table = v1.by_id(entry.table_id).preamble.name
        if table in TM_TABLES:
            continue
        written.add(table)
        fields = {f.id: f for f in v1.match_fields(table)}
        for match in entry.match:
            field = fields[match.field_id]
            mine = port.match_field(table, field.name)
            assert (mine.bitwidth, mine.kind) == (field.bitwidth, field.kind), (table, field.name)
        action = v1.by_id(entry.action.action.action_id).preamble.name
        assert action in port.table_actions(table), (table, action)
        v1_params = {p.id: p for p in v1.params(action)}
        port_params = {p.name: p.bitwidth for p in port.params(action)}
        for value in entry.action.action.params:
            param = v1_params[value.param_id]
            assert port_params.get(param.name) == param.bitwidth, (action, param.name)
    assert {"switch_config", "l2_forward", "dscp_class", "ecn_threshold", "bcn_config"} <= written


T2NA_PROGRAM = ROOT / "p4src" / "tna" / "buffer_switch_t2na.p4"


@pytest.fixture
def t2na() -> Engine:
    """The T2NA variant set up as the port is, with (port 3, queue 0) mapped to the TM's
    queue id 5 in ghost_queue."""
    engine = Engine(json.dumps(compile_program(T2NA_PROGRAM).json), seed=1)
    engine.table_set_default("switch_config", "set_switch", {
        "switch_id": SWITCH_ID, "pool_bytes": 100_000,
        "port_session_base": PORT_SESSION_BASE, "all_ports_session": 511})
    for port, mac in ((1, H1), (2, H2), (3, H3)):
        engine.table_add("l2_forward", {"dst_addr": mac}, "l2_to_port", {"port": port})
        engine.clone_session_set(PORT_SESSION_BASE + port, port=port,
                                 truncate_bytes=BCN_MIRROR_HEADER_BYTES + SAMPLE_BYTES)
    engine.table_add("bcn_config", {"port": 3, "queue": 0}, "bcn_enable", {
        "qeq_pages": 2, "w": 2, "qsc_pages": 0, "sample_bytes": 1, "jitter_bytes": 0})
    return engine


def test_t2na_samples_arrivals_against_the_ghost_queue_length(t2na):
    """The ghost thread's register (written here by the control plane, so the length is
    exact; the engine's ghost thread writes it on every queue change) gives ingress the
    queue a frame joins: 100 cells of 176 B are 275 pages; the sample is an I2E mirror of
    the frame as it came in."""
    t2na.table_add("ghost_queue", {"port": 3, "queue": 0}, "set_ghost_queue", {"qid": 5})
    t2na.register_write("queue_cells", 5, 100)
    frame = udp_frame(H1, H3, 400)
    t2na.send(1, frame, 1000)
    frames = out(t2na)
    assert (3, frame) in frames
    ((port, raw),) = [(p, r) for p, r in frames if p == 1]
    bcn = Ether(raw)
    header = bcn[layers.BCN]
    q = 100 * 2 + 100 // 2 + 100 // 4
    assert q == 100 * 176 // 64
    assert (bcn.dst, bcn.src) == (H1, layers.port_mac(SWITCH_ID, 3))
    assert (header.qoff, header.qdelta, header.fb) == (q - 2, q, -((q - 2) + 2 * q))
    assert header.cpid == layers.make_cpid(SWITCH_ID, 3, 0)
    assert bytes(header.sample) == frame[:SAMPLE_BYTES] and len(raw) == 128
    assert t2na.register_read("bcn_qold", 3 * 8) == q


def test_t2na_unmapped_queue_reads_empty(t2na):
    t2na.register_write("queue_cells", 5, 100)
    t2na.send(1, udp_frame(H1, H3, 400), 1000)
    frames = out(t2na)
    # Q = 0 pages: Fb = -(0 - 2) = 2 > 0, and no RLT: no BCN frame.
    assert [p for p, _raw in frames] == [3]
    assert t2na.register_read("bcn_qold", 3 * 8) == 0


def test_t2na_keeps_the_ports_controller_tables(indexes):
    _v1, port = indexes
    from bufferlab.controller.p4info import P4InfoIndex

    t2na = P4InfoIndex(compile_program(T2NA_PROGRAM).p4info)
    for table in ("switch_config", "dscp_class", "ipv4_lpm", "l2_forward", "ecn_threshold",
                  "bcn_config", "bcn_feedback", "bcn_quantise"):
        assert [(f.name, f.bitwidth, f.kind) for f in t2na.match_fields(table)] == [
            (f.name, f.bitwidth, f.kind) for f in port.match_fields(table)], table
        assert t2na.table_actions(table) == port.table_actions(table), table
    assert [f.name for f in t2na.match_fields("ghost_queue")] == ["port", "queue"]
