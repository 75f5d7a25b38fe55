"""The study's checks pass on data with the seed's shape and FAIL on data that breaks each
expectation."""

import math

import pytest

from bufferlab.experiments.tor_switch import checks
from bufferlab.experiments.tor_switch.evaluation import summary_rows

SIZES = (64, 512, 1024, 1518)
THRESHOLDS = (10, 50, 100)
LOADS = (49.8, 50.2)


def burst_rows(frames=lambda size, threshold: round(threshold * 655.36 / (size - 4))):
    return [{"frame_size_bytes": s, "threshold_pct": t, "burst_per_port_frames": frames(s, t)}
            for s in (512, 1024) for t in (50, 100)]


def seed_like(size, threshold, load):
    """Min linear in size; avg/max rise with the threshold only when the load congests."""
    low = 0.008 * size + 0.064
    if load <= 50:
        return low, low + 0.2, low + 0.5
    high = low + 1.3 * threshold
    return low, high - 0.1, high


def delay_rows(model=seed_like):
    rows = []
    for size in SIZES:
        for threshold in THRESHOLDS:
            for load in LOADS:
                lo, avg, hi = model(size, threshold, load)
                rows.append({"frame_size_bytes": size, "threshold_pct": threshold,
                             "load_per_port_pct": load, "lost_frames": 0, "measured_frames": 100,
                             "delay_min_us": lo, "delay_avg_us": avg, "delay_max_us": hi})
    return rows


def by_name(results):
    return {c.name: c for c in results}


def test_seed_shaped_data_passes_every_check():
    rows = delay_rows()
    results = checks.run_checks(burst_rows(), rows, summary_rows(rows))
    assert len(results) == 6
    assert all(c.passed for c in results), [c.line() for c in results]
    assert all(c.line().startswith("PASS ") for c in results)


def test_burst_not_scaling_with_threshold_fails():
    # A fixed per-port share: frames absorbed do not change with the threshold.
    results = by_name(checks.check_burst_scaling(burst_rows(lambda s, t: 64_000 // s)))
    assert not results["frames absorbed scale with the threshold"].passed
    assert results["frames absorbed scale inversely with the frame size"].passed
    assert results["frames absorbed scale with the threshold"].line().startswith("FAIL ")


def test_burst_counted_in_frames_not_bytes_fails_the_size_check():
    # A queue limited in frames: the same count for every size.
    results = by_name(checks.check_burst_scaling(burst_rows(lambda s, t: 3 * t)))
    assert results["frames absorbed scale with the threshold"].passed
    assert not results["frames absorbed scale inversely with the frame size"].passed


def test_ratio_just_outside_five_percent_fails():
    frames = {(512, 50): 100, (512, 100): 211, (1024, 50): 50, (1024, 100): 100}
    results = by_name(checks.check_burst_scaling(burst_rows(lambda s, t: frames[(s, t)])))
    assert not results["frames absorbed scale with the threshold"].passed
    assert "512 B 100 %/50 % off by 5.50 %" in results[
        "frames absorbed scale with the threshold"].detail


def test_min_delay_not_linear_in_size_fails():
    def model(size, threshold, load):
        lo = 0.01 * (size / 100) ** 3 + 0.5
        return lo, lo, lo
    rows = delay_rows(model)
    check = checks.check_min_delay_linear_in_size(summary_rows(rows))
    assert not check.passed
    assert "lowest R²" in check.detail


def test_min_delay_rising_with_threshold_fails():
    def model(size, threshold, load):
        lo = 0.008 * size + 0.05 * threshold
        return lo, lo + 1, lo + 2
    check = checks.check_min_delay_flat_in_threshold(summary_rows(delay_rows(model)))
    assert not check.passed
    assert check.line().startswith("FAIL minimum delay does not depend on the threshold")


def test_min_delay_with_small_noise_around_flat_passes():
    def model(size, threshold, load):
        lo = 0.008 * size + 0.1 + (0.001 if threshold == 50 else 0.0)
        return lo, lo, lo
    assert checks.check_min_delay_flat_in_threshold(summary_rows(delay_rows(model))).passed


@pytest.mark.parametrize("metric", ["delay_max_us", "delay_avg_us"])
def test_delay_not_rising_linearly_with_threshold_fails(metric):
    def saturating(size, threshold, load):
        lo, avg, hi = seed_like(size, threshold, load)
        if load > 50:  # a queue that never grows past 10 % whatever the threshold
            capped = lo + 1.3 * min(threshold, 10) + 0.01 * threshold ** 2 * (threshold > 50)
            return lo, capped, capped
        return lo, avg, hi
    check = checks.check_delay_linear_in_threshold(delay_rows(saturating), metric)
    assert not check.passed


def test_delay_falling_with_threshold_fails_even_when_linear():
    def falling(size, threshold, load):
        lo = 0.008 * size
        return lo, lo + 200 - threshold, lo + 200 - threshold
    assert not checks.check_delay_linear_in_threshold(delay_rows(falling), "delay_max_us").passed


def test_grid_without_congesting_load_cannot_show_the_threshold_effect():
    rows = [r for r in delay_rows() if r["load_per_port_pct"] <= 50]
    check = checks.check_delay_linear_in_threshold(rows, "delay_avg_us")
    assert not check.passed
    assert check.detail.startswith("cannot evaluate")


def test_too_few_values_cannot_be_evaluated():
    rows = [r for r in delay_rows() if r["frame_size_bytes"] in (64, 512)
            and r["threshold_pct"] == 10]
    summary = summary_rows(rows)
    assert not checks.check_min_delay_linear_in_size(summary).passed
    assert not checks.check_min_delay_flat_in_threshold(summary).passed
    single = [r for r in burst_rows() if r["threshold_pct"] == 50 and r["frame_size_bytes"] == 512]
    assert not any(c.passed for c in checks.check_burst_scaling(single))


def test_summary_takes_min_of_minima_mean_of_averages_max_of_maxima():
    summary = summary_rows(delay_rows())
    cell = next(r for r in summary if r["frame_size_bytes"] == 512 and r["threshold_pct"] == 100)
    lo = 0.008 * 512 + 0.064
    assert cell["delay_min_us"] == pytest.approx(lo)
    assert cell["delay_avg_us"] == pytest.approx(((lo + 0.2) + (lo + 130 - 0.1)) / 2)
    assert cell["delay_max_us"] == pytest.approx(lo + 130)
    assert cell["loads"] == 2


def test_summary_of_cells_without_measured_frames_is_nan():
    rows = delay_rows()
    for r in rows:
        r.update(measured_frames=0, delay_min_us=math.nan, delay_avg_us=math.nan,
                 delay_max_us=math.nan)
    cell = summary_rows(rows)[0]
    assert math.isnan(cell["delay_min_us"]) and math.isnan(cell["delay_max_us"])
    assert math.isnan(cell["delay_avg_us"])
