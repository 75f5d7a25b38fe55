"""TNA programs on the engine: the STF cases in tests/stf/tna, and what the target
writes in front of each block and acts on after it (queue depths in TM cells, port
metadata, mirror, resubmit and digest, register actions, drop_ctl, pipes), each
worked out by hand from the architecture's rules (compiler/README.md "TNA JSON")."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine
from bufferlab.switch.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    LoadError,
    NotFoundError,
)
from bufferlab.switch.stf import run_file

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "p4" / "tna"
CASES = sorted((ROOT / "tests" / "stf" / "tna").glob("*.stf"))


def tna_engine(name: str) -> Engine:
    """An engine running tests/p4/tna/<name>.p4, compiled for the architecture it includes."""
    doc, _ = compile_p4(PROGRAMS / f"{name}.p4")
    return Engine(json.dumps(doc))


def eth(dst: int, src: int, ether_type: int, payload: bytes) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big") + payload


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_stf_case_passes(case):
    result = run_file(PROGRAMS / f"{case.name.split('.', 1)[0]}.p4", case)
    assert result.failures == []
    assert result.packets_in > 0 and result.packets_out > 0


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_stf_case_fails_with_a_flipped_expected_byte(case, tmp_path):
    lines = case.read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("expect "))
    port, data = lines[i].split(" ", 2)[1:]
    digits = data.replace(" ", "")
    at = next(k for k, d in enumerate(digits) if d not in "*$")
    flipped = digits[:at] + format(int(digits[at], 16) ^ 0x8, "x") + digits[at + 1:]
    lines[i] = f"expect {port} {flipped}"
    broken = tmp_path / case.name
    broken.write_text("\n".join(lines) + "\n")
    assert run_file(PROGRAMS / f"{case.name.split('.', 1)[0]}.p4", broken).failures


def test_the_engine_names_the_architecture_and_target():
    assert tna_engine("l3_forward").arch() == ("tna", "tofino")
    v1 = Engine((ROOT / "tests" / "engine" / "fixtures" / "l3.json").read_text())
    assert v1.arch() == ("v1model", "bmv2")


# queue_telemetry.p4: the egress copies eg_intr_md into a header after Ethernet:
# enq_qdepth(32) deq_qdepth(32) deq_timedelta(32) egress_qid(8) egress_port(16)
# pkt_length(16) port_tag(32) = 21 bytes.
def telemetry(frame: bytes) -> dict[str, int]:
    t = frame[14:35]
    return {
        "enq_qdepth": int.from_bytes(t[0:4], "big"),
        "deq_qdepth": int.from_bytes(t[4:8], "big"),
        "deq_timedelta": int.from_bytes(t[8:12], "big"),
        "egress_qid": t[12],
        "egress_port": int.from_bytes(t[13:15], "big"),
        "pkt_length": int.from_bytes(t[15:17], "big"),
        "port_tag": int.from_bytes(t[17:21], "big"),
    }


def telemetry_switch(rate_bps: int = 1_000_000_000) -> Engine:
    e = tna_engine("queue_telemetry")
    e.table_add("pipe.Ingress.forward", {"ig_intr_md.ingress_port": 1}, "Ingress.send", {"port": 2, "qid": 0})
    e.configure_port(2, rate_bps=rate_bps, wire_overhead_bytes=24)
    return e


def test_queue_depths_are_counted_in_80_byte_cells_per_packet():
    e = telemetry_switch()
    frame = eth(2, 1, 0x88B5, bytes(986))  # 1,000 bytes; ingress adds a 4-byte bridge: 1,004 queued
    for _ in range(5):
        e.send(1, frame, 0)
    e.drain()
    out = [telemetry(o[1]) for o in e.received()]
    # 1,004 bytes take 13 cells of 80 (12.55 rounded up), per packet. The first frame
    # starts at once; the second is queued alone when the first is on the wire.
    assert [t["enq_qdepth"] for t in out] == [0, 0, 13, 26, 39]
    # Cells left behind when each starts: the second sees 3 behind it.
    assert [t["deq_qdepth"] for t in out] == [0, 39, 26, 13, 0]
    # Each waits for the ones ahead on the wire, where a port spends what egress emits
    # (not the 1,004 bytes queued): the 1,000-byte frame without its bridge plus the
    # 21-byte telemetry record, + 24 wire bytes at 1 Gbit/s = 8,360 ns.
    assert [t["deq_timedelta"] for t in out] == [0, 8360, 16720, 25080, 33440]
    assert {(t["egress_port"], t["egress_qid"], t["pkt_length"]) for t in out} == {(2, 0, 1004)}


def test_the_queue_is_the_one_ig_intr_md_for_tm_names():
    e = telemetry_switch()
    e.configure_port(2, num_queues=4)
    e.table_modify("pipe.Ingress.forward", e.table_find("pipe.Ingress.forward", {"ig_intr_md.ingress_port": 1}),
                   "Ingress.send", {"port": 2, "qid": 3})
    e.send(1, eth(2, 1, 0x88B5, bytes(50)), 0)
    e.drain()
    (port, frame, _), = e.received()
    assert port == 2 and telemetry(frame)["egress_qid"] == 3
    # A queue the port does not have: the traffic manager drops it and counts it.
    e.configure_port(2, num_queues=2)
    e.send(1, eth(2, 1, 0x88B5, bytes(50)), 1000)
    e.drain()
    assert e.received() == []
    assert e.stats()["dropped_priority_out_of_range"] == 1


def test_port_metadata_reaches_the_ingress_parser():
    e = telemetry_switch()
    e.table_add("pipe.Ingress.forward", {"ig_intr_md.ingress_port": 5}, "Ingress.send", {"port": 2, "qid": 0})
    e.set_port_metadata(1, bytes.fromhex("deadbeef00000000"))
    assert e.port_metadata(1) == bytes.fromhex("deadbeef00000000")
    e.send(1, eth(2, 1, 0x88B5, bytes(50)), 0)
    e.send(5, eth(2, 1, 0x88B5, bytes(50)), 10_000)
    e.drain()
    tags = [telemetry(f)["port_tag"] for _, f, _ in e.received()]
    assert tags == [0xDEADBEEF, 0], "a port without metadata reads zeros"
    with pytest.raises(InvalidArgumentError, match="9 bytes"):
        e.set_port_metadata(1, bytes(9))


def test_port_metadata_is_refused_for_v1model():
    v1 = Engine((ROOT / "tests" / "engine" / "fixtures" / "l3.json").read_text())
    with pytest.raises(FailedPreconditionError):
        v1.set_port_metadata(1, bytes(8))


def test_drop_ctl_drops_at_the_end_of_ingress():
    e = telemetry_switch()
    e.send(7, eth(2, 1, 0x88B5, bytes(50)), 0)  # no entry for port 7: default drop()
    e.drain()
    assert e.received() == []
    assert e.stats()["dropped_by_program"] == 1


def test_tables_answer_to_their_pipe_name_and_their_bare_name():
    e = tna_engine("l3_forward")
    assert "pipe.Ingress.ipv4_lpm" in e.tables() and "pipe.Egress.port_mac" in e.tables()
    h = e.table_add("Ingress.ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.2.0", 24)}, "Ingress.drop", {})
    assert e.table_find("pipe.Ingress.ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.2.0", 24)}) == h
    with pytest.raises(NotFoundError, match="table 'other.Ingress.ipv4_lpm'"):
        e.table_entries("other.Ingress.ipv4_lpm")


def test_a_name_in_two_pipes_must_carry_its_pipe():
    e = tna_engine("multi_pipe")
    assert {"pipe_a.IngressA.dmac", "pipe_c.IngressA.dmac"} <= set(e.tables())
    with pytest.raises(InvalidArgumentError, match="more than one pipe"):
        e.table_entries("IngressA.dmac")
    assert e.table_entries("pipe_c.IngressA.dmac") == []


def test_a_malformed_tna_document_names_the_pipe_and_gress():
    doc, _ = compile_p4(PROGRAMS / "l3_forward.p4")
    del doc["pipes"][0]["egress"]["intrinsic_metadata"]
    with pytest.raises(LoadError, match="pipes\\[0\\] 'pipe' egress: intrinsic_metadata: no 'egress' header"):
        Engine(json.dumps(doc))
    doc["pipes"] = []
    with pytest.raises(LoadError, match="0 pipes"):
        Engine(json.dumps(doc))


def ipv4_udp(src: str, dst: str, total_len: int) -> bytes:
    """An IPv4 header (checksum 0: these programs do not check it) and a UDP header."""
    def addr(a: str) -> bytes:
        return bytes(int(x) for x in a.split("."))
    ip = bytes([0x45, 0]) + total_len.to_bytes(2, "big") + bytes(4) + bytes([64, 17, 0, 0]) + addr(src) + addr(dst)
    return ip + bytes.fromhex("04d2162e00080000")


def test_register_actions_run_as_one_read_modify_write_per_call():
    e = tna_engine("register_action")
    e.table_add("pipe.Ingress.flows", {"hdr.ipv4.src_addr": "10.0.0.1", "hdr.ipv4.dst_addr": "10.0.0.2"},
                "Ingress.set_flow", {"flow": 7})
    for i in range(102):
        e.send(1, eth(2, 1, 0x0800, ipv4_udp("10.0.0.1", "10.0.0.2", 20 + i)), i * 1000)
    e.drain()
    out = e.received()
    # count_flow counts to LIMIT (100) and then reports `over`, which ingress turns into
    # drop_ctl: the first 100 frames pass, the last two are dropped.
    assert len(out) == 100
    assert e.register_read("pipe.Ingress.flow_packets", 7) == 100
    assert e.register_read("pipe.Ingress.flow_packets", 6) == 0
    # track_longest keeps the largest total_len seen, dropped frames included.
    assert e.register_read("Ingress.longest", 0) == 20 + 101
    # execute_log writes one cell per call, from 0.
    assert [e.register_read("Ingress.samples", i) for i in (0, 101, 102)] == [0x0A000001, 0x0A000001, 0]


def test_a_register_write_from_the_control_plane_is_what_the_next_action_reads():
    e = tna_engine("register_action")
    e.table_add("Ingress.flows", {"hdr.ipv4.src_addr": "10.0.0.1", "hdr.ipv4.dst_addr": "10.0.0.2"},
                "Ingress.set_flow", {"flow": 3})
    e.register_write("pipe.Ingress.flow_packets", 3, 99)
    for i in range(2):
        e.send(1, eth(2, 1, 0x0800, ipv4_udp("10.0.0.1", "10.0.0.2", 40)), i * 1000)
    e.drain()
    assert len(e.received()) == 1, "99 -> 100 passes, the next one is over the limit"
    assert e.register_read("Ingress.flow_packets", 3) == 100


MIRROR_FRAME = eth(0x0000000000AA, 0x0000000000BB, 0x0800, ipv4_udp("10.0.0.1", "10.0.0.2", 28))


def test_an_ingress_mirror_copies_the_frame_as_received_behind_its_mirror_header():
    e = tna_engine("mirror_resubmit_digest")
    e.clone_session_set(5, port=4)
    e.table_add("pipe.Ingress.port_mirror", {"ig_intr_md.ingress_port": 2}, "Ingress.mirror_to", {"session": 5})
    e.send(2, MIRROR_FRAME, 1000)
    e.drain()
    out = {port: frame for port, frame, _ in e.received()}
    # The packet goes to port 1 (its bridge header stripped by the egress parser); the
    # copy to port 4, where egress writes the mirror header's ingress_mac_tstamp (1,000 ns)
    # into the source MAC.
    assert out[1] == MIRROR_FRAME
    assert out[4] == MIRROR_FRAME[:6] + (1000).to_bytes(6, "big") + MIRROR_FRAME[12:]
    assert e.stats()["cloned"] == 1


def test_a_mirror_to_an_unconfigured_session_makes_no_copy():
    e = tna_engine("mirror_resubmit_digest")
    e.table_add("pipe.Ingress.port_mirror", {"ig_intr_md.ingress_port": 2}, "Ingress.mirror_to", {"session": 5})
    e.send(2, MIRROR_FRAME, 0)
    e.drain()
    assert [port for port, _, _ in e.received()] == [1]


def test_a_digest_carries_its_fields_and_a_resubmission_runs_ingress_once_more():
    e = tna_engine("mirror_resubmit_digest")
    e.send(3, MIRROR_FRAME, 0)
    e.drain()
    (name, _, values, _), = e.digests()
    assert name == "IgDeparser.learn_digest"
    assert values == [0xBB, 0], "the source MAC; no mirror, so the mirror header's port is 0"
    e.table_add("pipe.Ingress.known_sources", {"hdr.ethernet.src_addr": 0xBB}, "NoAction", {})
    resubmit_frame = eth(0xAA, 0xBB, 0x88B5, bytes(46))
    e.send(3, resubmit_frame, 10_000)
    e.drain()
    assert [(port, frame) for port, frame, _ in e.received()] == [(1, MIRROR_FRAME), (1, resubmit_frame)]
    assert e.stats()["resubmitted"] == 1
    assert e.digests() == [], "a known source sends no digest, on either pass"


def test_bufferlab_stf_takes_the_architecture_or_reads_it_from_the_include(capsys):
    from bufferlab.switch.stf import main

    program, case = PROGRAMS / "l2_forward.p4", ROOT / "tests" / "stf" / "tna" / "l2_forward.stf"
    assert main([str(program), str(case)]) == 0
    assert main(["--arch", "tna", str(program), str(case)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["--arch", "v1model", str(program), str(case)]) == 2
    assert "includes tna.p4 (tna) but --arch v1model was given" in capsys.readouterr().err


def test_the_trace_follows_a_packet_through_both_gresses_in_order():
    e = tna_engine("l2_forward")
    e.table_add("pipe.Ingress.l2_forward", {"hdr.ethernet.dst_addr": 0x080000000102}, "Ingress.to_port",
                {"port": 2})
    e.set_trace("debug")
    e.send(1, eth(0x080000000102, 0x080000000101, 0x88B5, bytes(46)), 0)
    e.drain()
    rows, lost = e.take_trace()
    texts = [r[4] for r in rows]
    assert lost == 0
    # The ingress parser reads the intrinsic metadata (ig_intr_md) first, the egress
    # parser eg_intr_md and then the bridged header ingress emitted.
    assert texts == [
        "Processing packet received on port 1",
        "Parser 'parser': start",
        "Parser 'parser' entering state 'start'",
        "Extracting header 'ig_intr_md'",
        "Extracting header 'ethernet'",
        "Parser state 'start' has no switch, going to default next state",
        "Parser 'parser': end",
        "Pipeline 'ingress': start",
        "Looking up key:\n* hdr.ethernet.dst_addr : 080000000102\n",
        "Table 'Ingress.l2_forward': hit with handle 0",
        "Action entry is Ingress.to_port - 2,",
        # The compiler's keyless table for the bridged header's statements, as p4c makes one.
        "Looking up key:\n",
        "Table 'tbl_l2_forward57': miss",
        "Action entry is l2_forward57 -",
        "Pipeline 'ingress': end",
        "Deparser 'deparser': start",
        "Deparsing header 'bridge'",
        "Deparsing header 'ethernet'",
        "Deparser 'deparser': end",
        "Egress port is 2, queue 0",
        "Parser 'parser': start",
        "Parser 'parser' entering state 'start'",
        "Extracting header 'eg_intr_md'",
        "Extracting header 'bridge'",
        "Extracting header 'ethernet'",
        "Parser state 'start' has no switch, going to default next state",
        "Parser 'parser': end",
        "Pipeline 'egress': start",
        "Looking up key:\n",
        "Table 'tbl_l2_forward88': miss",
        "Action entry is l2_forward88 -",
        "Pipeline 'egress': end",
        "Deparser 'deparser': start",
        "Deparsing header 'ethernet'",
        "Deparser 'deparser': end",
        "Transmitting packet of size 60 out of port 2",
    ]


def test_a_packet_goes_to_its_port_its_group_both_or_nowhere():
    e = tna_engine("destinations")
    e.mc_group_set(7, [(3, 1), (4, 2)])
    e.table_add("pipe.Ingress.destination", {"hdr.ethernet.dst_addr": 0xA1}, "Ingress.to_port", {"port": 0})
    e.table_add("pipe.Ingress.destination", {"hdr.ethernet.dst_addr": 0xA2}, "Ingress.to_group", {"group": 7})
    e.table_add("pipe.Ingress.destination", {"hdr.ethernet.dst_addr": 0xA3}, "Ingress.to_both",
                {"port": 5, "group": 7})
    # 0x1FF is no Tofino port (local number 127): programs write it to mean "no unicast".
    e.table_add("pipe.Ingress.destination", {"hdr.ethernet.dst_addr": 0xA5}, "Ingress.to_both",
                {"port": 0x1FF, "group": 7})
    e.table_add("pipe.Ingress.destination", {"hdr.ethernet.dst_addr": 0xA6}, "Ingress.to_port",
                {"port": 0x1FF})
    dsts = (0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6)
    frames = {dst: eth(dst, 0xB0, 0x88B5, bytes(46)) for dst in dsts}
    for i, dst in enumerate(dsts):
        e.send(1, frames[dst], i * 10_000)
    e.drain()
    out = [(port, frame) for port, frame, _ in e.received()]
    # Port 0 is a port like any other; a group replicates; both send both; no destination
    # (0xA4 misses: NoAction) is dropped. The egress parser never extracts eg_intr_md, so
    # nothing is put in front of the frames: they leave as they came.
    assert out == [(0, frames[0xA1]), (3, frames[0xA2]), (4, frames[0xA2]),
                   (3, frames[0xA3]), (4, frames[0xA3]), (5, frames[0xA3]),
                   (3, frames[0xA5]), (4, frames[0xA5])]
    assert e.stats()["dropped_by_program"] == 2


def test_the_ghost_thread_shows_ingress_the_queue_length_in_cells():
    e = tna_engine("t2na_ghost_queue")
    assert e.arch() == ("t2na", "tofino2")
    e.configure_port(2, rate_bps=1_000_000_000)
    frame = eth(2, 1, 0x0800, ipv4_udp("10.0.0.1", "10.0.0.2", 986) + bytes(958))
    assert len(frame) == 1000
    for _ in range(4):
        e.send(1, frame, 0)
    e.drain()
    seen = [int.from_bytes(f[18:20], "big") for _, f, _ in e.received()]
    # 1,000 bytes are 6 cells of 176 B on Tofino 2. The first frame finds the queue empty
    # and starts at once; the second is queued while it is on the wire; the third and
    # fourth find one and two frames waiting.
    assert seen == [0, 0, 6, 12]
    # After the last dequeue the ghost thread has written the empty queue's length.
    assert e.register_read("pipe.queue_cells", 32) == 0


def test_a_multi_parser_switch_parses_each_port_with_the_parser_it_was_given():
    e = tna_engine("multi_parser")
    e.set_port_parser(2, 1)
    with pytest.raises(InvalidArgumentError, match="parser 2: port 3's pipe has 2 ingress parser"):
        e.set_port_parser(3, 2)
    e.set_trace("debug")
    # EtherType 0x8102: the first parser's counter (low byte 2, minus 2) is zero, so it
    # stops after Ethernet; the second (VlanParser) always extracts a VLAN tag.
    frame = eth(2, 1, 0x8102, bytes.fromhex("0064 0800") + bytes(42))
    e.send(1, frame, 0)
    e.send(2, frame, 10_000)
    e.drain()
    rows, _ = e.take_trace()
    vlan_extracted = {r[2] for r in rows if r[4] == "Extracting header 'vlan'"}
    assert vlan_extracted == {1}, "packet 1 (port 2) went through parser_1, packet 0 did not"
    assert [(port, f) for port, f, _ in e.received()] == [(1, frame), (2, frame)]


def report_frame(src: str) -> bytes:
    """Ethernet/IPv4/UDP and direct_register.p4's 5-byte report header (zeros)."""
    return eth(2, 1, 0x0800, ipv4_udp(src, "10.0.0.2", 33) + bytes(5))


def hits(frame: bytes) -> int:
    return int.from_bytes(frame[42:46], "big")


def test_a_direct_register_cell_belongs_to_its_entry_and_starts_afresh_with_a_new_one():
    e = tna_engine("direct_register")
    h = e.table_add("pipe.Ingress.flows", {"hdr.ipv4.src_addr": "10.0.0.1"}, "Ingress.hit", {})
    for i in range(3):
        e.send(1, report_frame("10.0.0.1"), i * 1000)
    e.drain()
    assert [hits(f) for _, f, _ in e.received()] == [1, 2, 3]
    assert e.direct_register_read("pipe.Ingress.entry_hits", h) == 3
    e.direct_register_write("pipe.Ingress.entry_hits", h, 40)
    e.send(1, report_frame("10.0.0.1"), 10_000)
    e.drain()
    assert [hits(f) for _, f, _ in e.received()] == [41]
    # Deleted and added again (the handle comes back): the new entry's cell starts at 0.
    e.table_delete("pipe.Ingress.flows", h)
    h2 = e.table_add("pipe.Ingress.flows", {"hdr.ipv4.src_addr": "10.0.0.1"}, "Ingress.hit", {})
    assert h2 == h
    assert e.direct_register_read("pipe.Ingress.entry_hits", h2) == 0
    with pytest.raises(InvalidArgumentError, match="does not fit in 32 bits"):
        e.direct_register_write("pipe.Ingress.entry_hits", h2, 1 << 32)


def test_lpf_and_wred_cells_are_configured_and_read_from_python():
    e = tna_engine("lpf_wred")
    # Port 1's cells: an Lpf whose time constants are 0 (its output is the last sample)
    # shifted right by 1, and a Wred whose maximum threshold is 1 (any average drops).
    e.lpf_set("pipe.Ingress.port_lpf", 1, mode="sample", scale_down=1)
    e.wred_set("pipe.Ingress.port_wred", 1, time_constant_ns=0.0, min_thresh=0, max_thresh=1,
               max_probability=1.0)
    sample = 0x04D2
    frame = eth(0xFFFFFFFFFFFF, 1, 0x0800, ipv4_udp("10.0.0.2", "10.0.0.99", 36)
                + sample.to_bytes(2, "big") + bytes(6))
    e.send(1, frame, 0)
    e.drain()
    [(_, out, _)] = e.received()
    report = out[42:50]
    assert int.from_bytes(report[2:4], "big") == sample >> 1, "port Lpf: the sample, halved"
    assert report[6] == 1, "port Wred: its drop_value"
    assert e.lpf_output("pipe.Ingress.port_lpf", 1) == sample
    assert e.wred_average("pipe.Ingress.port_wred", 1) == sample
    with pytest.raises(InvalidArgumentError, match="Lpf mode 'fast'"):
        e.lpf_set("pipe.Ingress.port_lpf", 1, mode="fast")
