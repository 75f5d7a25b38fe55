"""Python reaction models: called once per BCN frame a host receives and per timer they
set, at the exact ns; their rate shows in the results; their exceptions stop the run."""

from __future__ import annotations

import numpy as np
import pytest

from bufferlab.experiments.scenario import build_simulation
from bufferlab.sim import ReactionContext

TEN_GBIT = 10_000_000_000
RESTORE_NS = 300_000


class Halver:
    """Halves the rate on every BCN; restores line rate ``RESTORE_NS`` after the last one."""

    ethertypes = (0x88B5,)

    def __init__(self) -> None:
        self.feedback_calls = 0
        self.frames: list[bytes] = []
        self.timers_set: dict[int, int] = {}
        self.timers_fired: list[tuple[int, int]] = []
        self.rates: list[tuple[int, float | None]] = []
        self.context: ReactionContext | None = None

    def on_feedback(self, ctx, frame):
        self.feedback_calls += 1
        self.frames.append(frame)
        self.context = ctx
        rate = max((ctx.rate_bps or ctx.line_rate_bps) / 2, 1e6)
        ctx.set_rate_bps(rate)
        self.rates.append((ctx.now_ns, ctx.rate_bps))
        at = ctx.now_ns + RESTORE_NS
        self.timers_set[self.feedback_calls] = at
        ctx.set_timer(at, self.feedback_calls)

    def on_timer(self, ctx, token):
        self.timers_fired.append((token, ctx.now_ns))
        if token == self.feedback_calls:
            ctx.set_rate_bps(None)
            self.rates.append((ctx.now_ns, None))


class Boom(Exception):
    """What the failing model raises."""


class FailsOnThird(Halver):
    """A Halver that raises on its third BCN."""

    def __init__(self) -> None:
        super().__init__()
        self.raised: Boom | None = None
        self.failed_at_ns = -1

    def on_feedback(self, ctx, frame):
        if self.feedback_calls == 2:
            self.failed_at_ns = ctx.now_ns
            self.raised = Boom("third BCN")
            raise self.raised
        super().on_feedback(ctx, frame)


def _run(seed003, model_class, duration_ns=15_000_000):
    scenario = seed003(duration_ns, stop_ns=duration_ns, reaction=model_class())
    sim = build_simulation(scenario)
    return sim


def test_a_python_model_is_called_per_bcn_and_its_timers_fire_at_the_exact_ns(seed003):
    sim = _run(seed003, Halver)
    sim.run(15_000_000)
    results = sim.results()
    for source in sim.sources:
        model = source.reaction
        host = results.hosts[source.host]
        assert model.feedback_calls > 0
        # One call per BCN frame the host received (one source per host).
        assert model.feedback_calls == host["bcn_frames"]
        assert results.sources[source.name]["feedback_frames"] == host["bcn_frames"]
        assert all(f[12:14] == b"\x88\xb5" for f in model.frames)
        # Every timer set for a time the run reached fired then, with its token.
        due = {token: at for token, at in model.timers_set.items() if at <= 15_000_000}
        assert dict(model.timers_fired) == due
        assert len(model.timers_fired) == len(due) > 0


def test_the_rate_a_model_sets_is_the_rate_the_results_show(seed003):
    sim = _run(seed003, Halver)
    sim.run(15_000_000)
    results = sim.results()
    times = results.times_ns
    for source in sim.sources:
        changes = source.reaction.rates
        assert any(rate is None for _, rate in changes)  # it restored line rate at least once
        series = results.series[f"source/{source.name}/rate_bps"]
        change_times = np.array([t for t, _ in changes])
        expected = []
        for t in times:
            # The last rate set at or before t (line rate before any).
            i = int(np.searchsorted(change_times, t, side="right")) - 1
            rate = changes[i][1] if i >= 0 else None
            expected.append(float(TEN_GBIT if rate is None else rate))
        # Skip samples taken at the very ns of a change (either order is right).
        keep = ~np.isin(times, change_times)
        assert keep.sum() > 100
        np.testing.assert_array_equal(series[keep], np.array(expected)[keep])
        assert series.min() < TEN_GBIT / 2


def test_an_exception_in_a_model_stops_the_run_with_that_exception(seed003):
    sim = _run(seed003, FailsOnThird)
    with pytest.raises(Boom) as caught:
        sim.run(15_000_000)
    failed = [s.reaction for s in sim.sources if s.reaction.raised is not None]
    assert len(failed) == 1
    assert caught.value is failed[0].raised
    # The run stopped at the failing call, long before its end.
    assert sim.now_ns == failed[0].failed_at_ns < 15_000_000


def test_a_reaction_context_used_after_its_call_raises(seed003):
    sim = _run(seed003, Halver, 10_000_000)
    sim.run(10_000_000)
    ctx = sim.sources[0].reaction.context
    assert ctx is not None
    with pytest.raises(RuntimeError, match="valid only during the call"):
        _ = ctx.now_ns
    with pytest.raises(RuntimeError, match="valid only during the call"):
        ctx.set_rate_bps(1e9)
    with pytest.raises(RuntimeError, match="valid only during the call"):
        ctx.set_timer(20_000_000)
