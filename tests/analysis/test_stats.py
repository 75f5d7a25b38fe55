"""Univariate statistics against hand-computed values."""

import math

import pytest

from bufferlab.analysis.stats import describe


def test_describe_one_to_ten():
    s = describe(range(1, 11), percentiles=(25, 50, 90, 100))
    assert (s.n, s.min, s.max, s.mean, s.median) == (10, 1.0, 10.0, 5.5, 5.5)
    assert s.stdev == pytest.approx(math.sqrt(82.5 / 9))  # Σ(x − 5.5)² = 82.5, n − 1 = 9
    # Linear interpolation between order statistics: rank = p/100 · (n − 1).
    assert s.percentiles == {25.0: 3.25, 50.0: 5.5, 90.0: 9.1, 100.0: 10.0}
    assert s.row((90,)) == [10, 1.0, 5.5, 5.5, 10.0, s.stdev, 9.1]


def test_describe_sample_stdev_and_single_value():
    assert describe([2, 4, 4, 4, 5, 5, 7, 9]).stdev == pytest.approx(math.sqrt(32 / 7))
    one = describe([3.5])
    assert (one.n, one.stdev, one.median, one.percentiles[99.0]) == (1, 0.0, 3.5, 3.5)


def test_describe_rejects_bad_input():
    with pytest.raises(ValueError, match="no values"):
        describe([])
    with pytest.raises(ValueError, match="finite"):
        describe([1.0, float("nan")])
    with pytest.raises(ValueError, match="percentile"):
        describe([1.0], percentiles=(101,))
