"""Plots, Markdown reports, CSV loading and the progress reporter write what they promise."""

import io

import numpy as np
import pytest
from matplotlib import image as mpimg

from bufferlab.analysis import plots
from bufferlab.analysis.data import load_csv
from bufferlab.analysis.progress import Progress
from bufferlab.analysis.report import Report, format_cell

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    pixels = mpimg.imread(path)
    return pixels.shape[1], pixels.shape[0]


def test_time_series_plot_is_a_png_of_the_configured_size(tmp_path):
    t_ms = np.arange(0, 200, 1.0)
    out = plots.plot_time_series(
        tmp_path / "figs" / "rates.png",
        {f"flow {i}": (t_ms, 2.5 + 0.1 * i * np.sin(t_ms / 10)) for i in range(4)},
        "time (ms)", "throughput (Gbit/s)", title="Target rate",
        reference_lines={"fair share 2.5 Gbit/s": 2.5}, step=True,
    )
    assert out.read_bytes()[:8] == PNG_MAGIC
    w, h = plots.FIGURE_SIZE_IN
    assert _png_size(out) == (round(w * plots.DPI), round(h * plots.DPI))


def test_time_series_close_up_needs_a_band_low_to_high(tmp_path):
    t_ms = np.arange(0, 200, 1.0)
    queue = {"queue": (t_ms, np.where(t_ms < 10, 1000.0, 24.0))}
    out = plots.plot_time_series(tmp_path / "near.png", queue, "time (ms)", "queue (KB)",
                                 reference_lines={"Qeq": 24.0}, y_range=(0.0, 100.0))
    assert out.read_bytes()[:8] == PNG_MAGIC
    for bad in ((100.0, 0.0), (5.0, 5.0)):
        with pytest.raises(ValueError, match="need low < high"):
            plots.plot_time_series(tmp_path / "bad.png", queue, "time (ms)", "queue (KB)",
                                   y_range=bad)
    assert not (tmp_path / "bad.png").exists()


def test_sweep_plot_draws_its_series_and_marks(tmp_path):
    out = plots.plot_sweep(
        tmp_path / "sweep.png",
        {"ours": ([0.1, 0.5, 1.0], [2.0, 5.0, 8.0]), "seed": ([0.2, 1.0], [2.0, 8.0])},
        "buffer / BDP (ratio)", "throughput (Gbit/s)", vertical_lines={"BDP": 1.0},
        log_x=True)
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert _png_size(out) == (round(plots.FIGURE_SIZE_IN[0] * plots.DPI),
                              round(plots.FIGURE_SIZE_IN[1] * plots.DPI))
    with pytest.raises(ValueError, match="names no unit"):
        plots.plot_sweep(tmp_path / "x.png", {}, "buffer", "throughput (Gbit/s)")


def test_plots_refuse_axes_without_units(tmp_path):
    with pytest.raises(ValueError, match="names no unit"):
        plots.plot_time_series(tmp_path / "x.png", {"a": ([0, 1], [0, 1])}, "time", "rate (bit/s)")
    with pytest.raises(ValueError, match="names no unit"):
        plots.plot_bars(tmp_path / "x.png", ["a"], [1.0], "run (id)", "fairness")
    assert not (tmp_path / "x.png").exists()
    assert plots.axis_unit("delay (µs)") == "µs"


def test_fit_plot_returns_the_fits_it_draws(tmp_path):
    sizes = np.array([64, 128, 256, 512, 1024, 1280, 1518])
    fits = plots.plot_fits(
        tmp_path / "delay.png",
        {"buffer 10%": (sizes, 0.008 * sizes + 2), "buffer 50%": (sizes, 0.008 * sizes + 9)},
        "frame size (bytes)", "minimum delay (µs)",
    )
    assert fits["buffer 50%"].intercept == pytest.approx(9)
    assert fits["buffer 10%"].slope == pytest.approx(0.008)
    assert (tmp_path / "delay.png").read_bytes()[:8] == PNG_MAGIC


def test_bar_plot(tmp_path):
    out = plots.plot_bars(tmp_path / "fi.png", ["run149", "run7"], [1.0, 0.97], "run (name)",
                          "Jain's fairness index (unitless)", reference=1.0)
    assert out.read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(ValueError, match="labels"):
        plots.plot_bars(tmp_path / "fi.png", ["a"], [1, 2], "run (name)", "J (unitless)")


def test_report_writes_tables_and_relative_plot_links(tmp_path):
    figure = tmp_path / "plots" / "fi.png"
    report = Report("BCN baseline")
    report.paragraph("4 sources × 4.5 Gbit/s into 10 Gbit/s.")
    report.section("Fairness")
    report.table(["run", "max |δ| (unitless)", "FI (unitless)", "drops (frames)"],
                 [["run149", 0.084, 1.0, 0], ["run8", 0.47612, 0.91, 1406],
                  ["run9", float("nan"), 0.99, 3]])
    report.image(figure, "Jain's index per run")
    path = report.write(tmp_path / "reports" / "run1.md")
    assert path.read_text() == (
        "# BCN baseline\n\n"
        "4 sources × 4.5 Gbit/s into 10 Gbit/s.\n\n"
        "## Fairness\n\n"
        "| run | max \\|δ\\| (unitless) | FI (unitless) | drops (frames) |\n"
        "|---|---|---|---|\n"
        "| run149 | 0.084 | 1 | 0 |\n"
        "| run8 | 0.4761 | 0.91 | 1406 |\n"
        "| run9 | – | 0.99 | 3 |\n\n"
        "![Jain's index per run](../plots/fi.png)\n"
    )
    with pytest.raises(ValueError, match="cells"):
        report.table(["a", "b"], [[1]])
    assert format_cell(True) == "yes" and format_cell("a|b") == "a\\|b"


def test_load_csv_numeric_and_text_columns(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("flow,rx_ns,label\n1,100,a\n2,,b\n")
    cols = load_csv(path)
    assert list(cols["flow"]) == [1.0, 2.0]
    assert cols["rx_ns"][0] == 100.0 and np.isnan(cols["rx_ns"][1])
    assert list(cols["label"]) == ["a", "b"]
    path.write_text("a,b\n1,2\n3\n")
    with pytest.raises(ValueError, match=r"r.csv:3"):
        load_csv(path)


def test_progress_lines_with_eta():
    now = [100.0]
    out = io.StringIO()
    progress = Progress(4, "rfc2544", out=out, clock=lambda: now[0])
    now[0] = 110.0
    progress.step("64-byte frames")
    now[0] = 120.0
    progress.step()
    now[0] = 280.0
    progress.step("1280-byte frames")
    assert out.getvalue().splitlines() == [
        "rfc2544: step 1/4 (25%) 64-byte frames — elapsed 10.0 s, ETA 30.0 s",
        "rfc2544: step 2/4 (50%) — elapsed 20.0 s, ETA 20.0 s",
        "rfc2544: step 3/4 (75%) 1280-byte frames — elapsed 3 min 00 s, ETA 1 min 00 s",
    ]
    with pytest.raises(ValueError):
        Progress(0)
