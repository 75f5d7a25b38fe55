"""HyStart in the CUBIC host model, through the simulator: one linux-today flow into a
100 Mbit/s bottleneck with one BDP of buffer (10 ms RTT). Linux leaves slow start on
HyStart's delay test near BDP + buffer and loses a handful of segments; without HyStart
the model doubled into the buffer and lost hundreds (the validation against Linux,
experiments/tcp_validation, measured both)."""

import pytest

from bufferlab.experiments.scenario import build_simulation, load_scenario
from bufferlab.experiments.tcp_validation.cells import write_cell
from bufferlab.experiments.tcp_validation.config import MBIT, MS, Cell, ValidationConfig

CONFIG = ValidationConfig(trial_s=2, omit_s=1, lead_s=1)
CELL = Cell(100 * MBIT, 10 * MS, 1.0, False)
#: BDP (125,000 bytes) + the 125,000-byte buffer, in 1,460-byte segments: what the path holds.
PATH_SEGMENTS = 250_000 / 1460


def first_second(tmp_path, **override):
    scenario = load_scenario(write_cell(CELL, CONFIG, tmp_path))
    scenario.tcp_flows[0] = scenario.tcp_flows[0].__class__(
        **{**scenario.tcp_flows[0].__dict__, **override})
    sim = build_simulation(scenario)
    sim.run(2_000_000_000)
    return sim.results().tcp["tcp1"]


def test_hystart_leaves_slow_start_near_what_the_path_holds(tmp_path):
    with_it = first_second(tmp_path / "on")
    without = first_second(tmp_path / "off", hystart=False)
    # With HyStart cwnd peaks within a few segments of the path (Linux measured 169-171
    # segments here); without, slow start runs a round further.
    assert with_it["max_cwnd_bytes"] / 1460 < 1.1 * PATH_SEGMENTS
    assert without["max_cwnd_bytes"] / 1460 > 1.6 * PATH_SEGMENTS
    assert with_it["retransmitted_segments"] < 20
    assert without["retransmitted_segments"] > 10 * with_it["retransmitted_segments"]
    assert with_it["timeouts"] == without["timeouts"] == 0


def test_hystart_is_cubics_and_refused_for_other_algorithms(tmp_path):
    with pytest.raises(ValueError, match="hystart: CUBIC's"):
        first_second(tmp_path, profile="newreno", hystart=True)
    # Off for another algorithm is simply nothing to turn off.
    assert first_second(tmp_path / "reno", profile="newreno", hystart=False)["timeouts"] == 0
