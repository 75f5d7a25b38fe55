"""The controller's output drives the program: a config file applied with `BufferSwitch`
through the P4Runtime server in front of the engine, and a live threshold change, give the
behaviour the config asks for."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from buffer_switch_helpers import PROGRAM, SLOW_BPS, kinds, on_port, outputs, seq_of, udp_frame
from scapy.layers.l2 import Ether

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.config import Config, Threshold, load_config, parse_config
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.switch import Engine
from bufferlab.switch.p4runtime import serve
from bufferlab.switch.target import EngineTarget
from bufferlab.traffic import layers

CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs"


@pytest.fixture(scope="module")
def index() -> P4InfoIndex:
    _json, p4info = compile_p4(PROGRAM)
    return P4InfoIndex(p4info)


@contextmanager
def applied(program_json: str, index: P4InfoIndex, config: Config
            ) -> Iterator[tuple[Engine, BufferSwitch]]:
    """An engine behind a P4Runtime server, with `config` applied by the controller."""
    engine = Engine(program_json, seed=1, pool_bytes=config.pool_bytes)
    server = serve(EngineTarget(engine, program_json), 0, "127.0.0.1:0")
    try:
        with SwitchConnection(f"127.0.0.1:{server.port}") as connection:
            assert connection.connect()
            switch = BufferSwitch(connection, index)
            switch.apply(config, program_json.encode())
            yield engine, switch
    finally:
        server.stop(0)


def test_a_live_threshold_change_takes_effect_on_the_next_frames(program_json, index):
    config = parse_config({
        "switch_id": 1, "pool_bytes": 10_240, "ports": {"1": {}, "3": {"threshold": "50%"}},
        "forwarding": {"l2": [{"mac": "08:00:00:00:01:03", "port": 3}]}})
    with applied(program_json, index, config) as (engine, switch):
        engine.configure_port(3, rate_bps=SLOW_BPS)
        engine.pause(3, 0xFF, 10**9)  # hold port 3 so the occupancy is exactly what was sent
        dst = "08:00:00:00:01:03"
        for seq in range(8):  # 50 % of 10,240 B: five 1,024-byte frames
            engine.send(1, udp_frame("08:00:00:00:01:01", dst, 1024, seq=seq), 1000 + seq)
        assert engine.register_read("port_occupancy", 3) == 5 * 1024
        assert engine.counter_read("port_drops", 3) == (3, 3 * 1024)

        switch.set_threshold(3, Threshold(percent=100))
        for seq in range(8, 16):  # room for five more
            engine.send(1, udp_frame("08:00:00:00:01:01", dst, 1024, seq=seq), 2000 + seq)
        assert engine.register_read("port_occupancy", 3) == 10 * 1024
        assert engine.counter_read("port_drops", 3) == (6, 6 * 1024)
        engine.drain()
        assert [seq_of(f) for f in on_port(outputs(engine), 3)] == [*range(5), *range(8, 13)]


def run_seed_001(engine: Engine) -> list[tuple[int, bytes, int]]:
    """S1..S4 take turns sending 160 1,500-byte frames 1 ns apart to S5; what came out."""
    sink = "08:00:00:00:01:05"
    for seq in range(160):
        port = 1 + seq % 4
        engine.send(port, udp_frame(f"08:00:00:00:01:0{port}", sink, 1500, seq=seq), 1000 + seq)
    engine.drain()
    return outputs(engine)


def test_seed_001_config_pauses_the_source_that_crosses_xoff_and_sends_bcn(program_json, index):
    config = load_config(CONFIGS / "seed001_bcn_8023x.json")
    with applied(program_json, index, config) as (engine, _switch):
        engine.configure_port(5, rate_bps=SLOW_BPS)
        frames = run_seed_001(engine)
        assert engine.counter_read("port_drops", 5) == (0, 0)
    # Into a 10 Mb/s port 5, frame 0 starts out at once and frame i leaves 1,500·i bytes
    # queued, so frame 94 (from port 1 + 94 % 4 = 3) is the first to reach XOFF 140,800 B.
    paused_order = [port for port, kind in kinds(frames) if kind == "pause 0xffff"]
    assert paused_order[0] == 3
    assert sorted(set(paused_order)) == [1, 2, 3, 4]
    for port in (1, 2, 3, 4):
        assert kinds(frames).count((port, "pause 0x0000")) == 1  # released once drained
    # 240,000 B fit the 1 MiB pool: nothing dropped (the sources here do not obey PAUSE).
    assert kinds(frames).count((5, "data")) == 160
    bcn = [(port, Ether(frame)) for port, frame, _t in frames if Ether(frame).haslayer(layers.BCN)]
    assert bcn
    for port, frame in bcn:
        header = frame[layers.BCN]
        assert header.cpid == layers.make_cpid(1, 5, 0) and header.fb < 0
        assert frame.dst == f"08:00:00:00:01:0{port}"  # back to the sampled frame's source
