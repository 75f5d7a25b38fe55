"""Per-frame records and their summaries, on hand-made records (no namespaces needed)."""

import json

import numpy as np
import pytest

from bufferlab.traffic import receive
from bufferlab.traffic.records import (
    FRAME_DTYPE,
    TX_STAMP_DTYPE,
    apply_tx_stamps,
    interval_throughput,
    latency_stats,
    read_frames_csv,
    read_tx_stamps_csv,
    reordered_count,
    summarize,
    write_frames_csv,
    write_tx_stamps_csv,
)


def _frames(rows):
    """rows of (flow, seq, size_bytes, rx_ns, latency_ns) -> FRAME_DTYPE records."""
    out = np.zeros(len(rows), dtype=FRAME_DTYPE)
    for i, (flow, seq, size, rx, lat) in enumerate(rows):
        out[i] = (flow, seq, size, 0, rx - lat, 0, rx, 1)
    return out


def test_loss_duplicates_and_reordering_per_flow():
    frames = _frames([
        (1, 0, 64, 1000, 10), (1, 2, 64, 2000, 10), (1, 1, 64, 3000, 10),  # 1 reordered
        (1, 2, 64, 4000, 10),                                              # duplicate, in order
        (2, 0, 128, 5000, 20),
    ])
    total, flows = summarize(frames, sent_frames={1: 5, 2: 1, 3: 4})
    f1 = flows[1]
    assert (f1.sent_frames, f1.received_frames, f1.unique_frames) == (5, 4, 3)
    assert (f1.duplicate_frames, f1.lost_frames, f1.reordered_frames) == (1, 2, 1)
    assert f1.loss_ratio == pytest.approx(0.4)
    assert flows[2].lost_frames == 0
    # A flow that was sent but never arrived is entirely lost.
    assert (flows[3].received_frames, flows[3].lost_frames, flows[3].latency) == (0, 4, None)
    assert (total.sent_frames, total.unique_frames, total.lost_frames) == (10, 4, 6)
    assert total.duplicate_frames == 1


def test_reordering_counts_late_arrivals_only():
    assert reordered_count(np.array([0, 1, 2, 3])) == 0
    assert reordered_count(np.array([3, 0, 1, 2])) == 3
    assert reordered_count(np.array([0, 2, 1, 3])) == 1


def test_latency_percentiles_are_observed_values():
    stats = latency_stats(np.arange(1, 1001, dtype=np.int64))
    assert (stats.min_ns, stats.max_ns) == (1, 1000)
    assert stats.avg_ns == pytest.approx(500.5)
    assert (stats.p50_ns, stats.p99_ns, stats.p999_ns) == (500, 990, 999)


def test_without_sender_counts_the_sequence_span_stands_in():
    frames = _frames([(4, 10, 64, 1, 0), (4, 13, 64, 2, 0)])
    _, flows = summarize(frames)
    assert (flows[4].sent_frames, flows[4].lost_frames) == (4, 2)


def test_throughput_per_interval_counts_line_bits():
    # 1518-byte frames count 1538 bytes on the wire.
    frames = _frames([(0, i, 1518, 1_000_000 + i * 400_000, 0) for i in range(5)])
    intervals = interval_throughput(frames, 1_000_000)
    assert [i.frames for i in intervals] == [3, 2]
    assert intervals[0].start_ns == 1_000_000
    assert intervals[0].rate_bps == pytest.approx(3 * 1538 * 8 * 1000)
    with pytest.raises(ValueError):
        interval_throughput(frames, 0)


def test_kernel_tx_stamps_replace_header_stamps_by_flow_and_seq():
    frames = _frames([(1, 0, 64, 100, 50), (1, 1, 64, 200, 50), (2, 0, 64, 300, 50)])
    stamps = np.array([(1, 1, 170), (2, 0, 260), (2, 9, 1)], dtype=TX_STAMP_DTYPE)
    assert apply_tx_stamps(frames, stamps) == 2
    assert frames["tx_ns"].tolist() == [50, 170, 260]
    assert frames["tx_kernel"].tolist() == [0, 1, 1]


def test_csv_round_trips(tmp_path):
    frames = _frames([(1, 0, 64, 100, 50), (2, 7, 9000, 900, 300)])
    write_frames_csv(frames, tmp_path / "f.csv")
    lines = (tmp_path / "f.csv").read_text().splitlines()
    assert lines[1] == "1,0,64,0,50,0,100,1,50"
    assert np.array_equal(read_frames_csv(tmp_path / "f.csv"), frames)
    stamps = np.array([(1, 0, 5)], dtype=TX_STAMP_DTYPE)
    write_tx_stamps_csv(stamps, tmp_path / "t.csv")
    assert np.array_equal(read_tx_stamps_csv(tmp_path / "t.csv"), stamps)
    (tmp_path / "bad.csv").write_text("seq,flow\n1,2\n")
    with pytest.raises(ValueError, match="header"):
        read_frames_csv(tmp_path / "bad.csv")


def test_receiver_command_rejoins_and_summarises_saved_records(tmp_path, capsys):
    frames = _frames([(1, 0, 64, 100, 50), (1, 1, 64, 200, 50), (1, 3, 64, 300, 50)])
    write_frames_csv(frames, tmp_path / "f.csv")
    write_tx_stamps_csv(np.array([(1, 1, 190)], dtype=TX_STAMP_DTYPE), tmp_path / "t.csv")
    status = receive.main(["--from-csv", str(tmp_path / "f.csv"), "--tx-stamps-csv",
                           str(tmp_path / "t.csv"), "--sent", "1=5", "--csv",
                           str(tmp_path / "joined.csv")])
    assert status == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kernel_tx_stamped_frames"] == 1
    assert summary["flows"]["1"]["lost_frames"] == 2
    assert summary["total"]["latency"]["min_ns"] == 10
    joined = read_frames_csv(tmp_path / "joined.csv")
    assert joined["tx_ns"].tolist() == [50, 190, 250]
    assert receive.main(["--from-csv", str(tmp_path / "nope.csv")]) == 2
