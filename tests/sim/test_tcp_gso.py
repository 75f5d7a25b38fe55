"""A TCP flow's ``gso`` from a scenario file: one linux-today flow into a 100 Mbit/s
bottleneck with a quarter BDP of buffer (10 ms RTT), its sender's NIC at 1 Gbit/s (the
validation cell where Linux's GSO bursts were found). With the profile's GSO the sender
puts about a millisecond of its rate on its link at once (Linux: 6-10 frames about 1 ms
apart); with ``"gso": false`` it sends a segment or two per ACK, at the pace the
bottleneck returns them. ``"gso": true`` gives a newreno flow the same bursts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bufferlab.experiments.scenario import ScenarioError, build_simulation, load_scenario
from bufferlab.experiments.tcp_validation.cells import write_cell
from bufferlab.experiments.tcp_validation.config import MBIT, MS, Cell, ValidationConfig

CONFIG = ValidationConfig(trial_s=2, omit_s=0, lead_s=1)
CELL = Cell(100 * MBIT, 10 * MS, 0.25, False)
#: Sampling of the sender's link: 100 µs carries at most 8 full frames at 1 Gbit/s.
SAMPLE_NS = 100_000
FRAME_BYTES = 1514
#: Measured after slow start: from 1.5 s (0.5 s after the flow's start) to the end.
WINDOW_NS = (1_500_000_000, 3_000_000_000)


def scenario_file(directory: Path, **flow: Any) -> Path:
    """The cell's scenario with ``flow``'s keys added to its TCP flow, sampled every
    SAMPLE_NS."""
    path = write_cell(CELL, CONFIG, directory)
    data = json.loads(path.read_text())
    data["tcp_flows"][0].update(flow)
    data["record"] = {"interval_ns": SAMPLE_NS}
    path.write_text(json.dumps(data))
    return path


def sender_frames_per_sample(directory: Path, **flow: Any) -> tuple[np.ndarray, dict]:
    """Full frames the sender put on its link in each sample of WINDOW_NS, and its
    flow's counters."""
    sim = build_simulation(load_scenario(scenario_file(directory, **flow)))
    sim.run(WINDOW_NS[1])
    results = sim.results()
    (series,) = [name for name in results.series
                 if name.startswith("link/snd>") and name.endswith("/bytes")]
    times = results.times_ns
    inside = (times > WINDOW_NS[0]) & (times <= WINDOW_NS[1])
    sent = np.diff(results.series[series])[inside[1:]]
    return sent / FRAME_BYTES, results.tcp["tcp1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[np.ndarray, dict]]:
    """The cell run with the profile's GSO and with ``"gso": false``."""
    base = tmp_path_factory.mktemp("gso")
    return {"profile": sender_frames_per_sample(base / "profile"),
            "off": sender_frames_per_sample(base / "off", gso=False)}


def test_linux_today_sends_bursts_and_gso_false_sends_per_ack(runs):
    bursts, on = runs["profile"]
    per_ack, off = runs["off"]
    # Both kept the bottleneck busy: the same bytes left, in different shapes.
    assert abs(bursts.sum() - per_ack.sum()) < 0.1 * per_ack.sum()
    # A GSO buffer (~9 frames here) leaves back to back: 100-µs samples holding 6 or more
    # frames are common; per ACK, a sample holds what one or two ACKs release.
    assert np.count_nonzero(bursts >= 6) > 100
    assert np.count_nonzero(per_ack >= 6) == 0
    assert per_ack.max() <= 4
    # The bursts leave the link idle between them: more empty samples with GSO.
    assert np.count_nonzero(bursts < 0.5) > 1.3 * np.count_nonzero(per_ack < 0.5)
    assert on["timeouts"] == off["timeouts"] == 0


def test_gso_true_gives_a_newreno_flow_the_bursts(tmp_path):
    newreno, _ = sender_frames_per_sample(tmp_path, profile="newreno")
    bursting, _ = sender_frames_per_sample(tmp_path / "on", profile="newreno", gso=True)
    assert np.count_nonzero(newreno >= 6) == 0
    assert np.count_nonzero(bursting >= 6) > 100


@pytest.mark.parametrize("value", ["off", "false", 0])
def test_a_gso_that_is_not_true_or_false_is_refused_naming_the_key(tmp_path, value):
    with pytest.raises(ScenarioError) as error:
        load_scenario(scenario_file(tmp_path, gso=value))
    assert str(error.value) == f"tcp_flows[0].gso: must be true or false, not {value!r}"
