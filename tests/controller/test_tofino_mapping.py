"""One config for both programs: the keys the v1model program implements in P4 (pool,
thresholds, queue caps, PAUSE/PFC) become Tofino TM settings on the TNA port, with the
config's own tofino_tm section laid over them; the P4Runtime writes skip the tables the TM
replaces; and on the engine the TNA port drops at the share the config names, in cells."""

import json
from fractions import Fraction

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from bufferlab.controller.bcn_quantise import quantise_entries
from bufferlab.controller.buffer_program import BCN_MIRROR_BYTES, BufferSwitch, program_updates
from bufferlab.controller.cli import describe, main
from bufferlab.controller.config import ConfigError, parse_config, quantised_fb_pages
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.controller.tofino_mapping import cell_bytes_of, nearest_baf, on_tofino, tm_plan
from bufferlab.experiments.common.buffer_engine import (
    PROGRAM,
    TNA_PROGRAM,
    compiled_program,
    program_over_p4runtime,
    programmed_engine,
)
from bufferlab.switch import Engine
from bufferlab.traffic import layers

H1, H2, H3 = (f"08:00:00:00:01:0{p}" for p in (1, 2, 3))
L2 = {"l2": [{"mac": mac, "port": p} for p, mac in ((1, H1), (2, H2), (3, H3))]}


def config(**over) -> dict:
    """A three-port switch with a 100,000-byte pool (1,250 cells of 80 B)."""
    return {"switch_id": 1, "pool_bytes": 100_000, "ports": {"1": {}, "2": {}, "3": {}},
            "forwarding": L2, **over}


def test_pool_thresholds_caps_and_pause_become_tm_settings_in_cells():
    raw = config(priority_queues=2, ports={
        "1": {},
        "2": {"alpha": "1/8"},
        "3": {"threshold": "10%", "queue_caps_bytes": {"1": 4000},
              "pause": {"xoff_bytes": 20_000, "xon_bytes": 12_000, "quanta": 1000,
                        "refresh_us": 100}},
    })
    plan = tm_plan(parse_config(raw), 80)
    queue = "tm_queue_buffer {} {} pool_id=EG_APP_POOL_0 guaranteed_cells=0 pool_max_cells={} " \
            "dynamic_baf={} hysteresis_cells=0"
    # Pool 100,000 B = 1,250 cells; 10 % = 10,000 B = 125 cells; the 4,000-byte cap = 50 cells.
    # XOFF 20,000 B = 250 cells, XON 12,000 B = 150 cells: hysteresis 100; the skid is the pool.
    pause = ["tm_port_flowcontrol {} mode_tx=PAUSE pause_quanta=1000",
             "tm_port_buffer {} ig_limit_cells=250 ig_hysteresis_cells=100 skid_limit_cells=1250"]
    assert plan.commands == [
        "tm_pool_cfg EG_APP_POOL_0 size_cells=1250",
        *(line.format(1) for line in pause),
        queue.format(1, 0, 1250, "DISABLE"), queue.format(1, 1, 1250, "DISABLE"),
        *(line.format(2) for line in pause),
        queue.format(2, 0, 0, "11%"), queue.format(2, 1, 0, "11%"),
        queue.format(3, 0, 125, "DISABLE"), queue.format(3, 1, 50, "DISABLE"),
    ]
    assert plan.warnings == [
        "ports.2.threshold: a port's share in the v1model program, each queue's on Tofino: "
        "its 2 queues may hold up to that share each",
        "ports.2.alpha: 1/8 is not a Tofino burst-absorption factor; the nearest, 11%, is used",
        "ports.3.threshold: a port's share in the v1model program, each queue's on Tofino: "
        "its 2 queues may hold up to that share each",
        "ports.3.pause.refresh_us: no Tofino equivalent: the TM sends XOFF again every half "
        "pause time while it holds",
    ]


def test_cells_round_limits_up_and_the_pool_and_xon_down():
    raw = config(pool_bytes=100_039, ports={
        "1": {}, "2": {},
        "3": {"threshold": "1%", "pause": {"mode": "pfc", "xoff_bytes": 1001, "xon_bytes": 799,
                                           "refresh_us": 10}}})
    plan = tm_plan(parse_config(raw), 80)
    # 100,039 B holds 1,250 whole cells; 1 % = 1,000 B needs 13 cells (12.5 up); XOFF 1,001 B
    # needs 13, XON 799 B is 9 whole cells (9.99 down): hysteresis 4.
    assert plan.commands[0] == "tm_pool_cfg EG_APP_POOL_0 size_cells=1250"
    assert "tm_ppg_cfg 1 0 guaranteed_cells=13 hysteresis_cells=4 pool_id=NONE pfc_enable=true " \
           "pfc_skid_max_cells=1250" in plan.commands
    assert "tm_port_flowcontrol 2 mode_tx=PFC pause_quanta=65535" in plan.commands
    assert plan.commands[-1] == ("tm_queue_buffer 3 0 pool_id=EG_APP_POOL_0 guaranteed_cells=0 "
                                 "pool_max_cells=13 dynamic_baf=DISABLE hysteresis_cells=0")
    # 100 % of 100,039 B would round up to 1,251 cells: a share is at most the whole pool.
    assert ("tm_queue_buffer 1 0 pool_id=EG_APP_POOL_0 guaranteed_cells=0 pool_max_cells=1250 "
            "dynamic_baf=DISABLE hysteresis_cells=0") in plan.commands
    # Tofino 2's 176-byte cells: 568 whole cells, 1,000 B in 6.
    plan = tm_plan(parse_config(raw), 176)
    assert plan.commands[0] == "tm_pool_cfg EG_APP_POOL_0 size_cells=568"
    assert "pool_max_cells=6 " in plan.commands[-1]


@pytest.mark.parametrize(("alpha", "baf", "exact"), [
    ("1/2", "50%", True), ("1/64", "1.5%", False), ("1/32", "3%", False), ("1/4", "20%", False),
    ("1", "80%", False), ("4", "80%", False), ("1/3", "33%", False)])
def test_alpha_becomes_the_nearest_baf(alpha, baf, exact):
    assert nearest_baf(Fraction(alpha)) == (baf, exact)


def test_the_explicit_tofino_tm_section_overrides_the_mapped_fields():
    raw = config(ports={"1": {}, "2": {}, "3": {"threshold": "10%"}}, tofino_tm={
        "pool.cfg": {"EG_APP_POOL_0": {"size_cells": 5000}},
        "ports": {"3": {"queue.buffer": {"0": {"dynamic_baf": "80%", "guaranteed_cells": 20}},
                        "queue.cfg": {"0": {"pfc_cos": 3}}}}})
    commands = tm_plan(parse_config(raw), 80).commands
    assert commands[0] == "tm_pool_cfg EG_APP_POOL_0 size_cells=5000"
    assert commands[-2:] == [
        "tm_queue_buffer 3 0 pool_id=EG_APP_POOL_0 guaranteed_cells=20 pool_max_cells=125 "
        "dynamic_baf=80% hysteresis_cells=0",
        "tm_queue_cfg 3 0 pfc_cos=3"]


def test_what_tofino_cannot_express_is_an_error_or_a_warning_naming_the_key():
    pause = {"xoff_bytes": 20_000, "xon_bytes": 12_000, "refresh_us": 100}
    raw = config(ports={"1": {}, "2": {"pause": {**pause, "mode": "pfc"}},
                        "3": {"pause": {**pause, "mode": "802.3x"}}})
    with pytest.raises(ConfigError) as err:
        tm_plan(parse_config(raw), 80)
    assert err.value.errors == ["ports.3.pause.mode: 802.3x where ports.2.pause.mode is pfc: on "
                                "Tofino both become port 1's flow control, which is one mode"]
    raw = config(ports={"1": {}, "2": {"pause": {**pause, "xoff_bytes": 30_000}},
                        "3": {"pause": pause}})
    plan = tm_plan(parse_config(raw), 80)
    # Port 1 feeds both paused ports: one ingress limit, the lower XOFF (250 cells).
    assert ("ports.3.pause: port 1 feeds ports.2.pause too, with other settings; Tofino gives a "
            "port one ingress limit: the lower XOFF's (ports.3.pause)") in plan.warnings
    assert "tm_port_buffer 1 ig_limit_cells=250 ig_hysteresis_cells=100 skid_limit_cells=1250" \
        in plan.commands
    assert "tm_port_buffer 3 ig_limit_cells=375 ig_hysteresis_cells=225 skid_limit_cells=1250" \
        in plan.commands
    raw = config(ports={"1": {}, "2": {}, "3": {
        "alpha": "1/2", "queue_caps_bytes": {"0": 3000},
        "bcn": {"w": 3, "jitter_bytes": 20_000, "fb_bits": 6}}})
    assert tm_plan(parse_config(raw), 80).warnings == [
        "ports.3.queue_caps_bytes.0: not applied: with a dynamic threshold a Tofino queue's limit "
        "is the larger of its static limit and the BAF's, so no cap can sit beside it",
        "ports.3.bcn.w: 3 is not a power of two; the TNA port multiplies Qdelta by shifting, by 2",
        "ports.3.bcn.jitter_bytes: 20000 is not a power of two; the TNA port draws the byte "
        "budget over S ± 16384",
    ]
    with pytest.raises(ConfigError, match="pool_bytes: 60 is less than one 80-byte TM cell"):
        tm_plan(parse_config(config(pool_bytes=60)), 80)
    with pytest.raises(ConfigError, match="tofino_tm.ports.3.queue.buffer.0.dynamic_baf: '25%'"):
        parse_config(config(tofino_tm={"ports": {"3": {"queue.buffer": {"0": {"dynamic_baf": "25%"}}}}}))


@pytest.fixture(scope="module")
def tna_index() -> P4InfoIndex:
    return compiled_program(TNA_PROGRAM).index


def test_the_tna_program_is_told_apart_by_its_p4info_and_skips_the_tm_tables(tna_index):
    v1_index = compiled_program(PROGRAM).index
    assert on_tofino(tna_index) and not on_tofino(v1_index)
    raw = config(ports={"1": {}, "2": {}, "3": {"threshold": "10%", "pause": {
        "xoff_bytes": 20_000, "xon_bytes": 12_000, "refresh_us": 100}}})
    lines = [describe(tna_index, u) for u in program_updates(tna_index, parse_config(raw))]
    assert not [line for line in lines if any(t in line for t in (
        "buffer_threshold", "queue_threshold", "pause_config"))]
    assert "MODIFY pipe.switch_config (default) -> set_switch(switch_id=1, pool_bytes=100000," \
           " port_session_base=1, all_ports_session=511)" in lines
    sessions = [u.entity.packet_replication_engine_entry.clone_session_entry
                for u in program_updates(tna_index, parse_config(raw))
                if u.entity.packet_replication_engine_entry.HasField("clone_session_entry")]
    # One E2E mirror session per port, truncated to a BCN copy; no all-ports session.
    assert [(s.session_id, s.packet_length_bytes) for s in sessions] == [
        (2, BCN_MIRROR_BYTES), (3, BCN_MIRROR_BYTES), (4, BCN_MIRROR_BYTES)]
    v1_lines = [describe(v1_index, u) for u in program_updates(v1_index, parse_config(raw))]
    assert "INSERT buffer_threshold port=3 -> static_threshold(percent=10)" in v1_lines
    assert cell_bytes_of(tna_index, compiled_program(TNA_PROGRAM).json_text) == 80
    # Tofino 2's JSON says 176; without JSON, a T2NA P4Info means Tofino 2 too.
    assert cell_bytes_of(tna_index, json.dumps({"target_info": {"cell_bytes": 176}})) == 176
    p4info = type(tna_index.p4info)()
    p4info.CopyFrom(tna_index.p4info)  # the cached program's own stays tna
    p4info.pkg_info.arch = "t2na"
    t2na = P4InfoIndex(p4info)
    assert cell_bytes_of(t2na) == 176 and cell_bytes_of(None) == 80


def test_bufferlab_ctl_prints_the_mapped_tm_lines_for_a_tna_program(tmp_path, capsys, tna_index):
    program = compiled_program(TNA_PROGRAM)
    (tmp_path / "tna.json").write_text(program.json_text)
    (tmp_path / "tna.p4info.txtpb").write_text(str(program.p4info))
    path = tmp_path / "s1.json"
    path.write_text(json.dumps(config(ports={"1": {}, "2": {}, "3": {"alpha": "1/4"}})))
    args = ["--p4info", str(tmp_path / "tna.p4info.txtpb"), "--json", str(tmp_path / "tna.json")]
    assert main([*args, "tm", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "tm_pool_cfg EG_APP_POOL_0 size_cells=1250"
    assert out.splitlines()[-1].endswith("pool_max_cells=0 dynamic_baf=20% hysteresis_cells=0")
    assert "warning: ports.3.alpha: 1/4 is not a Tofino burst-absorption factor; the nearest, " \
           "20%, is used" in err
    assert main([*args, "apply", "--dry-run", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert "TM tm_pool_cfg EG_APP_POOL_0 size_cells=1250" in out.splitlines()
    assert "buffer_threshold" not in out


def frame(size: int) -> bytes:
    """An IPv4/UDP frame of ``size`` bytes from H1 to H3."""
    head = Ether(src=H1, dst=H3) / IP(src="10.0.1.1", dst="10.0.1.3") / UDP(sport=1, dport=2)
    return bytes(head / Raw(bytes(size - len(head))))


def burst_through(threshold: dict, frames: int) -> tuple[int, int]:
    """The TNA port programmed from ``config`` with port 3's ``threshold``: ``frames``
    500-byte frames from port 1 to port 3 (10 Mbit/s) 1 ns apart; (sent out, TM drops)."""
    raw = config(ports={"1": {}, "2": {}, "3": threshold})
    engine = programmed_engine(parse_config(raw), compiled_program(TNA_PROGRAM),
                               rate_bps={3: 10_000_000})
    for i in range(frames):
        engine.send(1, frame(500), 1000 + i)
    engine.drain()
    out = [port for port, _frame, _t in engine.received()]
    assert set(out) <= {3}
    assert engine.tm_info()["cell_bytes"] == 80
    return len(out), engine.queue_stats(3, 0)["dropped_app_pool_pkts"]


def test_a_tna_port_from_a_v1model_config_drops_at_the_static_share_in_cells():
    # A 500-byte frame crosses the TM with the 15-byte bridged header: 515 B, 7 cells. 10 % of
    # the pool is 125 cells: 17 frames (119 cells) queue behind the one on the wire, the 19th
    # finds no room. In bytes (the v1model program) 10,000 B would have held 20.
    assert burst_through({"threshold": "10%"}, 40) == (18, 22)


def test_a_tna_port_from_a_v1model_config_drops_at_the_dynamic_share_in_cells():
    # alpha 1/2 is BAF 50 %: a queue of q cells admits a 7-cell frame while q + 7 <=
    # floor((1250 - q) / 2), up to 59 frames (413 cells; the fixed point 1250/3 = 416.7 cells),
    # behind the one on the wire.
    assert burst_through({"alpha": "1/2"}, 100) == (60, 40)


def test_live_threshold_changes_on_a_tna_program_point_to_the_tm(tna_index):
    switch = BufferSwitch(connection=None, index=tna_index)
    with pytest.raises(ConfigError, match="ports.3: buffer_threshold is Tofino TM configuration"):
        switch.set_threshold(3, parse_config(config()).threshold)



def test_fb_quantisation_is_prefixes_that_give_each_fb_its_quantised_value():
    for bits, range_pages in ((3, 14), (6, 1875), (1, 1)):
        entries = quantise_entries(bits, range_pages)

        def looked_up(fb: int, entries: list = entries) -> int:
            hits = [out for value, mask, out in entries if fb & 0xFFFFFFFF & mask == value]
            assert len(hits) == 1, (fb, hits)  # the prefixes never overlap
            return hits[0] - (1 << 32) if hits[0] >> 31 else hits[0]

        edges = [-(1 << 31), -(1 << 31) + 1, (1 << 31) - 1, 1 << 30, -(1 << 30)]
        for fb in [*range(-3 * range_pages - 3, 3 * range_pages + 4), *edges]:
            assert looked_up(fb) == quantised_fb_pages(fb, bits, range_pages), fb
    # QCN's 6 bits over Qeq(1 + 2W) = 1,875 pages: 666 entries per congestion point.
    assert len(quantise_entries(6, 1875)) == 666


def probe(seq: int) -> bytes:
    """A probe from H1 to H3 (telemetry filled on the way out)."""
    return bytes(layers.probe_frame(H1, H3, "10.0.1.1", "10.0.1.3", flow=1, seq=seq,
                                    frame_bytes=400))


def bcn_fbs(bcn: dict) -> dict[int, int]:
    """Fb of each BCN frame the TNA port sends for 8 probes into a 10 Mbit/s port 3 sampled
    at every departure, by the sample's sequence number."""
    raw = config(ports={"1": {}, "2": {}, "3": {"bcn": {
        "qeq_bytes": 128, "w": 2, "sample_bytes": 1, "jitter_bytes": 0, **bcn}}})
    engine = programmed_engine(parse_config(raw), compiled_program(TNA_PROGRAM),
                               rate_bps={3: 10_000_000})
    for seq in range(8):
        engine.send(1, probe(seq), 1000 + seq)
    engine.drain()
    out = {}
    for port, frame, _t in engine.received():
        parsed = Ether(bytes(frame))
        if port == 1 and parsed.haslayer(layers.BCN):
            sample = Ether(bytes(parsed[layers.BCN].sample))
            out[sample[layers.BufferlabData].seq] = parsed[layers.BCN].fb
    return out


def test_the_tna_port_quantises_fb_from_the_configs_fb_bits():
    raw_fb = bcn_fbs({})
    assert len(set(raw_fb.values())) > 2, raw_fb
    quantised = bcn_fbs({"fb_bits": 2, "fb_range_bytes": 640})
    # 2 bits over 10 pages: steps of 10/3 pages, whole pages rounded down: 0, 3, 6, 10.
    assert quantised == {seq: quantised_fb_pages(fb, 2, 10) for seq, fb in raw_fb.items()
                         if quantised_fb_pages(fb, 2, 10) != 0}
    assert set(quantised.values()) <= {-3, -6, -10}
    with pytest.raises(ConfigError, match="ports.3.bcn.fb_bits: the TNA port quantises Fb through "
                                          "bcn_quantise, 4096 entries in all; this config's "
                                          "fb_bits and fb_range_bytes need 8229 over 1 port"):
        program_updates(compiled_program(TNA_PROGRAM).index, parse_config(config(ports={
            "1": {}, "2": {}, "3": {"bcn": {"fb_bits": 12, "fb_range_bytes": 64 * 4095}}})))


def test_a_live_fb_bits_change_rewrites_the_queues_quantise_entries():
    program = compiled_program(TNA_PROGRAM)
    raw = config(ports={"1": {}, "2": {}, "3": {"bcn": {"fb_bits": 3}}})
    counts = []

    def change(connection) -> None:
        switch = BufferSwitch(connection, program.index)
        switch.apply(parse_config(raw), program.json_text.encode())
        counts.append(len(switch.entries("bcn_quantise")))
        switch.set_bcn(3, {"fb_bits": 6})
        counts.append(len(switch.entries("bcn_quantise")))
        switch.set_bcn(3, {"fb_bits": None})
        counts.append(len(switch.entries("bcn_quantise")))

    program_over_p4runtime(Engine(program.json_text), program, change)
    # Qeq 24,000 B, W 2: Fb's range 1,875 pages.
    assert counts == [len(quantise_entries(3, 1875)), 666, 0]


def test_a_tna_port_from_a_v1model_pause_config_sends_pause_and_xon_from_the_tm():
    # Port 3's 802.3x section becomes port 1's ingress limit: XOFF 20,000 B = 250 cells,
    # XON at 12,000 B = 150 cells. 500-byte frames hold 7 cells each: the 36th frame that
    # port 1 holds (252 cells) asks for XOFF; XON once port 1 holds 150 cells or fewer.
    raw = config(ports={"1": {}, "2": {}, "3": {"pause": {
        "xoff_bytes": 20_000, "xon_bytes": 12_000, "quanta": 1000, "refresh_us": 10_000}}})
    engine = programmed_engine(parse_config(raw), compiled_program(TNA_PROGRAM),
                               rate_bps={1: 10_000_000, 3: 10_000_000})
    for i in range(50):
        engine.send(1, frame(500), 1000 + i)
    engine.drain()
    received = engine.received()
    pauses = [(bytes(f)[14:16].hex(), int.from_bytes(bytes(f)[16:18], "big"))
              for port, f, _t in received if port == 1 and bytes(f)[12:14] == b"\x88\x08"]
    assert pauses == [("0001", 1000), ("0001", 0)]  # XOFF with the config's quanta, then XON
    assert sum(1 for port, _f, _t in received if port == 3) == 50  # the skid is the pool
    assert engine.stats()["xoff_sent"] == 1 and engine.stats()["xon_sent"] == 1


def test_the_t2na_variant_gets_ghost_queue_ids_and_samples_the_queue_a_frame_joins():
    """On T2NA the controller maps every configured (port, queue) to the TM's queue id in
    ghost_queue (port's low 7 bits × 16 + queue on the engine), so the ghost thread's
    lengths reach ingress: a burst into slow port 3 builds a queue above Qeq and the
    arrivals' samples send BCN frames back out of port 1. Without the entries ingress reads
    every queue as empty and sends none."""
    bcn = {"enable": True, "qeq_bytes": 1_024, "sample_bytes": 1_000, "jitter_bytes": 0}
    raw = parse_config(config(ports={"1": {}, "2": {}, "3": {"bcn": bcn}}))
    program = compiled_program(TNA_PROGRAM.with_name("buffer_switch_t2na.p4"))
    assert not any(t.preamble.name.endswith("ghost_queue")
                   for t in compiled_program(TNA_PROGRAM).index.p4info.tables)

    def bcn_frames(engine: Engine) -> int:
        for i in range(20):
            engine.send(1, frame(500), 1000 + i)
        engine.drain()
        return sum(1 for port, _frame, _t in engine.received() if port == 1)

    engine = programmed_engine(raw, program, rate_bps={3: 10_000_000})
    ids = {tuple(k[1] for k in e["keys"]): (e["action"], e["data"])
           for e in engine.table_entries("ghost_queue")}
    assert ids == {(p, 0): ("set_ghost_queue", [p << 4]) for p in (1, 2, 3)}
    assert bcn_frames(engine) > 0

    bare = programmed_engine(raw, program, rate_bps={3: 10_000_000})
    for e in bare.table_entries("ghost_queue"):
        bare.table_delete("ghost_queue", e["handle"])
    assert bcn_frames(bare) == 0
