"""The seed's findings as PASS/FAIL lines, each printing our figure beside the seed's.

1. QBSS alone takes at least 90 % of the bottleneck (seed: over 90 %).
2. With BE (first setting, QBSS 1 % / priority 70 %), QBSS gets at most 5 % and BE at
   least 85 % of the bottleneck (seed: about 5 and 87).
3. In every phase the active classes share the port as their weights say, within 5 points
   (seed, priority active: about 70 / 19 / 1).
4. Every change settles within 2 s (seed: "< 1-2 seconds").
5. Between changes, the total stays within 10 % of the bottleneck in every 3-s interval
   ("pretty constant"), the bottleneck being what it carries as TCP payload (94 % of its
   line rate). An interval that overlaps a change's first 2 s is check 4's to judge: a
   class that must take the link back needs a moment (the report shows those too).
6. Beside a bulk flow of another class, priority's ping RTT stays within 2× its idle value,
   while the bulk flow's own class sees the queue (more than 2× idle). Both bounds add the
   time of one full-size frame on the bottleneck: no scheduler takes the wire from a frame
   already on it, and at 100 Mbit/s that frame (123 µs) is as long as the idle RTT of two
   namespaces on one machine. RTT here is the median of the pings: a host that holds a few
   replies back moves the average of every class at once, not what the queues did.
7. Every trial lost frames only at the configured admission (the emulator kept up).

A check the run's data cannot evaluate fails and says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.qbss.backend import PhaseTrial, PingTrial
from bufferlab.experiments.qbss.config import CLASSES, FIRST_WEIGHTS, PRIORITY, PhaseRun
from bufferlab.experiments.qbss.evaluation import (
    SETTLE_ALLOWANCE_S,
    RunSeries,
    frame_time_s,
    goodput_capacity_bps,
)

QBSS_ALONE_MIN_PCT = 90.0
QBSS_WITH_BE_MAX_PCT = 5.0
BE_WITH_QBSS_MIN_PCT = 85.0
WEIGHT_TOLERANCE_POINTS = 5.0
SETTLE_MAX_S = 2.0
TOTAL_TOLERANCE = 0.10
PRIORITY_PING_MAX_OVER_IDLE = 2.0
QUEUED_PING_MIN_OVER_IDLE = 2.0


def _first_setting(rows: Sequence[dict], runs: Sequence[PhaseRun], phases: set[int]
                   ) -> list[dict]:
    first = {r.name for r in runs if r.weights_pct == FIRST_WEIGHTS}
    return [r for r in rows if r["run"] in first and r["phase"] in phases]


def _where(row: dict) -> str:
    return f"{row['run']} phase {row['phase']}"


def check_qbss_alone(phase_rows: Sequence[dict], runs: Sequence[PhaseRun]) -> Check:
    """QBSS alone (phases 1 and 5, first setting) takes ≥ 90 % of the bottleneck."""
    name = f"QBSS alone takes ≥ {QBSS_ALONE_MIN_PCT:g} % of the bottleneck"
    rows = _first_setting(phase_rows, runs, {1, 5})
    if not rows:
        return Check(name, False, "cannot evaluate: no run with the first setting (QBSS 1 %, "
                                  "priority 70 %)")
    worst = min(rows, key=lambda r: r["qbss_pct_of_bottleneck"])
    value = worst["qbss_pct_of_bottleneck"]
    return Check(name, value >= QBSS_ALONE_MIN_PCT,
                 f"lowest {value:.1f} % ({_where(worst)}; {len(rows)} phases); seed: > 90 %")


def check_be_takes_over(phase_rows: Sequence[dict], runs: Sequence[PhaseRun]) -> Check:
    """With BE (phases 2 and 4, first setting): QBSS ≤ 5 %, BE ≥ 85 % of the bottleneck."""
    name = (f"with BE, QBSS ≤ {QBSS_WITH_BE_MAX_PCT:g} % and BE ≥ {BE_WITH_QBSS_MIN_PCT:g} % "
            "of the bottleneck")
    rows = _first_setting(phase_rows, runs, {2, 4})
    if not rows:
        return Check(name, False, "cannot evaluate: no run with the first setting (QBSS 1 %, "
                                  "priority 70 %)")
    most_qbss = max(rows, key=lambda r: r["qbss_pct_of_bottleneck"])
    least_be = min(rows, key=lambda r: r["be_pct_of_bottleneck"])
    q, b = most_qbss["qbss_pct_of_bottleneck"], least_be["be_pct_of_bottleneck"]
    return Check(name, q <= QBSS_WITH_BE_MAX_PCT and b >= BE_WITH_QBSS_MIN_PCT,
                 f"QBSS at most {q:.1f} % ({_where(most_qbss)}), BE at least {b:.1f} % "
                 f"({_where(least_be)}); seed: about 5 and 87 %")


def check_weights(phase_rows: Sequence[dict]) -> Check:
    """Every phase: each class's share of the port within 5 points of its weight's share."""
    name = f"the shares follow the configured weights within {WEIGHT_TOLERANCE_POINTS:g} points"
    worst, worst_off = None, -1.0
    for row in phase_rows:
        for c in CLASSES:
            off = abs(row[f"{c.name}_share_pct"] - row[f"{c.name}_weight_share_pct"])
            if math.isnan(off):
                off = math.inf
            if off > worst_off:
                worst, worst_off = (row, c), off
    if worst is None:
        return Check(name, False, "cannot evaluate: no phase measured")
    row, c = worst
    return Check(name, worst_off <= WEIGHT_TOLERANCE_POINTS,
                 f"worst {c.label} in {_where(row)}: {row[f'{c.name}_share_pct']:.1f} % for "
                 f"{row[f'{c.name}_weight_share_pct']:.1f} % ({len(phase_rows)} phases); seed, "
                 "priority active: 70 / 19 / 1 % of 10 Mbit/s")


def check_settling(transition_rows: Sequence[dict]) -> Check:
    """Every change: the new shares hold within 2 s (1-s intervals)."""
    name = f"each change settles within {SETTLE_MAX_S:g} s"
    if not transition_rows:
        return Check(name, False, "cannot evaluate: no change measured")
    slowest = max(transition_rows, key=lambda r: math.inf if math.isnan(r["settle_s"])
                  else r["settle_s"])
    value = slowest["settle_s"]
    shown = "never settled" if math.isnan(value) else f"{value:g} s"
    return Check(name, not math.isnan(value) and value <= SETTLE_MAX_S,
                 f"slowest {shown} ({slowest['run']}, {slowest['change']}; "
                 f"{len(transition_rows)} changes); seed: < 1-2 s")


def _at_a_change(series: RunSeries, start_s: float) -> bool:
    """Whether the interval from ``start_s`` overlaps the first 2 s after one of the changes."""
    end_s = start_s + series.interval_s
    return any(start_s < c + SETTLE_ALLOWANCE_S and c < end_s for c in series.changes_s)


def check_total(series_3s: Sequence[RunSeries], bottleneck_bps: int) -> Check:
    """Every 3-s interval between changes: the total within 10 % of what the bottleneck
    carries as TCP payload (goodput compared with goodput, not with the line rate)."""
    name = f"the total stays within {100 * TOTAL_TOLERANCE:g} % of the bottleneck"
    capacity = goodput_capacity_bps(bottleneck_bps)
    steady, changing = [], []
    for s in series_3s:
        for t, v in zip(s.start_s, s.total_bps, strict=True):
            (changing if _at_a_change(s, float(t)) else steady).append(
                (s.run.name, float(t), float(v)))
    if not steady:
        return Check(name, False, "cannot evaluate: no 3-s interval between changes")
    worst = max(steady, key=lambda b: abs(b[2] - capacity))
    off = abs(worst[2] - capacity) / capacity
    detail = (f"furthest {worst[2] / 1e6:.2f} Mbit/s, {100 * worst[2] / capacity:.1f} % of the "
              f"{capacity / 1e6:.2f} Mbit/s TCP carries over {bottleneck_bps / 1e6:g} Mbit/s "
              f"({worst[0]} at {worst[1]:g} s; {len(steady)} intervals of 3 s)")
    if changing:
        low = min(changing, key=lambda b: b[2])
        detail += (f"; at the changes lowest {100 * low[2] / capacity:.1f} % ({low[0]} at "
                   f"{low[1]:g} s)")
    return Check(name, off <= TOTAL_TOLERANCE, detail + "; seed: pretty constant")


def check_priority_ping(ping_rows: Sequence[dict], rate_bps: int) -> Check:
    """Beside bulk traffic of another class, priority's median ping RTT stays within 2× its
    idle median plus one full-size frame on the bottleneck."""
    frame_ms = 1e3 * frame_time_s(rate_bps)
    name = (f"priority's ping RTT stays within {PRIORITY_PING_MAX_OVER_IDLE:g}× idle "
            f"(+ one frame, {frame_ms:.3f} ms) beside a bulk flow of another class")
    rows = [r for r in ping_rows if r["ping_class"] == PRIORITY.label
            and r["bulk_class"] not in ("none", PRIORITY.label)]
    if not rows:
        return Check(name, False, "cannot evaluate: no ping trial with a bulk flow outside "
                                  "priority")
    worst = max(rows, key=lambda r: r["rtt_median_ms"] - PRIORITY_PING_MAX_OVER_IDLE
                * r["idle_rtt_median_ms"])
    bound = PRIORITY_PING_MAX_OVER_IDLE * worst["idle_rtt_median_ms"] + frame_ms
    return Check(name, all(r["rtt_median_ms"] <= PRIORITY_PING_MAX_OVER_IDLE
                           * r["idle_rtt_median_ms"] + frame_ms for r in rows),
                 f"median {worst['rtt_median_ms']:.3f} ms beside {worst['bulk_class']} bulk "
                 f"({worst['rtt_median_over_idle']:.2f}× the idle {worst['idle_rtt_median_ms']:.3f}"
                 f" ms; bound {bound:.3f} ms)")


def check_queued_ping(ping_rows: Sequence[dict], rate_bps: int) -> Check:
    """The bulk flow's own class sees the queue: its median ping RTT is above 2× its idle
    median plus one full-size frame on the bottleneck."""
    frame_ms = 1e3 * frame_time_s(rate_bps)
    name = (f"the bulk flow's own class waits in the queue (ping RTT above "
            f"{QUEUED_PING_MIN_OVER_IDLE:g}× idle + one frame)")
    rows = [r for r in ping_rows if r["ping_class"] == r["bulk_class"]]
    if not rows:
        return Check(name, False, "cannot evaluate: no ping trial with a bulk flow")
    least = min(rows, key=lambda r: r["rtt_median_ms"] - QUEUED_PING_MIN_OVER_IDLE
                * r["idle_rtt_median_ms"])
    bound = QUEUED_PING_MIN_OVER_IDLE * least["idle_rtt_median_ms"] + frame_ms
    return Check(name, all(r["rtt_median_ms"] > QUEUED_PING_MIN_OVER_IDLE
                           * r["idle_rtt_median_ms"] + frame_ms for r in rows),
                 f"median at least {least['rtt_median_ms']:.3f} ms ({least['bulk_class']} bulk; "
                 f"{least['rtt_median_over_idle']:.1f}× idle; bound {bound:.3f} ms)")


def check_valid(phase_trials: Sequence[PhaseTrial], ping_trials: Sequence[PingTrial]) -> Check:
    """Every trial lost frames only at the P4 program's admission (after at most one rerun)."""
    name = "the emulator was not the bottleneck (frames lost only at admission)"
    trials = [(t.run.name, t.accounting, t.reruns) for t in phase_trials] + \
             [(f"ping beside {t.bulk or 'no'} bulk", t.accounting, t.reruns) for t in ping_trials]
    if not trials:
        return Check(name, False, "cannot evaluate: no trial ran")
    bad = [(n, a) for n, a, _ in trials if not a.valid]
    if bad:
        return Check(name, False, "; ".join(f"{n}: {a.describe()}" for n, a in bad))
    admitted = sum(a.admission_drops for _, a, _ in trials)
    reruns = sum(len(r) for *_, r in trials)
    return Check(name, True, f"{len(trials)} trials, {admitted} frames dropped by admission, "
                             f"none elsewhere ({reruns} attempts run again)")


def run_checks(phase_rows: Sequence[dict], runs: Sequence[PhaseRun],
               transition_rows: Sequence[dict], series_3s: Sequence[RunSeries],
               bottleneck_bps: int, ping_rows: Sequence[dict], ping_bottleneck_bps: int,
               phase_trials: Sequence[PhaseTrial], ping_trials: Sequence[PingTrial]
               ) -> list[Check]:
    """Every check that the run's parts allow (the phase checks need runs, the ping checks
    ping trials), then the emulator's."""
    checks = []
    if runs:
        checks += [check_qbss_alone(phase_rows, runs), check_be_takes_over(phase_rows, runs),
                   check_weights(phase_rows), check_settling(transition_rows),
                   check_total(series_3s, bottleneck_bps)]
    if ping_trials:
        checks += [check_priority_ping(ping_rows, ping_bottleneck_bps),
                   check_queued_ping(ping_rows, ping_bottleneck_bps)]
    return checks + [check_valid(phase_trials, ping_trials)]
