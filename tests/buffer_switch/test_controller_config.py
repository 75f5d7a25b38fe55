"""The controller's output drives the program: the P4Runtime updates `program_updates` makes
from a config file, and a live threshold change, written into the engine by name (as a
P4Runtime server does), give the behaviour the config asks for."""

from pathlib import Path

import pytest
from buffer_switch_helpers import PROGRAM, SLOW_BPS, kinds, on_port, outputs, seq_of, udp_frame
from p4.v1 import p4runtime_pb2
from scapy.layers.l2 import Ether

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.buffer_program import (
    entry_action,
    entry_match,
    program_updates,
    threshold_update,
)
from bufferlab.controller.config import Threshold, load_config, parse_config
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.switch import Engine
from bufferlab.traffic import layers

CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs"
# BMv2's P4Runtime server backs a clone session with several replicas by a hidden
# multicast group 32768 + session id (formats.md, PI pre_clone_mgr).
HIDDEN_GROUP_BASE = 32768


@pytest.fixture(scope="module")
def index() -> P4InfoIndex:
    _json, p4info = compile_p4(PROGRAM)
    return P4InfoIndex(p4info)


def write(engine: Engine, index: P4InfoIndex, updates: list[p4runtime_pb2.Update]) -> None:
    """Each update done to the engine by BMv2 names, as a P4Runtime server does it."""
    for update in updates:
        kind = update.entity.WhichOneof("entity")
        if kind == "table_entry":
            entry = update.entity.table_entry
            table = index.by_id(entry.table_id).preamble.name
            action, params = entry_action(index, entry)
            if entry.is_default_action:
                engine.table_set_default(table, action, params)
            elif update.type == p4runtime_pb2.Update.INSERT:
                engine.table_add(table, entry_match(index, entry), action, params)
            else:
                handle = engine.table_find(table, entry_match(index, entry))
                engine.table_modify(table, handle, action, params)
            continue
        pre = update.entity.packet_replication_engine_entry
        if pre.WhichOneof("type") == "multicast_group_entry":
            group = pre.multicast_group_entry
            engine.mc_group_set(group.multicast_group_id,
                                [(r.egress_port, r.instance) for r in group.replicas])
        else:
            session = pre.clone_session_entry
            replicas = [(r.egress_port, r.instance) for r in session.replicas]
            if len(replicas) == 1:
                engine.clone_session_set(session.session_id, port=replicas[0][0])
            else:
                hidden = HIDDEN_GROUP_BASE + session.session_id
                engine.mc_group_set(hidden, replicas)
                engine.clone_session_set(session.session_id, mcast_grp=hidden)


def test_a_live_threshold_change_takes_effect_on_the_next_frames(program_json, index):
    config = parse_config({
        "switch_id": 1, "pool_bytes": 10_240, "ports": {"1": {}, "3": {"threshold": "50%"}},
        "forwarding": {"l2": [{"mac": "08:00:00:00:01:03", "port": 3}]}})
    engine = Engine(program_json, seed=1, pool_bytes=config.pool_bytes)
    write(engine, index, program_updates(index, config))
    engine.configure_port(3, rate_bps=SLOW_BPS)
    engine.pause(3, 0xFF, 10**9)  # hold port 3 so the occupancy is exactly what was sent
    dst = "08:00:00:00:01:03"
    for seq in range(8):  # 50 % of 10,240 B: five 1,024-byte frames
        engine.send(1, udp_frame("08:00:00:00:01:01", dst, 1024, seq=seq), 1000 + seq)
    assert engine.register_read("port_occupancy", 3) == 5 * 1024
    assert engine.counter_read("port_drops", 3) == (3, 3 * 1024)

    write(engine, index, [threshold_update(index, 3, Threshold(percent=100))])
    for seq in range(8, 16):  # room for five more
        engine.send(1, udp_frame("08:00:00:00:01:01", dst, 1024, seq=seq), 2000 + seq)
    assert engine.register_read("port_occupancy", 3) == 10 * 1024
    assert engine.counter_read("port_drops", 3) == (6, 6 * 1024)
    engine.drain()
    assert [seq_of(f) for f in on_port(outputs(engine), 3)] == [*range(5), *range(8, 13)]


def test_seed_001_config_pauses_the_source_that_crosses_xoff_and_sends_bcn(program_json, index):
    config = load_config(CONFIGS / "seed001_bcn_8023x.json")
    engine = Engine(program_json, seed=1, pool_bytes=config.pool_bytes)
    write(engine, index, program_updates(index, config))
    engine.configure_port(5, rate_bps=SLOW_BPS)
    sink = "08:00:00:00:01:05"
    # S1..S4 take turns, 1,500-byte frames 1 ns apart into a 10 Mb/s port 5: frame 0 starts
    # out at once, frame i leaves 1,500·i bytes queued, so frame 94 (from port 1 + 94 % 4 = 3)
    # is the first to reach XOFF 140,800 B.
    for seq in range(160):
        port = 1 + seq % 4
        engine.send(port, udp_frame(f"08:00:00:00:01:0{port}", sink, 1500, seq=seq), 1000 + seq)
    engine.drain()
    frames = outputs(engine)
    paused_order = [port for port, kind in kinds(frames) if kind == "pause 0xffff"]
    assert paused_order[0] == 3
    assert sorted(set(paused_order)) == [1, 2, 3, 4]
    for port in (1, 2, 3, 4):
        assert kinds(frames).count((port, "pause 0x0000")) == 1  # released once drained
    # 240,000 B fit the 1 MiB pool: nothing dropped (the sources here do not obey PAUSE).
    assert kinds(frames).count((5, "data")) == 160
    assert engine.counter_read("port_drops", 5) == (0, 0)
    bcn = [(port, Ether(frame)) for port, frame, _t in frames if Ether(frame).haslayer(layers.BCN)]
    assert bcn
    for port, frame in bcn:
        header = frame[layers.BCN]
        assert header.cpid == layers.make_cpid(1, 5, 0) and header.fb < 0
        assert frame.dst == f"08:00:00:00:01:0{port}"  # back to the sampled frame's source
