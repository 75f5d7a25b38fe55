"""Time series helpers against hand-computed series."""

import math

import numpy as np
import pytest

from bufferlab.analysis.timeseries import per_interval, sample_and_hold, throughput_per_interval

MS = 1_000_000


def test_throughput_per_flow_per_interval():
    times = [0, 0.2 * MS, 1.5 * MS, 1.6 * MS, 2.1 * MS, 0.9 * MS, 2.5 * MS, 3.2 * MS]
    flows = [1, 1, 1, 1, 1, 2, 2, 2]
    sizes = [1500, 1500, 1000, 1000, 1500, 500, 250, 9999]
    series = throughput_per_interval([int(t) for t in times], flows, sizes, MS, start_ns=0,
                                     end_ns=3 * MS)
    assert list(series.interval_start_ns) == [0, MS, 2 * MS]
    # 3000 bytes in 1 ms = 24 Mbit/s; the frame at 3.2 ms is past the last full interval.
    assert list(series.rates_bps[1]) == [24e6, 16e6, 12e6]
    assert list(series.rates_bps[2]) == [4e6, 0.0, 2e6]
    assert list(series.total_bps()) == [28e6, 16e6, 14e6]


def test_throughput_defaults_span_the_records_in_full_intervals():
    series = throughput_per_interval([10, 20, 35], [7, 7, 7], [100, 100, 100], 10)
    assert list(series.interval_start_ns) == [10, 20]  # 10..36 → two full 10-ns intervals
    assert list(series.rates_bps[7]) == [80e9, 80e9]
    with pytest.raises(ValueError, match="no frames"):
        throughput_per_interval([], [], [], 10)
    with pytest.raises(ValueError, match="interval_ns"):
        throughput_per_interval([1], [1], [1], 0)


def test_queue_occupancy_per_interval_mean_and_max():
    times = [0, 100, 400, 1200, 1300]
    occupancy = [1000, 3000, 2000, 500, 1500]
    means = per_interval(times, occupancy, 1000, 0, 3000)
    assert means[0] == pytest.approx(2000) and means[1] == pytest.approx(1000)
    assert math.isnan(means[2])
    assert list(per_interval(times, occupancy, 1000, 0, 2000, how="max")) == [3000, 1500]


def test_regulated_rate_sample_and_hold():
    history_ns = [5, 10, 30]
    rates = [9.74e9, 7.4e9, 8.0e9]
    grid = np.arange(0, 40, 10)
    got = sample_and_hold(history_ns, rates, grid)
    assert math.isnan(got[0])
    assert list(got[1:]) == [7.4e9, 7.4e9, 8.0e9]
    with pytest.raises(ValueError, match="increasing"):
        sample_and_hold([2, 1], [0, 0], [0])
