"""experiments/common: buffer_switch.p4 on the engine, programmed by the controller over an
in-process P4Runtime server from the ToR study's controller config."""

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from bufferlab.controller.config import ConfigError, load_config
from bufferlab.experiments.common.buffer_engine import host_mac, programmed_engine, tm_drops
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.switch_config import SEED000_CONFIG, switch_config

# A 10,000-byte pool whose 10 % share still holds the largest frame the grid sends.
SMALL = TorConfig(pool_bytes=10_000, frame_sizes_bytes=(404,), thresholds_pct=(10,),
                  burst_frame_sizes_bytes=(404,), burst_thresholds_pct=(10,))


def test_host_macs_follow_the_tutorials():
    assert host_mac(1, 3) == "08:00:00:00:01:03"
    assert host_mac(2, 12) == "08:00:00:00:02:0c"


def test_the_seed_pool_at_50_percent_is_the_example_config_file():
    assert switch_config(TorConfig(pool_bytes=3_276_800), 50) == load_config(SEED000_CONFIG)


def test_a_threshold_the_controller_rejects_names_the_key():
    with pytest.raises(ConfigError, match=r"ports\.3\.threshold: 150% is above 100%"):
        switch_config(TorConfig(), 150)


def test_a_bad_port_rate_names_the_port():
    with pytest.raises(ValueError, match=r"rate_bps\[3\]: 0 bit/s"):
        programmed_engine(switch_config(SMALL, 10), rate_bps={3: 0})


def test_engine_holds_the_controllers_entries_and_port_model_and_only_the_program_drops():
    engine = programmed_engine(switch_config(SMALL, 10), rate_bps={3: 10_000_000})
    assert engine.port_config(3)["rate_bps"] == 10_000_000
    assert engine.port_config(3)["wire_overhead_bytes"] == 24
    assert engine.table_default("switch_config")[1][:2] == [1, 10_000]
    shares = {e["keys"][0][1]: (e["action"], e["data"])
              for e in engine.table_entries("buffer_threshold")}
    assert shares == {1: ("static_threshold", [100]), 2: ("static_threshold", [100]),
                      3: ("static_threshold", [10])}
    assert sorted(engine.mc_group_get(1)) == [(1, 0), (2, 0), (3, 0)]
    # 10 % of 10,000 B = 1,000 B: the first 400-byte frame leaves at once, two more wait,
    # the fourth finds the share full.
    frame = bytes(Ether(src=host_mac(1, 1), dst=host_mac(1, 3)) / IP(dst="10.0.1.3")
                  / UDP(sport=5000, dport=5000) / Raw(bytes(358)))
    assert len(frame) == 400
    for i in range(4):
        engine.send(1, frame, 1000 + i)
    engine.drain()
    assert [p for p, _f, _t in engine.received()] == [3, 3, 3]
    assert engine.counter_read("port_drops", 3) == (1, 400)
    assert tm_drops(engine) == 0
    assert engine.stats()["pool_used_bytes"] == 0


def test_wire_overhead_is_set_on_shaped_ports():
    engine = programmed_engine(switch_config(SMALL, 10),
                               rate_bps={3: 10_000_000}, wire_overhead_bytes=0)
    assert engine.port_config(3)["wire_overhead_bytes"] == 0
    assert engine.port_config(3)["rate_bps"] == 10_000_000
