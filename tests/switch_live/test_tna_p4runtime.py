"""TNA programs under P4Runtime, in process: a controller sets the pipeline to a TNA
program (its P4Info names tables and registers with their pipe, as bf-p4c does) and
writes and reads its tables, registers and clone sessions through the server and
`EngineTarget`; packets through the engine show the entries took effect."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.client import P4RuntimeError, entity


def ipv4_frame(dst: bytes, ttl: int = 64) -> bytes:
    """Ethernet + IPv4 (10.0.0.1 -> dst, UDP, checksum right) as l3_forward.p4 wants."""
    ip = bytearray(bytes.fromhex("450000140000000000110000") + bytes([10, 0, 0, 1]) + dst)
    ip[8] = ttl
    total = sum(int.from_bytes(ip[i:i + 2], "big") for i in range(0, 20, 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    ip[10:12] = (~total & 0xFFFF).to_bytes(2, "big")
    return bytes.fromhex("ffffffffffff0000000000010800") + bytes(ip)


def route(index, prefix: int, length: int, port: int, mac: int) -> p4runtime_pb2.Entity:
    return entity(entities.table_entry(index, "pipe.Ingress.ipv4_lpm",
                                       match={"hdr.ipv4.dst_addr": (prefix, length)},
                                       action_name="Ingress.route",
                                       params={"port": port, "next_hop_mac": mac}))


@pytest.fixture
def l3(switch, connect, programs):
    prog = programs("tna/l3_forward.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    return prog, controller


def forward(engine, frame: bytes, port: int = 1) -> list[tuple[int, bytes]]:
    engine.send(port, frame, engine.now())
    engine.drain()
    return [(p, f) for p, f, _ in engine.received()]


def test_the_pipeline_is_the_tna_program_with_its_pipe_named_tables(switch, l3):
    prog, _ = l3
    assert switch.engine.arch() == ("tna", "tofino")
    assert [t.preamble.name for t in prog.p4info.tables] == [
        "pipe.Ingress.ipv4_lpm", "pipe.Ingress.port_queue", "pipe.Egress.port_mac"]


def test_table_entries_are_written_read_back_modified_and_deleted(switch, l3):
    prog, controller = l3
    controller.insert(route(prog.index, 0x0A000200, 24, 3, 0xABC))
    controller.insert(entity(entities.table_entry(
        prog.index, "pipe.Egress.port_mac", match={"eg_intr_md.egress_port": 3},
        action_name="Egress.set_source_mac", params={"mac": 0x3AA})))
    [(port, out)] = forward(switch.engine, ipv4_frame(bytes([10, 0, 2, 7])))
    assert port == 3 and out[:12] == bytes.fromhex("000000000abc0000000003aa") and out[22] == 63

    [read] = controller.read(entity(p4runtime_pb2.TableEntry(
        table_id=prog.index.get("table", "pipe.Ingress.ipv4_lpm").preamble.id)))
    assert read.table_entry.match[0].lpm.value == bytes([10, 0, 2, 0])
    assert read.table_entry.match[0].lpm.prefix_len == 24
    assert [p.value for p in read.table_entry.action.action.params] == [b"\x03", b"\x0a\xbc"]

    controller.modify(route(prog.index, 0x0A000200, 24, 5, 0xABC))
    assert [p for p, _ in forward(switch.engine, ipv4_frame(bytes([10, 0, 2, 7])))] == [5]
    controller.delete(route(prog.index, 0x0A000200, 24, 5, 0xABC))
    assert forward(switch.engine, ipv4_frame(bytes([10, 0, 2, 7]))) == []
    assert switch.engine.table_entries("pipe.Ingress.ipv4_lpm") == []


def test_an_action_of_another_table_is_refused_with_invalid_argument(l3):
    prog, controller = l3
    wrong = entities.table_entry(prog.index, "pipe.Ingress.ipv4_lpm",
                                 match={"hdr.ipv4.dst_addr": (0x0A000200, 24)},
                                 action_name="Ingress.route", params={"port": 3, "next_hop_mac": 1})
    wrong.action.action.action_id = prog.index.get("action", "Ingress.set_queue").preamble.id
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        controller.insert(entity(wrong))


def test_registers_of_a_tna_program_are_written_and_read_by_cell(switch, connect, programs):
    prog = programs("tna/register_action.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    controller.insert(entity(entities.table_entry(
        prog.index, "pipe.Ingress.flows",
        match={"hdr.ipv4.src_addr": 0x0A000001, "hdr.ipv4.dst_addr": 0x0A000207},
        action_name="Ingress.set_flow", params={"flow": 9})))
    cell = entities.register_entry(prog.index, "pipe.Ingress.flow_packets", 9)
    cell.data.bitstring = (41).to_bytes(4, "big")
    controller.modify(entity(cell))
    forward(switch.engine, ipv4_frame(bytes([10, 0, 2, 7])))
    [read] = controller.read(entity(entities.register_entry(prog.index, "pipe.Ingress.flow_packets", 9)))
    assert int.from_bytes(read.register_entry.data.bitstring, "big") == 42, "41 written, +1 by count_flow"


def test_a_clone_session_written_by_p4runtime_serves_a_tna_mirror(switch, connect, programs):
    prog = programs("tna/mirror_resubmit_digest.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    controller.insert(entity(entities.clone_session(6, [(4, 0)])))
    controller.insert(entity(entities.table_entry(
        prog.index, "pipe.Ingress.port_mirror", match={"ig_intr_md.ingress_port": 2},
        action_name="Ingress.mirror_to", params={"session": 6})))
    frame = bytes.fromhex("0000000000aa0000000000bb88b6") + bytes(46)
    assert sorted(p for p, _ in forward(switch.engine, frame, port=2)) == [1, 4]


def acl_entry(index, src: int, action: str) -> p4runtime_pb2.TableEntry:
    return entities.table_entry(index, "pipe.Ingress.acl",
                                match={"hdr.ipv4.src_addr": (src, 0xFFFFFFFF),
                                       "hdr.ipv4.dst_addr": (0, 0)},
                                action_name=action, params={}, priority=10)


def test_counters_meters_and_direct_resources_of_a_tna_program(switch, connect, programs):
    prog = programs("tna/counter_meter.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    controller.insert(entity(acl_entry(prog.index, 0x0A000009, "Ingress.deny")))
    # A meter cell and the entry's direct meter, written and read back as configured.
    meter = p4runtime_pb2.MeterEntry(meter_id=prog.index.get("meter", "pipe.Ingress.port_meter").preamble.id)
    meter.index.index = 4
    meter.config.cir, meter.config.cburst, meter.config.pir, meter.config.pburst = 1000, 1500, 2000, 3000
    controller.modify(entity(meter))
    direct = p4runtime_pb2.DirectMeterEntry(table_entry=acl_entry(prog.index, 0x0A000009, "Ingress.deny"))
    direct.config.cir, direct.config.cburst, direct.config.pir, direct.config.pburst = 10, 20, 30, 40
    controller.modify(entity(direct))

    frame = ipv4_frame(bytes([10, 0, 2, 7]))
    denied = frame[:26] + bytes([10, 0, 0, 9]) + frame[30:]
    for f in (frame, frame, denied):
        forward(switch.engine, f, port=4)

    [cell] = controller.read(entity(entities.counter_entry(prog.index, "pipe.Ingress.port_packets", 4)))
    assert (cell.counter_entry.data.packet_count, cell.counter_entry.data.byte_count) == (3, 3 * len(frame))
    [hits] = controller.read(entity(p4runtime_pb2.DirectCounterEntry(
        table_entry=acl_entry(prog.index, 0x0A000009, "Ingress.deny"))))
    assert hits.direct_counter_entry.data.packet_count == 1, "the one denied frame"
    read_meter = p4runtime_pb2.MeterEntry(meter_id=meter.meter_id)
    read_meter.index.index = 4
    [m] = controller.read(entity(read_meter))
    assert (m.meter_entry.config.cir, m.meter_entry.config.pburst) == (1000, 3000)
    [d] = controller.read(entity(p4runtime_pb2.DirectMeterEntry(
        table_entry=acl_entry(prog.index, 0x0A000009, "Ingress.deny"))))
    assert (d.direct_meter_entry.config.cir, d.direct_meter_entry.config.pburst) == (10, 40)


def test_a_tna_digest_reaches_the_controller_as_a_digest_list(switch, connect, programs):
    """The ingress deparser's Digest.pack, named as bf-p4c names it (pipe.IgDeparser.
    learn_digest), goes out on the stream as a DigestList of its learn_t members in
    P4Runtime's canonical (shortest) bytestrings, as v1model's do; a source the table
    knows sends none."""
    prog = programs("tna/mirror_resubmit_digest.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    digest_id = prog.index.get("digest", "pipe.IgDeparser.learn_digest").preamble.id
    enable = p4runtime_pb2.DigestEntry(digest_id=digest_id)
    enable.config.max_list_size, enable.config.max_timeout_ns = 1, 0
    enable.config.ack_timeout_ns = 10**12
    controller.insert(entity(enable))
    controller.insert(entity(entities.clone_session(6, [(4, 0)])))
    controller.insert(entity(entities.table_entry(
        prog.index, "pipe.Ingress.port_mirror", match={"ig_intr_md.ingress_port": 2},
        action_name="Ingress.mirror_to", params={"session": 6})))
    controller.insert(entity(entities.table_entry(
        prog.index, "pipe.Ingress.known_sources", match={"hdr.ethernet.src_addr": 0xCC},
        action_name="NoAction", params={})))

    for src in (0xBB, 0xCC):
        frame = bytes.fromhex("0000000000aa") + src.to_bytes(6, "big") + b"\x88\xb6" + bytes(46)
        forward(switch.engine, frame, port=2)
    switch.target.poll()
    digest = controller.digests.get(timeout=5)
    assert digest.digest_id == digest_id and digest.list_id == 1
    # learn_t {src_addr: 00:00:00:00:00:bb, ingress_port: 2}.
    assert [[m.bitstring for m in d.struct.members] for d in digest.data] == [[b"\xbb", b"\x02"]]
    assert controller.digests.empty(), "0xcc is a known source: no digest"
