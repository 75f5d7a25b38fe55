"""Time series from per-frame and per-sample records: throughput per flow, occupancy, rates.

Times are ns on one clock; outputs are per fixed interval of ``interval_ns``
starting at ``start_ns``, full intervals only (a partial tail would understate a rate).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class ThroughputSeries:
    """Per-flow throughput in bit/s for each interval starting at ``interval_start_ns``."""

    interval_start_ns: np.ndarray
    interval_ns: int
    rates_bps: dict[int, np.ndarray]

    def total_bps(self) -> np.ndarray:
        """The sum over flows, per interval."""
        return np.sum(list(self.rates_bps.values()), axis=0)


def _interval_count(start_ns: int, end_ns: int, interval_ns: int) -> int:
    if interval_ns <= 0:
        raise ValueError(f"interval_ns must be positive, got {interval_ns}")
    if end_ns <= start_ns:
        raise ValueError(f"end_ns {end_ns} is not after start_ns {start_ns}")
    return max(1, (end_ns - start_ns) // interval_ns)


def throughput_per_interval(
    times_ns: Iterable[int],
    flows: Iterable[int],
    frame_bytes: Iterable[int],
    interval_ns: int,
    start_ns: int | None = None,
    end_ns: int | None = None,
) -> ThroughputSeries:
    """Bits of the frames seen per flow and interval, divided by the interval (bit/s)."""
    t = np.asarray(list(times_ns), dtype=np.int64)
    f = np.asarray(list(flows), dtype=np.int64)
    b = np.asarray(list(frame_bytes), dtype=np.float64)
    if not t.size == f.size == b.size:
        raise ValueError(f"times, flows and sizes differ in length: {t.size}, {f.size}, {b.size}")
    if t.size == 0:
        raise ValueError("no frames")
    start = int(t.min()) if start_ns is None else start_ns
    end = int(t.max()) + 1 if end_ns is None else end_ns
    n = _interval_count(start, end, interval_ns)
    index = (t - start) // interval_ns
    inside = (index >= 0) & (index < n)
    rates = {}
    for flow in np.unique(f):
        mine = inside & (f == flow)
        bits = np.bincount(index[mine], weights=b[mine] * 8, minlength=n)
        rates[int(flow)] = bits * NS_PER_S / interval_ns
    return ThroughputSeries(start + np.arange(n, dtype=np.int64) * interval_ns, interval_ns, rates)


def per_interval(
    times_ns: Iterable[int],
    values: Iterable[float],
    interval_ns: int,
    start_ns: int,
    end_ns: int,
    how: str = "mean",
) -> np.ndarray:
    """Mean or max of the samples in each interval (NaN where an interval has none)."""
    t = np.asarray(list(times_ns), dtype=np.int64)
    v = np.asarray(list(values), dtype=np.float64)
    if t.size != v.size:
        raise ValueError(f"times and values differ in length: {t.size}, {v.size}")
    if how not in ("mean", "max"):
        raise ValueError(f"how must be 'mean' or 'max', got {how!r}")
    n = _interval_count(start_ns, end_ns, interval_ns)
    index = (t - start_ns) // interval_ns
    inside = (index >= 0) & (index < n)
    out = np.full(n, np.nan)
    for k in np.unique(index[inside]):
        chunk = v[inside & (index == k)]
        out[k] = chunk.mean() if how == "mean" else chunk.max()
    return out


def sample_and_hold(
    times_ns: Iterable[int], values: Iterable[float], grid_ns: Iterable[int]
) -> np.ndarray:
    """The last value at or before each grid time (NaN before the first sample).

    For step signals such as a regulated rate or a queue occupancy that change
    only at recorded events.
    """
    t = np.asarray(list(times_ns), dtype=np.int64)
    v = np.asarray(list(values), dtype=np.float64)
    g = np.asarray(list(grid_ns), dtype=np.int64)
    if t.size != v.size:
        raise ValueError(f"times and values differ in length: {t.size}, {v.size}")
    if t.size > 1 and np.any(np.diff(t) < 0):
        raise ValueError("times must be in increasing order")
    pos = np.searchsorted(t, g, side="right") - 1
    out = np.full(g.size, np.nan)
    valid = pos >= 0
    out[valid] = v[pos[valid]]
    return out
