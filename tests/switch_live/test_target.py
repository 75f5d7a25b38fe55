"""The engine behind the P4Runtime server through `EngineTarget`, in process (no live ports):
pipelines pushed by a controller and by p4runtime-shell change what frames `engine.send`
makes come out; reads give back what was written."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.client import P4RuntimeError, entity
from bufferlab.switch.p4runtime import target as tgt

SHELL_DRIVER = Path(__file__).with_name("shell_driver.py")
DST = bytes.fromhex("080000000202")
SRC = bytes.fromhex("080000000101")


def frame(dst: bytes = DST, src: bytes = SRC, ether_type: int = 0x88B5, payload: bytes = b"x" * 46) -> bytes:
    return dst + src + ether_type.to_bytes(2, "big") + payload


def run(engine, port: int, data: bytes) -> list[tuple[int, bytes]]:
    """Send one frame, let the switch run until idle, return what came out (port, bytes)."""
    engine.send(port, data, engine.now())
    engine.drain()
    return [(p, f) for p, f, _ in engine.received()]


def all_entries(index, table: str) -> p4runtime_pb2.Entity:
    """A wildcard read of every entry of `table`."""
    return entity(p4runtime_pb2.TableEntry(table_id=index.get("table", table).preamble.id))


def l2_entry(index, mac: str, port: int):
    return entity(entities.table_entry(index, "l2_forward", match={"dst_addr": mac},
                                       action_name="l2_to_port", params={"port": port}))


def test_controller_writes_change_forwarding(switch, connect, programs):
    prog = programs("forward.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    assert run(switch.engine, 1, frame()) == [], "l2_forward's default action drops"

    controller.insert(l2_entry(prog.index, "08:00:00:00:02:02", 2))
    assert run(switch.engine, 1, frame()) == [(2, frame())]

    controller.modify(l2_entry(prog.index, "08:00:00:00:02:02", 3))
    assert run(switch.engine, 1, frame()) == [(3, frame())]
    [read] = controller.read(all_entries(prog.index, "l2_forward"))
    assert read.table_entry.match[0].exact.value == DST
    assert read.table_entry.action.action.params[0].value == b"\x03"

    controller.delete(l2_entry(prog.index, "08:00:00:00:02:02", 3))
    assert run(switch.engine, 1, frame()) == []
    with pytest.raises(P4RuntimeError) as refused:
        controller.delete(l2_entry(prog.index, "08:00:00:00:02:02", 3))
    assert refused.value.updates[0].code == "NOT_FOUND"


def test_a_backup_cannot_write(switch, connect, programs):
    prog = programs("forward.p4")
    primary = connect((0, 2))
    primary.set_pipeline(prog.p4info, prog.json.encode())
    backup = connect((0, 1))
    assert primary.is_primary and not backup.is_primary
    with pytest.raises(P4RuntimeError) as refused:
        backup.insert(l2_entry(prog.index, "08:00:00:00:02:02", 2))
    assert refused.value.code == "PERMISSION_DENIED"
    assert switch.engine.table_entries("l2_forward") == []


def test_ternary_optional_range_and_priorities(switch, connect, programs):
    prog = programs("classify.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())

    def classify(priority: int, port: int, **match) -> p4runtime_pb2.Entity:
        return entity(entities.table_entry(prog.index, "classify", match=match,
                                           action_name="to_port", params={"port": port},
                                           priority=priority))

    # Low priority: any source in 08:00:00:00:01:xx, any ether type, any dst low byte.
    controller.insert(classify(10, 4, src=["08:00:00:00:01:00", "ff:ff:ff:ff:ff:00"]))
    # Higher priority: the same sources, ether type 0x88b5 only, dst low byte 0..3.
    controller.insert(classify(20, 5, src=["08:00:00:00:01:00", "ff:ff:ff:ff:ff:00"],
                               ether_type=0x88B5, dst_low=[0, 3]))
    assert run(switch.engine, 1, frame()) == [(5, frame())]
    assert run(switch.engine, 1, frame(ether_type=0x88B6)) == [(4, frame(ether_type=0x88B6))]
    far = bytes.fromhex("080000000209")
    assert run(switch.engine, 1, frame(dst=far)) == [(4, frame(dst=far))]
    other_src = bytes.fromhex("080000000301")
    assert run(switch.engine, 1, frame(src=other_src)) == []

    found = {e.table_entry.priority: e.table_entry
             for e in controller.read(all_entries(prog.index, "classify"))}
    assert sorted(found) == [10, 20]
    high = {m.field_id: m for m in found[20].match}
    assert high[1].ternary.value == bytes.fromhex("080000000100")
    assert high[1].ternary.mask == bytes.fromhex("ffffffffff00")
    assert high[2].optional.value == bytes.fromhex("88b5")
    assert (high[3].range.low, high[3].range.high) == (b"\x00", b"\x03")
    # Wildcards (the optional and the full range of the low entry) read back as absent.
    assert [m.field_id for m in found[10].match] == [1]
    # Inside the engine, BMv2's convention: smaller wins.
    engine_entries = switch.engine.table_entries("ClassifyIngress.classify")
    assert sorted(e["priority"] for e in engine_entries) == [2**31 - 1 - 20, 2**31 - 1 - 10]

    controller.delete(classify(20, 5, src=["08:00:00:00:01:00", "ff:ff:ff:ff:ff:00"],
                               ether_type=0x88B5, dst_low=[0, 3]))
    assert run(switch.engine, 1, frame()) == [(4, frame())]


def test_multicast_and_clone_sessions(switch, connect, programs):
    prog = programs("forward.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    controller.insert(entity(entities.multicast_group(5, [(1, 0), (2, 7)])),
                      entity(entities.clone_session(9, [(4, 3)], packet_length_bytes=64)))
    groups = controller.read(entity(entities.multicast_group(5, [])))
    assert [(r.egress_port, r.instance) for r in
            groups[0].packet_replication_engine_entry.multicast_group_entry.replicas] == [(1, 0), (2, 7)]
    # The session's hidden group is the engine's, not the controller's.
    assert switch.engine.mc_group_get(32768 + 9) == [(4, 3)]
    assert switch.engine.clone_session_get(9) == (None, 32768 + 9, 64)
    wildcard = p4runtime_pb2.Entity()
    wildcard.packet_replication_engine_entry.multicast_group_entry.SetInParent()
    assert [e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
            for e in controller.read(wildcard)] == [5]
    session = switch.target.clone_sessions()[9]
    assert session == tgt.CloneSession((tgt.Replica(4, 3),), 0, 64)
    with pytest.raises(P4RuntimeError) as refused:
        controller.insert(entity(entities.clone_session(9, [(1, 0)])))
    assert refused.value.updates[0].code == "ALREADY_EXISTS"
    controller.delete(entity(entities.clone_session(9, [])))
    assert 32768 + 9 not in switch.engine.mc_groups()


def test_digests_reach_the_controller(switch, connect, programs):
    prog = programs("digest_mac_learning.p4")
    controller = connect()
    controller.set_pipeline(prog.p4info, prog.json.encode())
    digest_id = prog.p4info.digests[0].preamble.id
    config = p4runtime_pb2.Entity()
    config.digest_entry.digest_id = digest_id
    config.digest_entry.config.max_list_size = 1
    controller.insert(config)
    switch.engine.send(3, frame(src=bytes.fromhex("0a0b0c0d0e0f")), switch.engine.now())
    switch.engine.drain()
    switch.target.poll()
    digest = controller.digests.get(timeout=10)
    assert digest.digest_id == digest_id
    [member_src, member_port] = digest.data[0].struct.members
    assert member_src.bitstring == bytes.fromhex("0a0b0c0d0e0f")
    assert member_port.bitstring == b"\x03"


def test_packet_out_without_cpu_port_is_refused(programs):
    from bufferlab.switch.engine import Engine
    from bufferlab.switch.target import EngineTarget

    prog = programs("forward.p4")
    target = EngineTarget(Engine(prog.json), prog.json)
    with pytest.raises(tgt.FailedPrecondition, match="--cpu-port"):
        target.packet_out(b"\x00" * 20)


def test_pipeline_that_cannot_load_keeps_the_old_one(switch, programs):
    prog = programs("forward.p4")
    with pytest.raises(tgt.InvalidArgument):
        switch.target.load_pipeline('{"header_types": 3}')
    switch.engine.table_add("l2_forward", {"dst_addr": DST}, "l2_to_port", {"port": 6})
    assert run(switch.engine, 1, frame()) == [(6, frame())]
    del prog


def test_p4runtime_shell_pushes_a_program_punts_and_injects(switch, programs, tmp_path):
    prog = programs("packet_io_controller_header.p4")
    p4info_path = tmp_path / "io.p4.p4info.txtpb"
    p4info_path.write_text(prog.p4info_text)
    json_path = tmp_path / "io.json"
    json_path.write_text(prog.json)
    shell = subprocess.Popen(
        [sys.executable, str(SHELL_DRIVER), switch.address, str(p4info_path), str(json_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(120, shell.kill)
    watchdog.start()
    try:
        line = shell.stdout.readline()
        assert line, shell.stderr.read()
        assert json.loads(line) == {"step": "inserted"}
        # The shell's PacketOut (egress_port 2) leaves on port 2 without its header.
        assert json.loads(shell.stdout.readline()) == {"step": "packet_out_sent"}
        out: list = []
        for _ in range(1000):
            with switch.target.lock:
                switch.engine.drain()
                out += switch.engine.received()
            if out:
                break
            time.sleep(0.01)
        assert [(p, f) for p, f, _ in out] == [(2, frame(ether_type=0x0800))]
        # A punted frame (ether type 0x88b5) reaches the shell with its ingress port.
        switch.engine.send(7, frame(), switch.engine.now())
        switch.engine.drain()
        switch.target.poll()
        packet_in = json.loads(shell.stdout.readline())
        assert packet_in == {"step": "packet_in", "payload": frame().hex(),
                             "metadata": [[1, "07"], [2, "00"]]}
        assert shell.wait(timeout=60) == 0, shell.stderr.read()
    finally:
        watchdog.cancel()
        if shell.poll() is None:
            shell.kill()
            shell.wait()


def test_a_pipeline_change_waits_for_frames_in_flight(programs):
    from bufferlab.switch.engine import Engine
    from bufferlab.switch.target import EngineTarget

    prog = programs("forward.p4")
    engine = Engine(prog.json)
    engine.configure_port(2, delay_ns=1_000_000)
    engine.table_add("l2_forward", {"dst_addr": DST}, "l2_to_port", {"port": 2})
    engine.send(1, frame(), 0)
    engine.advance(10)
    assert engine.next_event_ns() is not None, "the frame is on its 1 ms link"
    # Nothing advances the engine: the change is refused once the wait is over.
    with pytest.raises(tgt.FailedPrecondition, match="in flight"):
        EngineTarget(engine, prog.json, drain_timeout_s=0.0).load_pipeline(prog.json)
    # A packet thread that advances the engine lets the change through.
    target = EngineTarget(engine, prog.json, drain_timeout_s=30.0)
    mover = threading.Timer(0.05, lambda: engine.advance(2_000_000))
    mover.start()
    target.load_pipeline(prog.json)
    mover.join()
    assert [(p, f) for p, f, _ in engine.received()] == [(2, frame())]
    assert engine.table_entries("l2_forward") == []
