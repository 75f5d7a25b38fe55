"""RFC 2544 reporting tables and argument checks (no namespaces needed)."""

import pytest

from bufferlab.traffic.generate import line_rate_bps, max_frame_rate_fps
from bufferlab.traffic.rfc2544 import tester as rfc
from bufferlab.traffic.rfc2544.cli import parse_source
from bufferlab.traffic.rfc2544.procedures import (
    FrameLossPoint,
    ThroughputResult,
    back_to_back,
    frame_loss,
    throughput,
)
from bufferlab.traffic.rfc2544.report import markdown_tables, write_csv


def test_theoretical_frame_rates_are_rfc2544s():
    # RFC 2544's 1 Gbit/s Ethernet maxima (frame + 20 bytes preamble and gap).
    expected = {64: 1_488_095, 128: 844_595, 256: 452_899, 512: 234_962, 1024: 119_732,
                1280: 96_154, 1518: 81_274}
    for size, fps in expected.items():
        assert round(max_frame_rate_fps(1e9, size)) == fps
        assert line_rate_bps(max_frame_rate_fps(1e9, size), size) == pytest.approx(1e9)


def test_tables_per_frame_size_in_csv_and_markdown(tmp_path):
    rows = [
        FrameLossPoint(64, 2, 1.0, 2.0 * 148809.5, 1000, 900, 60.0).row(),
        FrameLossPoint(64, 2, 0.9, 2.0 * 133928.6, 900, 900, 60.0).row(),
        FrameLossPoint(1518, 2, 1.0, 2.0 * 8127.4, 100, 100, 60.0).row(),
    ]
    assert rows[0]["frame_loss_pct"] == 10.0
    write_csv(rows, tmp_path / "loss.csv")
    lines = (tmp_path / "loss.csv").read_text().splitlines()
    assert lines[0] == ("frame_size_bytes,ports,load_per_port_pct,offered_total_fps,"
                        "sent_frames,received_frames,frame_loss_pct,trial_s")
    assert len(lines) == 4
    md = markdown_tables("Frame loss rate", rows)
    assert md.count("### Frame size") == 2
    small = md.split("### Frame size 64 bytes (incl. FCS)")[1].split("###")[0]
    assert "| 100 | 297619 | 1000 | 900 | 10 | 60 |" in small
    assert small.count("\n| ") == 3  # header + two loads
    with pytest.raises(ValueError, match="no rows"):
        write_csv([], tmp_path / "empty.csv")


def test_throughput_row_names_units():
    row = ThroughputResult(512, 2, 0.25, 5000.0, 10000.0, 10000.0 * 8 * 532, 23496.2, 9, 60.0,
                           0.001).row()
    assert row["load_per_port_pct"] == 25.0
    assert row["throughput_total_line_bps"] == 42_560_000
    assert row["resolution_pct"] == 0.1
    assert row["repeated_trials_late_source"] == 0


def test_sources_parse_with_optional_address():
    assert parse_source("blt1src") == rfc.SourcePort("blt1src", None)
    assert parse_source("/proc/42/ns/net:10.0.0.1") == rfc.SourcePort("/proc/42/ns/net",
                                                                      "10.0.0.1")


def test_bad_tester_and_trial_parameters_fail_before_any_frame():
    with pytest.raises(ValueError, match="at least one source"):
        rfc.Tester([], "10.0.0.1")
    with pytest.raises(ValueError, match="line_rate_bps"):
        rfc.Tester([rfc.SourcePort(None)], "10.0.0.1", line_rate_bps=0)
    with pytest.raises(ValueError, match="settle_s"):
        rfc.Tester([rfc.SourcePort(None)], "10.0.0.1", settle_s=-1)
    t = rfc.Tester([rfc.SourcePort(None)], "10.0.0.1")
    with pytest.raises(ValueError, match="either a load"):
        t.trial(64)
    with pytest.raises(ValueError, match="either a load"):
        t.trial(64, load=0.5, duration_s=1, burst_frames=3)
    with pytest.raises(ValueError, match="positive duration"):
        t.trial(64, load=0.5)
    with pytest.raises(ValueError, match="burst_frames"):
        t.trial(64, burst_frames=0)
    with pytest.raises(ValueError, match="min_load"):
        throughput(t, 64, min_load=0.5, max_load=0.5)
    with pytest.raises(ValueError, match="resolution"):
        throughput(t, 64, resolution=0)
    with pytest.raises(ValueError, match="max_burst"):
        back_to_back(t, 64, max_burst=0)
    with pytest.raises(ValueError, match="step"):
        frame_loss(t, 64, step=0)
