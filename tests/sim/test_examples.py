"""The worked example of sim/README.md: `bufferlab.sim.examples.QcnReaction` on its own, in a
scenario that names it by class path, and with the README's P4 change (a QCN-style
congestion point) applied to a copy of p4src/."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bufferlab.experiments.scenario import build_simulation, parse_scenario
from bufferlab.sim.examples import QcnReaction, bcn_feedback

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "experiments" / "bcn" / "scenarios"
TEN_GBIT = 10_000_000_000


class Context:
    """What a model sees of its source, recorded (a stand-in for ReactionContext)."""

    def __init__(self, now_ns: int = 0) -> None:
        self.now_ns = now_ns
        self.line_rate_bps = TEN_GBIT
        self.rate_bps: int | None = None
        self.rates: list[float | None] = []
        self.timers: list[tuple[int, int]] = []

    def set_rate_bps(self, rate: float | None) -> None:
        self.rate_bps = None if rate is None else round(rate)
        self.rates.append(rate)

    def set_timer(self, at_ns: int, token: int = 0) -> None:
        self.timers.append((at_ns, token))


def bcn(fb: int, ethertype: int = 0x88B5) -> bytes:
    """A BCN frame with feedback ``fb`` pages from CPID 0x1_0005_0000, no sample."""
    header = struct.pack("!BBQhhiIH", 0, 0, 0x1_0005_0000, 0, 0, fb, 0, 0)
    return bytes(12) + struct.pack("!H", ethertype) + header


def test_bcn_feedback_reads_the_frame():
    assert bcn_feedback(bcn(-77)) == (0x1_0005_0000, -77)
    assert bcn_feedback(bcn(-77, ethertype=0x0800)) is None
    assert bcn_feedback(bcn(-77)[:30]) is None


def test_a_cut_is_gd_times_the_6_bit_feedback_and_the_timer_recovers_in_halves():
    model = QcnReaction(timer_ns=100_000, fb_shift=5)
    ctx = Context(now_ns=1_000)
    # |Fb| 320 pages >> 5 = 10: CR = 10 Gbit/s × (1 − 10/128).
    model.on_feedback(ctx, bcn(-320))
    assert ctx.rates == [9_218_750_000.0]
    assert ctx.timers == [(101_000, 1)]
    # Fast recovery halves the gap to TR = 10 Gbit/s each cycle: 781.25 Mbit/s / 2^k;
    # below 1 bit/s after 30 cycles, when the limiter comes off.
    for k in range(1, 31):
        ctx.now_ns = 1_000 + k * 100_000
        model.on_timer(ctx, 1)
    assert ctx.rates[1] == 9_609_375_000.0
    assert ctx.rates[29] == pytest.approx(TEN_GBIT - 781_250_000 / 2**29)
    assert ctx.rates[30] is None
    assert len(ctx.timers) == 30  # none re-armed after the last cycle
    assert (model.cuts, model.timer_calls, model.recoveries) == (1, 30, 1)


def test_active_increase_raises_the_target_after_five_cycles_and_stale_timers_do_nothing():
    model = QcnReaction(timer_ns=1_000, fb_shift=0, rai_bps=5e6)
    ctx = Context()
    model.on_feedback(ctx, bcn(-63))     # CR = 10 G × 65/128 = 5.078125 G, TR = 10 G
    model.on_feedback(ctx, bcn(-100))    # q saturates at 63: TR = 5.078125 G, CR × 65/128
    assert ctx.rates == [5_078_125_000.0, 5_078_125_000.0 * 65 / 128]
    model.on_timer(ctx, 1)               # the first cut's timer: superseded
    assert len(ctx.rates) == 2
    for _ in range(6):
        model.on_timer(ctx, 2)
    target, low = 5_078_125_000.0, 5_078_125_000.0 * 65 / 128
    fifth = target - (target - low) / 32
    assert ctx.rates[6] == pytest.approx(fifth)
    assert ctx.rates[7] == pytest.approx((fifth + target + 5e6) / 2)


def test_positive_feedback_and_other_frames_change_nothing():
    model = QcnReaction()
    ctx = Context()
    model.on_feedback(ctx, bcn(500))
    model.on_feedback(ctx, bcn(-31))  # 31 >> 5 = 0: below the first step
    model.on_feedback(ctx, bcn(-500, ethertype=0x0800))
    assert ctx.rates == [] and ctx.timers == []
    with pytest.raises(ValueError):
        QcnReaction(gd=1 / 50)


def _scenario_data(reaction: dict[str, Any] | None, stop_ns: int, duration_ns: int,
                   program: Path | None = None) -> dict[str, Any]:
    data = json.loads((SCENARIOS / "seed003_50pct.json").read_text())
    for source in data["sources"]:
        source["stop_ns"] = stop_ns
        source["reaction"] = reaction
    data["duration_ns"] = duration_ns
    if program is not None:
        data["switches"]["s1"]["program"] = str(program)
    return data


QCN_ARGS = {"timer_ns": 100_000, "rai_bps": 2e8}


def test_the_example_in_a_scenario_cuts_the_rate_and_its_timer_restores_it():
    reaction = {"model": "python", "class": "bufferlab.sim.examples:QcnReaction",
                "args": {**QCN_ARGS, "fb_shift": 5}}
    # Sources from 5 ms to 10 ms, then 10 ms for the timers to bring the rates back.
    scenario = parse_scenario(_scenario_data(reaction, 10_000_000, 20_000_000), SCENARIOS)
    sim = build_simulation(scenario)
    sim.run(scenario.duration_ns)
    results = sim.results()
    times = results.times_ns
    for source in sim.sources:
        model = source.reaction
        assert isinstance(model, QcnReaction)
        rate = results.series[f"source/{source.name}/rate_bps"]
        assert rate.min() < 0.5 * TEN_GBIT
        assert model.cuts == results.sources[source.name]["feedback_frames"] > 0
        # The sources stopped at 10 ms; their queues drained soon after, and with them the
        # feedback. From the last cut on only the timer moved the rate: up, step by step,
        # back to line rate.
        last_cut = int(np.flatnonzero(np.diff(rate) < 0)[-1]) + 1
        assert times[last_cut] < 13_000_000
        assert rate[last_cut] < 0.5 * TEN_GBIT
        assert np.all(np.diff(rate[last_cut:]) >= 0)
        assert rate[-1] == TEN_GBIT
        assert results.series[f"source/{source.name}/rlq_bytes"][-1] == 0
        assert model.timer_calls >= model.fast_recovery_cycles
        assert model.recoveries >= 1
        assert results.sources[source.name]["rate_bps"] == TEN_GBIT


class RecordingQcn(QcnReaction):
    """QcnReaction that keeps the Fb of every BCN it received."""

    def __init__(self, **args: Any) -> None:
        super().__init__(**args)
        self.feedback: list[int] = []

    def on_feedback(self, ctx, frame):
        parsed = bcn_feedback(frame)
        if parsed is not None:
            self.feedback.append(parsed[1])
        super().on_feedback(ctx, frame)


def _readme_diff() -> str:
    text = (ROOT / "sim" / "README.md").read_text()
    diffs = re.findall(r"```diff\n(.*?)```", text, flags=re.S)
    assert len(diffs) == 1
    return diffs[0]


def _feedback_seen(program: Path | None, fb_shift: int) -> list[int]:
    scenario = parse_scenario(_scenario_data(None, 10_000_000, 10_000_000, program), SCENARIOS)
    scenario.sources = [dataclasses.replace(s, reaction=RecordingQcn(fb_shift=fb_shift,
                                                                       **QCN_ARGS))
                        for s in scenario.sources]
    sim = build_simulation(scenario)
    sim.run(scenario.duration_ns)
    return [fb for s in sim.sources for fb in s.reaction.feedback]


def test_the_readme_p4_change_makes_a_cp_of_6_bit_negative_feedback(tmp_path):
    shutil.copytree(ROOT / "p4src", tmp_path / "p4src")
    (tmp_path / "qcn.diff").write_text(_readme_diff())
    patched = subprocess.run(["patch", "-p1", "-i", "qcn.diff"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    assert patched.returncode == 0, patched.stdout + patched.stderr
    assert "QCN_FB_SHIFT" in (tmp_path / "p4src" / "include" / "bcn.p4").read_text()

    stock = _feedback_seen(None, fb_shift=5)
    qcn = _feedback_seen(tmp_path / "p4src" / "buffer_switch.p4", fb_shift=0)
    # The stock CP carries Fb in pages, well beyond 6 bits; the changed one −1..−63 only.
    assert min(stock) < -63
    assert len(qcn) > 20
    assert all(-63 <= fb <= -1 for fb in qcn), sorted(set(qcn))
    assert -63 in qcn
