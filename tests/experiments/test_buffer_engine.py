"""experiments/common: buffer_switch.p4 on the engine, programmed from parameters."""

import pytest

from bufferlab.experiments.common.buffer_engine import (
    BufferSwitchSetup,
    host_mac,
    programmed_engine,
    tm_drops,
)
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.virtual_time import VirtualTimeBackend


def test_host_macs_follow_the_tutorials():
    assert host_mac(1, 3) == "08:00:00:00:01:03"
    assert host_mac(2, 12) == "08:00:00:00:02:0c"


@pytest.mark.parametrize("kwargs, message", [
    ({"pool_bytes": 0}, "pool_bytes: 0"),
    ({"threshold_pct": {3: 0}}, r"threshold_pct\[3\]: 0"),
    ({"rate_bps": {3: 0}}, r"rate_bps\[3\]: 0"),
])
def test_bad_setups_name_the_parameter(kwargs, message):
    values = {"pool_bytes": 1000, "hosts": {}} | kwargs
    with pytest.raises(ValueError, match=message):
        BufferSwitchSetup(**values)


def test_engine_gets_entries_and_port_model_and_only_the_program_drops():
    setup = BufferSwitchSetup(pool_bytes=10_000, hosts={1: host_mac(1, 1), 3: host_mac(1, 3)},
                              threshold_pct={3: 10}, rate_bps={3: 10_000_000})
    engine = programmed_engine(setup)
    assert engine.port_config(3)["rate_bps"] == 10_000_000
    assert engine.table_default("switch_config")[1][1] == 10_000
    assert [e["action"] for e in engine.table_entries("buffer_threshold")] == ["static_threshold"]
    assert engine.table_entries("buffer_threshold")[0]["data"] == [10]
    assert sorted(engine.mc_group_get(1)) == [(1, 0), (3, 0)]
    # 10 % of 10,000 B = 1,000 B: the first 400-byte frame leaves at once, two more wait,
    # the fourth finds the share full.
    frame = bytes(VirtualTimeBackend(TorConfig()).frame(404, 0))
    for i in range(4):
        engine.send(1, frame, 1000 + i)
    engine.drain()
    assert [p for p, _f, _t in engine.received()] == [3, 3, 3]
    assert engine.counter_read("port_drops", 3) == (1, 400)
    assert tm_drops(engine) == 0
    assert engine.stats()["pool_used_bytes"] == 0


def test_wire_overhead_is_set_on_shaped_ports():
    setup = BufferSwitchSetup(pool_bytes=10_000, hosts={}, rate_bps={3: 10_000_000},
                              wire_overhead_bytes=0)
    engine = programmed_engine(setup)
    assert engine.port_config(3)["wire_overhead_bytes"] == 0
    assert engine.port_config(3)["rate_bps"] == 10_000_000
