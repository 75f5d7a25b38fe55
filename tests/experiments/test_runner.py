"""The backend-independent runner: the RFC 2544 back-to-back search and per-cell rows."""

import math

import numpy as np
import pytest

from bufferlab.experiments.tor_switch.backend import LOST, DelayCell, FrameRecords
from bufferlab.experiments.tor_switch.runner import delay_cells, delay_row, longest_lossless_burst


@pytest.mark.parametrize("longest", [0, 1, 2, 37, 64, 1000])
def test_search_finds_the_longest_lossless_burst(longest):
    tried = []

    def lossless(n):
        tried.append(n)
        return n <= longest

    assert longest_lossless_burst(lossless) == longest
    # Doubling then bisecting: logarithmically many trials.
    assert len(tried) <= 2 * max(1, longest).bit_length() + 2


def test_search_gives_up_when_nothing_is_lost():
    with pytest.raises(RuntimeError, match="no loss with bursts up to 64 frames"):
        longest_lossless_burst(lambda n: True, limit=64)


def records(in_ns, out_ns):
    n = len(in_ns)
    return FrameRecords(source=np.zeros(n, dtype=np.int8), seq=np.arange(n),
                        in_ns=np.array(in_ns, dtype=np.int64),
                        out_ns=np.array(out_ns, dtype=np.int64))


def test_delay_row_counts_every_frame_but_measures_only_the_window():
    cell = DelayCell(64, 50, 50.2, 10_000)
    rec = records([100, 1000, 6000, 7000, 8000], [700, 2000, LOST, 9000, 9500])
    row = delay_row(cell, rec, latency_from_ns=5000)
    assert row["sent_frames"] == 5 and row["received_frames"] == 4 and row["lost_frames"] == 1
    assert row["loss_pct"] == pytest.approx(20.0)
    assert row["offered_total_pct"] == pytest.approx(100.4)
    assert row["measured_frames"] == 2  # 7000 → 9000 and 8000 → 9500
    assert row["delay_min_us"] == pytest.approx(1.5)
    assert row["delay_max_us"] == pytest.approx(2.0)
    assert row["delay_avg_us"] == pytest.approx(1.75)


def test_delay_row_without_measured_frames_has_nan_delays():
    row = delay_row(DelayCell(64, 1, 50.2, 10), records([5], [LOST]), latency_from_ns=0)
    assert row["lost_frames"] == 1 and row["measured_frames"] == 0
    assert math.isnan(row["delay_min_us"]) and math.isnan(row["delay_p99_us"])


def test_frame_records_must_line_up():
    with pytest.raises(ValueError, match="differ in length"):
        FrameRecords(np.zeros(2), np.zeros(2), np.zeros(3), np.zeros(2))


def test_grid_order_is_size_then_threshold_then_load():
    from bufferlab.experiments.tor_switch.config import TorConfig
    cfg = TorConfig(frame_sizes_bytes=(64, 128), thresholds_pct=(50, 100), loads_pct=(49.9, 50.1))
    cells = delay_cells(cfg)
    assert len(cells) == 8
    assert cells[0] == DelayCell(64, 50, 49.9, cfg.trial_ns)
    assert cells[1] == DelayCell(64, 50, 50.1, cfg.trial_ns)
    assert cells[-1] == DelayCell(128, 100, 50.1, cfg.trial_ns)
