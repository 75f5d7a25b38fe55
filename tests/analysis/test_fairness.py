"""Jain's index and normalised deviation against hand-computed values."""

import math

import numpy as np
import pytest

from bufferlab.analysis.fairness import (
    deviation_summary,
    jain_index,
    normalised_deviation,
    run_fairness,
)


def test_jain_index_values():
    assert jain_index([2.5, 2.5, 2.5, 2.5]) == pytest.approx(1.0)
    assert jain_index([10, 0, 0, 0]) == pytest.approx(0.25)  # one of n gets all: 1/n
    assert jain_index([5, 5, 0, 0]) == pytest.approx(0.5)  # k of n: k/n
    assert jain_index([1, 2, 3]) == pytest.approx(36 / 42)


def test_jain_index_normalised_by_fair_shares():
    # Each flow at exactly its own (unequal) fair share is perfectly fair.
    assert jain_index([1, 3], fair_shares=[1, 3]) == pytest.approx(1.0)
    assert jain_index([2, 2], fair_shares=[1, 2]) == pytest.approx(9 / 10)


def test_jain_index_equals_one_over_one_plus_cov_squared():
    rates = [2.2e9, 2.6e9, 2.9e9, 2.3e9]
    mean = sum(rates) / 4
    var = sum((r - mean) ** 2 for r in rates) / 4
    assert jain_index(rates) == pytest.approx(1 / (1 + var / mean**2))


def test_jain_index_rejects_bad_input():
    for bad in ([], [0, 0], [1, -1]):
        with pytest.raises(ValueError):
            jain_index(bad)
    with pytest.raises(ValueError, match="fair_shares"):
        jain_index([1, 2], fair_shares=[1])


def test_normalised_deviation_from_the_bcn_target():
    target = 2.5e9
    delta = normalised_deviation([2.5e9, 2.7e9, 2.0e9, 3.69e9], target)
    assert list(delta) == pytest.approx([0.0, 0.08, -0.2, 0.476])
    s = deviation_summary([2.5e9, 2.7e9, 2.0e9, 3.69e9], target)
    assert (s.max, s.min, s.mean) == pytest.approx((0.476, 0.0, (0.08 + 0.2 + 0.476) / 4))
    assert s.rms == pytest.approx(math.sqrt((0.08**2 + 0.2**2 + 0.476**2) / 4))
    with pytest.raises(ValueError, match="target"):
        normalised_deviation([1.0], 0)


def test_run_fairness_row_like_the_bcn_seed():
    rates = {1: np.array([2.4e9, 2.6e9]), 2: np.array([2.7e9, 2.7e9]),
             3: np.array([2.3e9, 2.3e9]), 4: np.array([2.5e9, 2.5e9])}
    row = run_fairness(rates, 2.5e9)
    assert row.mean_rate_bps == {1: 2.5e9, 2: 2.7e9, 3: 2.3e9, 4: 2.5e9}
    assert (row.deviation.max, row.deviation.min, row.deviation.mean) == pytest.approx(
        (0.08, 0.0, 0.04))
    # Σx = 10e9, Σx² = 25.08e18 → J = 100e18 / (4 · 25.08e18).
    assert row.jain == pytest.approx(100 / (4 * 25.08))
    with pytest.raises(ValueError, match="no flows"):
        run_fairness({}, 2.5e9)
