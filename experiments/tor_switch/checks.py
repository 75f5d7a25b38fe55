"""The expected outcome of seed 000, checked on a run's rows and printed as PASS/FAIL lines.

1. Frames absorbed in a back-to-back burst scale with the threshold and inversely with the
   frame size (each ratio within 5 % of the expected one). On a traffic manager that counts
   cells (the TNA port) the expected ratios are those of the threshold and of one frame in
   cells; the byte ratios are still shown, as figures that are not expected to hold there.
2. The minimum delay is linear in the frame size (R² ≥ 0.99 for every threshold) and does
   not depend on the threshold (the change its fitted slope predicts across the thresholds
   is within twice the slope's standard error, or within 5 % of the minimum delay).
3. The maximum and the average delay rise linearly with the threshold at the congesting
   loads (positive slope, R² ≥ 0.95 for every frame size and congesting load).

A check that the run's grid cannot evaluate (too few sizes, thresholds or congesting
loads) fails and says why: the expectation was not shown.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.tor_switch.evaluation import (
    METRIC_NAMES,
    congested_fits_against_threshold,
    fits_against_size,
    fits_against_threshold,
)

RATIO_TOLERANCE = 0.05
MIN_DELAY_R2 = 0.99
THRESHOLD_R2 = 0.95
FLAT_RELATIVE_TOLERANCE = 0.05
FLAT_STDERRS = 2.0


def _ratio_check(name: str, pairs: list[tuple[str, float, float]], binding: bool = True) -> Check:
    """Pass when every (label, measured, expected) ratio is within the tolerance."""
    if not pairs:
        return Check(name, False, "cannot evaluate: needs two values of the varied parameter",
                     binding)
    worst_label, worst_error = "", -1.0
    for label, measured, expected in pairs:
        error = abs(measured / expected - 1) if expected else math.inf
        if error > worst_error:
            worst_label, worst_error = label, error
    passed = worst_error <= RATIO_TOLERANCE
    return Check(name, passed, f"{len(pairs)} ratios, worst {worst_label} off by "
                               f"{100 * worst_error:.2f} % (limit {100 * RATIO_TOLERANCE:g} %)",
                 binding)


Ratios = list[tuple[str, float, float]]


def _burst_ratios(burst_rows: Sequence[dict], threshold_of: Callable[[dict], float],
                  size_of: Callable[[dict], float]) -> tuple[Ratios, Ratios]:
    """(label, measured, expected) ratios of frames absorbed between thresholds (expected:
    ``threshold_of(row)``'s ratio) and between frame sizes (expected: ``size_of(row)``'s)."""
    rows = {(r["frame_size_bytes"], r["threshold_pct"]): r for r in burst_rows}
    frames = {k: r["burst_per_port_frames"] for k, r in rows.items()}
    sizes = sorted({s for s, _ in frames})
    thresholds = sorted({t for _, t in frames})
    by_threshold = []
    for size in sizes:
        for lo, hi in itertools.combinations(thresholds, 2):
            if (size, lo) in frames and (size, hi) in frames and frames[(size, lo)]:
                by_threshold.append((f"{size} B {hi} %/{lo} %",
                                     frames[(size, hi)] / frames[(size, lo)],
                                     threshold_of(rows[(size, hi)]) / threshold_of(rows[(size, lo)])))
    by_size = []
    for threshold in thresholds:
        for small, large in itertools.combinations(sizes, 2):
            if (small, threshold) in frames and (large, threshold) in frames \
                    and frames[(large, threshold)]:
                by_size.append((f"{threshold} % {small} B/{large} B",
                                frames[(small, threshold)] / frames[(large, threshold)],
                                size_of(rows[(large, threshold)]) / size_of(rows[(small, threshold)])))
    return by_threshold, by_size


def check_burst_scaling(burst_rows: Sequence[dict]) -> list[Check]:
    """Frames absorbed ∝ threshold (per frame size) and ∝ 1 / frame size (per threshold); on
    rows measured in cells (`frame_cells`), also against the ratios in cells, which are then
    the binding ones."""
    cells = bool(burst_rows) and all("frame_cells" in r for r in burst_rows)
    by_threshold, by_size = _burst_ratios(burst_rows, lambda r: r["threshold_pct"],
                                          lambda r: r["frame_size_bytes"])
    checks = [_ratio_check("frames absorbed scale with the threshold", by_threshold, not cells),
              _ratio_check("frames absorbed scale inversely with the frame size", by_size,
                           not cells)]
    if cells:
        by_threshold, by_size = _burst_ratios(burst_rows, lambda r: r["threshold_cells"],
                                              lambda r: r["frame_cells"])
        checks += [_ratio_check("frames absorbed scale with the threshold in cells", by_threshold),
                   _ratio_check("frames absorbed scale inversely with the frame's cells", by_size)]
    return checks


def check_min_delay_linear_in_size(summary: Sequence[dict]) -> Check:
    """Minimum delay against frame size: R² ≥ 0.99 for every threshold."""
    name = "minimum delay is linear in the frame size"
    fits = fits_against_size(summary, "delay_min_us")
    if not fits:
        return Check(name, False, "cannot evaluate: needs 3 frame sizes at one threshold")
    worst = min(fits, key=lambda t: fits[t].r_squared)
    passed = all(f.r_squared >= MIN_DELAY_R2 and f.slope > 0 for f in fits.values())
    return Check(name, passed, f"{len(fits)} thresholds, lowest R² {fits[worst].r_squared:.4f} "
                               f"at {worst} % (limit {MIN_DELAY_R2}), slope "
                               f"{fits[worst].slope * 1000:.3f} ns/byte")


def check_min_delay_flat_in_threshold(summary: Sequence[dict]) -> Check:
    """Minimum delay against threshold: no change beyond noise across the thresholds."""
    name = "minimum delay does not depend on the threshold"
    fits = fits_against_threshold(summary, "delay_min_us")
    if not fits:
        return Check(name, False, "cannot evaluate: needs 3 thresholds at one frame size")
    thresholds = [r["threshold_pct"] for r in summary]
    span = max(thresholds) - min(thresholds)
    worst_excess, details = -math.inf, ""
    for size, fit in fits.items():
        mean = sum(r["delay_min_us"] for r in summary if r["frame_size_bytes"] == size
                   and not math.isnan(r["delay_min_us"])) / fit.n
        change = abs(fit.slope) * span
        # A perfectly flat series has an undefined (NaN) standard error: no noise to allow.
        noise = 0.0 if math.isnan(fit.slope_stderr) else fit.slope_stderr
        allowed = max(FLAT_STDERRS * noise * span, FLAT_RELATIVE_TOLERANCE * abs(mean))
        if change - allowed > worst_excess:
            worst_excess = change - allowed
            details = (f"worst {size} B: slope {fit.slope * 1000:.4g} ns/% changes it by "
                       f"{change:.4g} µs over {span} %, allowed {allowed:.4g} µs")
    return Check(name, worst_excess <= 0, f"{len(fits)} frame sizes, {details}")


def check_delay_linear_in_threshold(delay_rows: Sequence[dict], metric: str) -> Check:
    """``metric`` against threshold at each congesting load: rising, R² ≥ 0.95."""
    name = f"{METRIC_NAMES[metric]} delay rises linearly with the threshold at congesting loads"
    fits = congested_fits_against_threshold(delay_rows, metric)
    if not fits:
        return Check(name, False, "cannot evaluate: needs a congesting load (> 50 % per "
                                  "source) and 3 thresholds")
    worst = min(fits, key=lambda k: fits[k].r_squared if fits[k].slope > 0 else -math.inf)
    passed = all(f.r_squared >= THRESHOLD_R2 and f.slope > 0 for f in fits.values())
    size, load = worst
    return Check(name, passed, f"{len(fits)} (size, load) series, worst {size} B at {load:g} % "
                               f"per port: slope {fits[worst].slope:.4g} µs/%, R² "
                               f"{fits[worst].r_squared:.4f} (limit {THRESHOLD_R2})")


def run_checks(burst_rows: Sequence[dict], delay_rows: Sequence[dict],
               summary: Sequence[dict]) -> list[Check]:
    """Every expectation of the study, in the seed's order."""
    return [
        *check_burst_scaling(burst_rows),
        check_min_delay_linear_in_size(summary),
        check_min_delay_flat_in_threshold(summary),
        check_delay_linear_in_threshold(delay_rows, "delay_max_us"),
        check_delay_linear_in_threshold(delay_rows, "delay_avg_us"),
    ]
