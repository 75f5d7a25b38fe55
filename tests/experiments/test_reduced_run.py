"""A reduced run of the whole study on the virtual-time backend: the seed's qualitative
outcomes hold, and the CSV files, plots and report carry them."""

import io
import re

import numpy as np
import pytest

from bufferlab.analysis.data import load_csv
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.experiment import run
from bufferlab.experiments.tor_switch.virtual_time import VirtualTimeBackend

# 20 % of 12,288 B still holds a 1518-byte frame; 64-byte frames at 50.2 % per port fill
# the 100 % share in ~34 ms, before the latency window opens at 40 ms.
CONFIG = TorConfig(pool_bytes=12_288, trial_ms=80.0, frame_sizes_bytes=(64, 512, 1518),
                   thresholds_pct=(20, 60, 100), loads_pct=(49.8, 50.2),
                   burst_frame_sizes_bytes=(512, 1024), burst_thresholds_pct=(50, 100))


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    out = tmp_path_factory.mktemp("tor_switch")
    progress = io.StringIO()
    result = run(CONFIG, VirtualTimeBackend(CONFIG), out, progress_out=progress)
    return result, out, progress.getvalue()


def test_every_expectation_passes(outcome):
    result, _out, _progress = outcome
    assert [c.line()[:4] for c in result.checks] == ["PASS"] * 6, \
        [c.line() for c in result.checks]
    assert result.passed


def test_progress_has_one_line_per_burst_search_and_delay_cell(outcome):
    _result, _out, progress = outcome
    lines = progress.strip().splitlines()
    assert len(lines) == 4 + 3 * 3 * 2
    assert lines[-1].startswith("tor_switch: step 22/22 (100%) delay 1518 B, 100 %, 50.2 %")
    assert all("ETA" in line for line in lines)


def test_delay_csv_has_every_cell_with_units(outcome):
    _result, out, _progress = outcome
    cells = load_csv(out / "delay_cells.csv")
    assert list(cells) == [
        "frame_size_bytes", "threshold_pct", "load_per_port_pct", "offered_total_pct",
        "sent_frames", "received_frames", "lost_frames", "loss_pct", "measured_frames",
        "delay_min_us", "delay_avg_us", "delay_max_us", "delay_p50_us", "delay_p99_us",
        "delay_stdev_us"]
    assert cells["frame_size_bytes"].size == 18
    under = cells["load_per_port_pct"] == 49.8
    # Below line rate nothing is lost and the fastest frame takes its own serialisation.
    assert (cells["lost_frames"][under] == 0).all()
    np.testing.assert_allclose(cells["delay_min_us"][under],
                               (cells["frame_size_bytes"][under] + 8) * 8 / 1000)
    # Above it the threshold fills and tail drop loses frames in every cell.
    assert (cells["lost_frames"][~under] > 0).all()
    assert (cells["sent_frames"] == cells["received_frames"] + cells["lost_frames"]).all()


def test_maximum_delay_at_overload_is_the_share_draining(outcome):
    _result, out, _progress = outcome
    cells = load_csv(out / "delay_cells.csv")
    for i in np.flatnonzero(cells["load_per_port_pct"] == 50.2):
        size, pct = cells["frame_size_bytes"][i], cells["threshold_pct"][i]
        held = (CONFIG.pool_bytes * pct // 100) // (size - 4)
        expected_us = (held * (size + 20) + size + 8) * 8 / 1000
        assert cells["delay_max_us"][i] == pytest.approx(expected_us, rel=0.02), (size, pct)


def test_buffer_csv_and_summary(outcome):
    result, out, _progress = outcome
    burst = load_csv(out / "buffer_size.csv")
    frames = {(int(s), int(t)): int(n) for s, t, n in zip(
        burst["frame_size_bytes"], burst["threshold_pct"], burst["burst_per_port_frames"],
        strict=True)}
    assert frames == {(512, 50): 6144 // 508, (1024, 50): 6144 // 1020,
                      (512, 100): 12288 // 508, (1024, 100): 12288 // 1020}
    assert (burst["burst_total_frames"] == 2 * burst["burst_per_port_frames"]).all()
    summary = load_csv(out / "delay_summary.csv")
    assert summary["frame_size_bytes"].size == 9
    assert len(result.summary) == 9


def test_report_has_the_sections_checks_and_plots(outcome):
    result, out, _progress = outcome
    text = (out / "report.md").read_text()
    for heading in ("## What ran", "## Scaling", "## Expected outcome",
                    "## Buffer size (RFC 2544 back-to-back, A and B at once into C)",
                    "## Univariate statistics", "## Linear regression",
                    "## Multivariate regression: delay ≈ b0 + b1·size + b2·threshold",
                    "## Plots", "## Where the emulator differs from the seed, and why"):
        assert heading in text
    for check in result.checks:
        assert f"* {check.line()}" in text
    assert "| maximum | 64 B at 50.2 % per port |" in text
    assert re.search(r"\| minimum \| buffer 20 % \| 8 \| 0\.064 \| 1 \| 3 \|", text)
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(images) == 7
    assert all((out / name).stat().st_size > 0 for name in images)
    assert sorted(p.name for p in result.outputs.plots) == sorted(images)


def test_scaling_section_says_whether_the_share_fills_before_the_window(outcome):
    from bufferlab.experiments.tor_switch.report import fill_ms
    # 12,288 B / 60 B = 204.8 frames of 84 wire bytes at 0.4 % excess of 1 Gbit/s.
    assert fill_ms(CONFIG, 64, 100, 50.2) == pytest.approx(204.8 * 84 * 8 / 0.004 / 1e6)
    assert fill_ms(CONFIG, 64, 50, 50.1) == pytest.approx(fill_ms(CONFIG, 64, 100, 50.2))
    _result, out, _progress = outcome
    text = (out / "report.md").read_text()
    assert re.search(r"\| 50\.2 \| 64 \| 100 \| 34\.4\d* \| 40 \| yes \|", text)
    too_short = CONFIG.with_overrides(trial_ms=40.0)
    assert fill_ms(too_short, 64, 100, 50.2) > too_short.latency_from_ns / 1e6
