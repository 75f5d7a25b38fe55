"""The live backend's mapping of an RFC 2544 trial to the study's per-frame records."""

import numpy as np
import pytest

from bufferlab.experiments.tor_switch.backend import LOST
from bufferlab.experiments.tor_switch.live import burst_lag_ns, frame_records
from bufferlab.traffic.records import FRAME_DTYPE
from bufferlab.traffic.rfc2544.tester import PortCounts, TrialResult

T0 = 1_700_000_000_000_000_000  # a CLOCK_REALTIME instant, ns


def _trial(received: list[tuple[int, int, int, int]], sent: tuple[int, int]) -> TrialResult:
    """Flows 7 (A) and 8 (B); ``received`` holds (flow, seq, tx_ns, rx_ns) in arrival order."""
    frames = np.zeros(len(received), dtype=FRAME_DTYPE)
    for i, (flow, seq, tx, rx) in enumerate(received):
        frames[i] = (flow, seq, 64, 0, tx, 1, rx, 1)
    ports = [PortCounts(0, 7, sent[0], 0, 0, 0.0, 0), PortCounts(1, 8, sent[1], 0, 0, 0.0, 0)]
    return TrialResult(64, 0.45, None, 1.0, ports, frames)


def test_received_frames_keep_their_stamps_from_the_first_send_and_lost_ones_are_lost():
    trial = _trial([(7, 0, T0, T0 + 500), (8, 0, T0 + 100, T0 + 900),
                    (7, 2, T0 + 2000, T0 + 2600), (8, 1, T0 + 1100, T0 + 1800),
                    (8, 1, T0 + 1100, T0 + 1900)],  # a duplicate counts once
                   sent=(3, 2))
    rec = frame_records(trial)
    assert rec.source.tolist() == [0, 0, 0, 1, 1]
    assert rec.seq.tolist() == [0, 1, 2, 0, 1]
    # A's seq 1 was lost: its send time lies between its neighbours' (0 and 2,000 ns).
    assert rec.in_ns.tolist() == [0, 1000, 2000, 100, 1100]
    assert rec.out_ns.tolist() == [500, LOST, 2600, 900, 1800]
    assert rec.latency_ns().tolist() == [500, 600, 800, 700]
    assert rec.latency_ns(from_ns=1000).tolist() == [600, 700]


def test_a_trial_without_received_frames_is_an_error():
    with pytest.raises(RuntimeError, match="port C received no frame"):
        frame_records(_trial([], sent=(3, 3)))


def test_burst_lag_is_the_latest_departure_behind_the_line_rate_schedule():
    # 1,000 ns per frame from A's first frame at T0: B starts 300 ns late, A's seq 2 leaves
    # 150 ns late, frames ahead of schedule (a fast pacer) do not count.
    trial = _trial([(8, 0, T0 + 300, T0 + 900), (7, 1, T0 + 950, T0 + 1950),
                    (7, 0, T0, T0 + 400), (7, 2, T0 + 2150, T0 + 3000)], sent=(3, 1))
    assert burst_lag_ns(trial, 1000.0) == 300
    with pytest.raises(RuntimeError, match="port C received no frame of the burst"):
        burst_lag_ns(_trial([], sent=(1, 1)), 1000.0)
