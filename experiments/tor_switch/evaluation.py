"""The seed's analysis: per-(frame size, threshold) summaries across loads, univariate
statistics, linear fits of delay against frame size and against threshold, and the
multivariate fit on both.

A cell's min/avg/max are taken over the frames in its latency window. The seed ran five
loads ("5 rounds") per frame size and threshold; the summary keeps the smallest minimum,
the mean of the averages and the largest maximum over them. The congesting loads are
those that offer C more than its line rate (above 50 % per source port).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bufferlab.analysis.regression import LinearFit, MultipleFit, linear_fit, multiple_fit
from bufferlab.analysis.stats import Univariate, describe

METRICS = ("delay_min_us", "delay_avg_us", "delay_max_us")
METRIC_NAMES = {"delay_min_us": "minimum", "delay_avg_us": "average", "delay_max_us": "maximum"}


def is_congesting(load_per_port_pct: float) -> bool:
    """True when two sources at this load offer port C more than its line rate."""
    return 2 * load_per_port_pct > 100


def summary_rows(delay_rows: Sequence[dict]) -> list[dict]:
    """One row per (frame size, threshold): min of the minima, mean of the averages and max
    of the maxima over the loads, plus frames lost over all loads."""
    groups: dict[tuple[int, int], list[dict]] = {}
    for row in delay_rows:
        groups.setdefault((row["frame_size_bytes"], row["threshold_pct"]), []).append(row)
    out = []
    for (size, threshold), rows in sorted(groups.items()):
        measured = [r for r in rows if r["measured_frames"] > 0]
        out.append({
            "frame_size_bytes": size,
            "threshold_pct": threshold,
            "loads": len(rows),
            "lost_frames": sum(r["lost_frames"] for r in rows),
            "delay_min_us": min((r["delay_min_us"] for r in measured), default=math.nan),
            "delay_avg_us": (sum(r["delay_avg_us"] for r in measured) / len(measured)
                             if measured else math.nan),
            "delay_max_us": max((r["delay_max_us"] for r in measured), default=math.nan),
        })
    return out


def univariate(rows: Sequence[dict]) -> dict[str, Univariate]:
    """Statistics of each delay metric over the given rows (those with a value)."""
    return {m: describe([r[m] for r in rows if not math.isnan(r[m])]) for m in METRICS
            if any(not math.isnan(r[m]) for r in rows)}


def _fit_groups(rows: Sequence[dict], group_key: str, x_key: str, metric: str
                ) -> dict[object, LinearFit]:
    groups: dict[object, list[tuple[float, float]]] = {}
    for row in rows:
        if not math.isnan(row[metric]):
            groups.setdefault(row[group_key], []).append((row[x_key], row[metric]))
    fits = {}
    for key, points in sorted(groups.items()):
        xs = [x for x, _ in points]
        if len(points) >= 3 and len(set(xs)) >= 2:
            fits[key] = linear_fit(xs, [y for _, y in points])
    return fits


def fits_against_size(summary: Sequence[dict], metric: str) -> dict[int, LinearFit]:
    """Per threshold (%): ``metric`` (µs) against frame size (bytes); groups with fewer than
    3 sizes are left out."""
    return _fit_groups(summary, "threshold_pct", "frame_size_bytes", metric)


def fits_against_threshold(summary: Sequence[dict], metric: str) -> dict[int, LinearFit]:
    """Per frame size (bytes): ``metric`` (µs) against threshold (%); groups with fewer than
    3 thresholds are left out."""
    return _fit_groups(summary, "frame_size_bytes", "threshold_pct", metric)


def congested_fits_against_threshold(delay_rows: Sequence[dict], metric: str
                                     ) -> dict[tuple[int, float], LinearFit]:
    """Per (frame size, congesting load): a cell's ``metric`` (µs) against threshold (%)."""
    fits = {}
    loads = sorted({r["load_per_port_pct"] for r in delay_rows
                    if is_congesting(r["load_per_port_pct"])})
    for load in loads:
        rows = [r for r in delay_rows if r["load_per_port_pct"] == load]
        for size, fit in fits_against_threshold(rows, metric).items():
            fits[(size, load)] = fit
    return fits


def multivariate(summary: Sequence[dict], metric: str) -> MultipleFit | None:
    """``metric`` (µs) ≈ b0 + b1·frame size (bytes) + b2·threshold (%), or None when the
    grid cannot support it (fewer than 4 cells, or only one size or one threshold)."""
    rows = [r for r in summary if not math.isnan(r[metric])]
    if (len(rows) < 4 or len({r["frame_size_bytes"] for r in rows}) < 2
            or len({r["threshold_pct"] for r in rows}) < 2):
        return None
    return multiple_fit([r["frame_size_bytes"] for r in rows], [r["threshold_pct"] for r in rows],
                        [r[metric] for r in rows])
