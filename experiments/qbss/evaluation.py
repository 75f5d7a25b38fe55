"""Figures from the trials: goodput per class per interval, the shares of each phase, how
long each change takes to settle, and the ping table.

A phase starts and ends where the receiver saw it do so: a class's copy starts with its
first data frame and stops with its last (a copy can start later than launched: iperf3's
control connection is unmarked, so its handshake waits in the BE queue). Times are given
from the launch of the run's first copy (QBSS). A phase's steady state leaves out its first
`SETTLE_ALLOWANCE_S` (the change the checks allow 2 s for) and its last
`STOP_ALLOWANCE_S`; how fast a change settles is timed in 1-s intervals from the change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bufferlab.analysis.stats import describe
from bufferlab.experiments.common.buffer_engine import ETHERNET_WIRE_OVERHEAD_BYTES
from bufferlab.experiments.qbss.backend import PhaseTrial, PingTrial
from bufferlab.experiments.qbss.capture import Frames, class_goodput_bps, unmarked_payload_bytes
from bufferlab.experiments.qbss.config import BE, CLASSES, PRIORITY, QBSS, PhaseRun, class_by_name
from bufferlab.experiments.qbss.switch_config import FULL_FRAME_BYTES
from bufferlab.experiments.qbss.workload import CHANGES, PHASE_CLASSES, PHASES, iperf_port

SETTLE_ALLOWANCE_S = 2.0
STOP_ALLOWANCE_S = 1.0
#: A class has settled when its 1-s goodput is within this share of the bottleneck of the
#: new phase's steady goodput, for two seconds in a row.
SETTLE_TOLERANCE = 0.10
#: TCP payload of a full-size frame: a 1500-byte IPv4 packet less 20 bytes of IP header, 20
#: of TCP header and 12 of timestamps (Linux sends them on every segment).
TCP_PAYLOAD_BYTES = 1448
NS_PER_S = 1_000_000_000


def goodput_capacity_bps(rate_bps: float) -> float:
    """The most TCP payload a port of ``rate_bps`` carries in full-size frames, bit/s: each
    1,448 payload bytes take a 1,514-byte frame plus the port model's 24 bytes per frame."""
    return rate_bps * TCP_PAYLOAD_BYTES / (FULL_FRAME_BYTES + ETHERNET_WIRE_OVERHEAD_BYTES)


def frame_time_s(rate_bps: float) -> float:
    """How long a full-size frame holds a port of ``rate_bps``, s (wire overhead included)."""
    return (FULL_FRAME_BYTES + ETHERNET_WIRE_OVERHEAD_BYTES) * 8 / rate_bps


def data_span_ns(frames: Frames, cls: str) -> tuple[int, int]:
    """Receive times of the first and the last data frame of class ``cls`` (its port and its
    TOS), ns; ValueError if none reached the receiver."""
    c = class_by_name(cls)
    mine = (frames.dport == iperf_port(c)) & (frames.tos == c.tos) & (frames.payload_bytes > 0)
    if not mine.any():
        raise ValueError(f"no {c.label} data frame reached the receiver")
    times = frames.rx_ns[mine]
    return int(times.min()), int(times.max())


def phase_bounds_ns(frames: Frames) -> list[int]:
    """The six moments that bound the five phases, ns: QBSS starts, BE starts, priority
    starts, priority stops, BE stops, QBSS stops; ValueError if they are out of order."""
    spans = {c.name: data_span_ns(frames, c.name) for c in (QBSS, BE, PRIORITY)}
    bounds = [spans["qbss"][0], spans["be"][0], spans["priority"][0], spans["priority"][1],
              spans["be"][1], spans["qbss"][1]]
    if bounds != sorted(bounds):
        raise ValueError(f"the copies did not start and stop in the seed's order: {bounds}")
    return bounds


@dataclass(frozen=True)
class RunSeries:
    """One run's goodput per class per interval, bit/s; intervals start at ``start_s``
    (s from the run's first launch), and ``changes_s`` are when phases 2 to 5 began."""

    run: PhaseRun
    interval_s: float
    start_s: np.ndarray
    goodput_bps: dict[str, np.ndarray]
    changes_s: tuple[float, ...]

    @property
    def total_bps(self) -> np.ndarray:
        """All classes together, per interval."""
        return np.sum([self.goodput_bps[c.name] for c in CLASSES], axis=0)


def run_series(trial: PhaseTrial, phase_s: float, interval_s: float) -> RunSeries:
    """The run's goodput per class per ``interval_s`` over its five phases."""
    goodput = class_goodput_bps(trial.frames, trial.start_ns, PHASES * phase_s, interval_s)
    count = len(goodput[CLASSES[0].name])
    changes = tuple((b - trial.start_ns) / NS_PER_S for b in phase_bounds_ns(trial.frames)[1:-1])
    return RunSeries(trial.run, interval_s, np.arange(count) * interval_s, goodput, changes)


def weight_shares_pct(weights_pct: Sequence[int], active: Sequence[str]) -> dict[str, float]:
    """What the scheduler gives each class when the ``active`` ones are busy: its weight
    over the sum of the active ones' (%, 0 for an idle class)."""
    total = sum(w for c, w in zip(CLASSES, weights_pct, strict=True) if c.name in active)
    return {c.name: 100 * w / total if c.name in active else 0.0
            for c, w in zip(CLASSES, weights_pct, strict=True)}


def steady_goodput_bps(frames: Frames, bounds_ns: Sequence[int]) -> list[dict[str, float]]:
    """Each phase's goodput per class over its steady part, bit/s (NaN if it has none)."""
    out = []
    for k in range(PHASES):
        lo = bounds_ns[k] + round(SETTLE_ALLOWANCE_S * NS_PER_S)
        hi = bounds_ns[k + 1] - round(STOP_ALLOWANCE_S * NS_PER_S)
        if hi <= lo:
            out.append({c.name: math.nan for c in CLASSES})
            continue
        window = class_goodput_bps(frames, lo, (hi - lo) / NS_PER_S, (hi - lo) / NS_PER_S)
        out.append({name: float(rates[0]) for name, rates in window.items()})
    return out


def phase_rows(trial: PhaseTrial, bottleneck_bps: int) -> list[dict]:
    """One row per phase: when it began and how long it lasted (s), each class's steady
    goodput (Mbit/s), % of the bottleneck, share of what the port carried, and the share
    its weight gives it."""
    bounds = phase_bounds_ns(trial.frames)
    rows = []
    for k, goodput in enumerate(steady_goodput_bps(trial.frames, bounds)):
        active = [c.name for c in PHASE_CLASSES[k]]
        expected = weight_shares_pct(trial.run.weights_pct, active)
        total = sum(goodput.values())
        row: dict[str, object] = {
            "run": trial.run.name, "phase": k + 1,
            "classes": "+".join(c.label for c in PHASE_CLASSES[k]),
            "start_s": (bounds[k] - trial.start_ns) / NS_PER_S,
            "length_s": (bounds[k + 1] - bounds[k]) / NS_PER_S}
        for c in CLASSES:
            row[f"{c.name}_goodput_mbit_per_s"] = goodput[c.name] / 1e6
            row[f"{c.name}_pct_of_bottleneck"] = 100 * goodput[c.name] / bottleneck_bps
            row[f"{c.name}_share_pct"] = 100 * goodput[c.name] / total if total else math.nan
            row[f"{c.name}_weight_share_pct"] = expected[c.name]
        row["total_goodput_mbit_per_s"] = total / 1e6
        row["total_pct_of_bottleneck"] = 100 * total / bottleneck_bps
        rows.append(row)
    return rows


def settle_s(goodput_1s: Mapping[str, np.ndarray], steady: Mapping[str, float],
             tolerance_bps: float) -> float:
    """Seconds from the first 1-s interval until every class stays within ``tolerance_bps``
    of its ``steady`` goodput for two intervals in a row; NaN if it never does."""
    count = min(len(v) for v in goodput_1s.values())

    def close(j: int) -> bool:
        return all(abs(goodput_1s[name][j] - steady[name]) <= tolerance_bps for name in steady)

    for j in range(count - 1):
        if close(j) and close(j + 1):
            return float(j)
    return math.nan


def transition_rows(trial: PhaseTrial, phase_s: float, bottleneck_bps: int) -> list[dict]:
    """One row per change (the starts of phases 2 to 5): when it was due, when it happened,
    and how long until the new shares held (1-s intervals from the change)."""
    bounds = phase_bounds_ns(trial.frames)
    steady = steady_goodput_bps(trial.frames, bounds)
    rows = []
    for k in range(1, PHASES):
        length_s = (bounds[k + 1] - bounds[k]) / NS_PER_S
        goodput = class_goodput_bps(trial.frames, bounds[k], length_s, 1.0)
        rows.append({"run": trial.run.name, "change": CHANGES[k - 1],
                     "scheduled_s": k * phase_s,
                     "at_s": (bounds[k] - trial.start_ns) / NS_PER_S,
                     "settle_s": settle_s(goodput, steady[k],
                                          SETTLE_TOLERANCE * bottleneck_bps)})
    return rows


def series_rows(series: RunSeries) -> list[dict]:
    """The run's series as CSV rows: interval start (s) and each class's goodput (bit/s)."""
    return [{"run": series.run.name, "interval_start_s": float(t),
             **{f"{c.name}_goodput_bps": float(series.goodput_bps[c.name][i]) for c in CLASSES},
             "total_goodput_bps": float(series.total_bps[i])}
            for i, t in enumerate(series.start_s)]


def capture_rows(trial: PhaseTrial) -> list[dict]:
    """Per class: the payload the capture saw against what iperf3 says was received, and
    the payload sent to the class's server without its TOS (iperf3's control connection)."""
    rows = []
    for c in CLASSES:
        report = trial.iperf.get(c.name)
        captured = int(trial.frames.payload_bytes[trial.frames.dport == iperf_port(c)].sum())
        rows.append({"run": trial.run.name, "class": c.label,
                     "captured_payload_bytes": captured,
                     "iperf3_received_bytes": report.received_bytes if report else 0,
                     "iperf3_retransmits_segments": report.retransmits if report else 0,
                     "unmarked_payload_bytes": unmarked_payload_bytes(trial.frames, c)})
    return rows


def _probe_figures(trial: PingTrial, name: str) -> dict[str, float]:
    records = trial.probes[name]
    if not records:
        return {"probes_received": 0, "probe_one_way_min_us": math.nan,
                "probe_one_way_avg_us": math.nan, "probe_one_way_max_us": math.nan,
                "switch_queue_avg_us": math.nan, "switch_queue_max_us": math.nan}
    one_way = describe([r.host_latency_ns / 1e3 for r in records], ())
    stamped = [r.deq_timedelta_us for r in records if r.tel_filled]
    queued = describe(stamped, ()) if stamped else None
    return {"probes_received": len(records), "probe_one_way_min_us": one_way.min,
            "probe_one_way_avg_us": one_way.mean, "probe_one_way_max_us": one_way.max,
            "switch_queue_avg_us": queued.mean if queued else math.nan,
            "switch_queue_max_us": queued.max if queued else math.nan}


def ping_rows(trials: Sequence[PingTrial]) -> list[dict]:
    """One row per (bulk class, ping class): ping's min/avg/max/mdev and median (ms), the
    median over the class's idle median, iperf3's goodput, and the probes' one-way latency
    and switch queueing time (µs)."""
    idle = {name: result.median_ms() for t in trials if t.bulk is None
            for name, result in t.pings.items()}
    rows = []
    for t in trials:
        for c in CLASSES:
            result = t.pings[c.name]
            lo, avg, hi, mdev = result.stats_ms()
            median = result.median_ms()
            rows.append({
                "bulk_class": class_by_name(t.bulk).label if t.bulk else "none",
                "ping_class": c.label, "ping_tos": c.tos,
                "ping_sent": result.transmitted, "ping_received": result.received,
                "rtt_min_ms": lo, "rtt_avg_ms": avg, "rtt_max_ms": hi, "rtt_mdev_ms": mdev,
                "rtt_median_ms": median, "idle_rtt_median_ms": idle.get(c.name, math.nan),
                "rtt_median_over_idle": median / idle[c.name] if idle.get(c.name) else math.nan,
                "iperf3_goodput_mbit_per_s": t.iperf.received_bps / 1e6 if t.iperf else math.nan,
                "probes_sent": t.probes_sent, **_probe_figures(t, c.name)})
    return rows
