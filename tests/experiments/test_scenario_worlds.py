"""One scenario file, two worlds: the simulator runs it, and (root) Mininet brings it up
live with the switch programmed from the same controller config."""

import json
import os
import subprocess

import pytest

from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.experiments.common.buffer_engine import compiled_program
from bufferlab.experiments.scenario import load_scenario, run_scenario
from bufferlab.experiments.scenario.live import LiveScenario

RATE_BPS = 10_000_000


def write_scenario(directory):
    """Two hosts on one switch at 10 Mbit/s; h1 sends 2 Mbit/s to h2 for 10 ms."""
    topology = {"hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}},
                "links": [{"a": h, "b": f"s1-p{p}", "rate_bps": RATE_BPS, "delay_ns": 20_000}
                          for h, p in (("h1", 1), ("h2", 2))]}
    config = {"switch_id": 1, "pool_bytes": 65536, "ports": {"1": {}, "2": {}},
              "forwarding": {"l2": [{"mac": "08:00:00:00:01:01", "port": 1},
                                    {"mac": "08:00:00:00:01:02", "port": 2}]}}
    scenario = {"topology": "topology.json", "switches": {"s1": {"config": "s1.json"}},
                "sources": [{"name": "A", "host": "h1", "destination": "h2",
                             "rate_bps": 2_000_000, "sizes_bytes": 1000, "stop_ns": 10_000_000}],
                "record": {"interval_ns": 1_000_000}, "duration_ns": 20_000_000}
    for name, data in (("topology.json", topology), ("s1.json", config),
                       ("scenario.json", scenario)):
        (directory / name).write_text(json.dumps(data))
    return directory / "scenario.json"


def test_the_scenario_runs_in_virtual_time(tmp_path):
    run = run_scenario(load_scenario(write_scenario(tmp_path)))
    # 2 Mbit/s of 1,024-byte wire frames (1,000 + 24) for 10 ms: 2e6 × 0.01 / 8,192 → 3 frames.
    assert run.results.sources["A"]["sent_frames"] == 3
    assert run.results.flows["A"]["frames"] == 3
    # 1,024 wire bytes take 819,200 ns at 10 Mbit/s: the host's link, 20 µs, the switch's
    # port, 20 µs.
    assert run.results.flows["A"]["latency_min_ns"] == 2 * 819_200 + 2 * 20_000


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces")
@pytest.mark.timeout(180)
def test_the_same_scenario_comes_up_live_with_its_config_applied(tmp_path):
    scenario = load_scenario(write_scenario(tmp_path))
    with LiveScenario(scenario, tmp_path / "live") as live:
        assert live.lab is not None
        ping = subprocess.run(["ip", "netns", "exec", live.lab.netns("h1"), "ping", "-c", "3",
                               "-i", "0.2", "-W", "2", "10.0.1.2"],
                              capture_output=True, text=True, check=False)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        # The controller wrote the config's two L2 entries into the live switch.
        l2 = BufferSwitch(live.connections["s1"], compiled_program().index).entries("l2_forward")
        assert len(l2) == 2
    assert live.lab is None
