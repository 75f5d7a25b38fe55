"""Writes a run's results: CSV of every cell, plots like the seed's slides, a Markdown report."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bufferlab.analysis import plots
from bufferlab.analysis.report import Report
from bufferlab.analysis.stats import DEFAULT_PERCENTILES
from bufferlab.controller.tofino_mapping import cells_up
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.common.wire import FCS_BYTES
from bufferlab.experiments.tor_switch.config import (
    SEED_BURST_FRAMES,
    SEED_POOL_BYTES,
    TorConfig,
)
from bufferlab.experiments.tor_switch.evaluation import (
    METRIC_NAMES,
    METRICS,
    congested_fits_against_threshold,
    fits_against_size,
    fits_against_threshold,
    is_congesting,
    multivariate,
    univariate,
)
from bufferlab.traffic.rfc2544.report import write_csv

# The frame size and threshold the seed's buffer-size results are normalised to.
_SHAPE_REFERENCE = (512, 100)


@dataclass(frozen=True)
class Outputs:
    """Where a run's files went."""

    report: Path
    csv: list[Path]
    plots: list[Path]


def _fittable(groups: dict) -> dict:
    """Groups with enough distinct x values for a line with errors."""
    return {k: v for k, v in groups.items() if len(v[0]) >= 3 and len(set(v[0])) >= 2}


def _plots(out: Path, summary: Sequence[dict], burst_rows: Sequence[dict]) -> list[Path]:
    paths = []
    for metric in METRICS:
        name = METRIC_NAMES[metric]
        by_threshold = _fittable({
            f"buffer {t} %": ([r["frame_size_bytes"] for r in summary if r["threshold_pct"] == t
                               and not math.isnan(r[metric])],
                              [r[metric] for r in summary if r["threshold_pct"] == t
                               and not math.isnan(r[metric])])
            for t in sorted({r["threshold_pct"] for r in summary})})
        if by_threshold:
            path = out / f"delay_{name}_vs_frame_size.png"
            plots.plot_fits(path, by_threshold, "frame size (bytes)", f"{name} delay (µs)",
                            title=f"{name.capitalize()} delay vs packet size, per buffer (%)")
            paths.append(path)
        by_size = _fittable({
            f"{s} B": ([r["threshold_pct"] for r in summary if r["frame_size_bytes"] == s
                        and not math.isnan(r[metric])],
                       [r[metric] for r in summary if r["frame_size_bytes"] == s
                        and not math.isnan(r[metric])])
            for s in sorted({r["frame_size_bytes"] for r in summary})})
        if by_size:
            path = out / f"delay_{name}_vs_threshold.png"
            plots.plot_fits(path, by_size, "buffer threshold (% of pool)", f"{name} delay (µs)",
                            title=f"{name.capitalize()} delay vs buffer (%), per packet size")
            paths.append(path)
    if burst_rows:
        path = out / "buffer_size.png"
        plots.plot_bars(path, [f"{r['frame_size_bytes']} B, {r['threshold_pct']} %"
                               for r in burst_rows],
                        [r["burst_per_port_frames"] for r in burst_rows],
                        "frame size, threshold (bytes, % of pool)",
                        "longest loss-free burst per port (frames)",
                        title="Back-to-back frames absorbed (A and B at once into C)")
        paths.append(path)
    return paths


def _burst_section(report: Report, burst_rows: Sequence[dict], cell_bytes: int | None,
                   tm_overhead_bytes: int) -> None:
    report.section("Buffer size (RFC 2544 back-to-back, A and B at once into C)")
    ours = {(r["frame_size_bytes"], r["threshold_pct"]): r["burst_per_port_frames"]
            for r in burst_rows}
    ref_ours = ours.get(_SHAPE_REFERENCE)
    ref_seed = SEED_BURST_FRAMES[_SHAPE_REFERENCE]
    rows = []
    for r in burst_rows:
        key = (r["frame_size_bytes"], r["threshold_pct"])
        seed = SEED_BURST_FRAMES.get(key)
        cells = [r["threshold_cells"], r["frame_cells"]] if cell_bytes else []
        rows.append([r["frame_size_bytes"], r["threshold_pct"], r["threshold_bytes"], *cells,
                     r["burst_per_port_frames"], r["burst_total_frames"],
                     seed if seed is not None else "–",
                     r["burst_per_port_frames"] / ref_ours if ref_ours else math.nan,
                     seed / ref_seed if seed is not None else math.nan])
    cell_headers = (["threshold (cells)", "frame (cells)"] if cell_bytes else [])
    report.table(["frame size (bytes)", "threshold (% of pool)", "threshold (bytes)",
                  *cell_headers, "burst per port (frames)", "burst A+B (frames)",
                  "seed (frames)", "ours / ours at 512 B, 100 % (ratio)",
                  "seed / seed at 512 B, 100 % (ratio)"],
                 rows)
    unit = (f"threshold cells / frame cells (the TM counts {cell_bytes}-byte cells, and a frame "
            f"with the program's {tm_overhead_bytes}-byte bridged header takes whole ones)"
            if cell_bytes else "threshold bytes / frame bytes")
    report.paragraph(
        "Each source sends the burst at line rate while C drains at line rate, so the queue "
        "grows by about one frame per frame time and a burst of N frames per port leaves "
        f"about N frames buffered: N ≈ {unit}. Absolute counts differ "
        "from the seed's because our pool is scaled down; the shape (ratios to the 512-byte, "
        "100 % cell) is what carries over.")


def _cell_tables(report: Report, delay_rows: Sequence[dict]) -> None:
    report.section("Forwarding delay per cell (latency window only)")
    for size in sorted({r["frame_size_bytes"] for r in delay_rows}):
        report.paragraph(f"**Frame size {size} bytes (incl. FCS)**")
        report.table(
            ["threshold (% of pool)", "load per port (% of line rate)", "sent (frames)",
             "lost (frames)", "measured (frames)", "min delay (µs)", "avg delay (µs)",
             "max delay (µs)", "p99 delay (µs)"],
            [[r["threshold_pct"], r["load_per_port_pct"], r["sent_frames"], r["lost_frames"],
              r["measured_frames"], r["delay_min_us"], r["delay_avg_us"], r["delay_max_us"],
              r["delay_p99_us"]] for r in delay_rows if r["frame_size_bytes"] == size])


def _univariate_section(report: Report, summary: Sequence[dict], delay_rows: Sequence[dict]
                        ) -> None:
    report.section("Univariate statistics")
    pct = DEFAULT_PERCENTILES
    headers = ["delay (µs)", "over", "n (cells)", "min (µs)", "mean (µs)", "median (µs)",
               "max (µs)", "stdev (µs)", *(f"p{p:g} (µs)" for p in pct)]
    rows = []
    congested = [r for r in delay_rows if is_congesting(r["load_per_port_pct"])]
    for label, data in (("(size, threshold) summaries", summary), ("congesting cells", congested)):
        for metric, stats in univariate(data).items() if data else ():
            rows.append([METRIC_NAMES[metric], label, *stats.row(pct)])
    report.table(headers, rows)


def _regression_section(report: Report, summary: Sequence[dict], delay_rows: Sequence[dict]
                        ) -> None:
    report.section("Linear regression")
    rows = []
    for metric in METRICS:
        for threshold, fit in fits_against_size(summary, metric).items():
            rows.append([METRIC_NAMES[metric], f"buffer {threshold} %", fit.slope * 1000,
                         fit.intercept, fit.r_squared, fit.n])
    report.paragraph("Delay against frame size, per threshold (summaries over the loads):")
    report.table(["delay", "series", "slope (ns/byte)", "intercept (µs)", "R² (unitless)",
                  "points (cells)"], rows)
    rows = []
    for metric in METRICS:
        for size, fit in fits_against_threshold(summary, metric).items():
            rows.append([METRIC_NAMES[metric], f"{size} B, all loads", fit.slope,
                         fit.intercept, fit.r_squared, fit.n])
        for (size, load), fit in congested_fits_against_threshold(delay_rows, metric).items():
            rows.append([METRIC_NAMES[metric], f"{size} B at {load:g} % per port", fit.slope,
                         fit.intercept, fit.r_squared, fit.n])
    report.paragraph("Delay against threshold, per frame size (all loads, and each congesting "
                     "load on its own):")
    report.table(["delay", "series", "slope (µs/%)", "intercept (µs)", "R² (unitless)",
                  "points (cells)"], rows)
    report.section("Multivariate regression: delay ≈ b0 + b1·size + b2·threshold")
    rows = []
    for metric in METRICS:
        fit = multivariate(summary, metric)
        if fit is not None:
            rows.append([METRIC_NAMES[metric], fit.intercept, fit.b1 * 1000, fit.b1_stderr * 1000,
                         fit.b2, fit.b2_stderr, fit.r_squared, fit.adjusted_r_squared, fit.n])
    report.table(["delay", "b0 (µs)", "b1 (ns/byte)", "b1 stderr (ns/byte)", "b2 (µs/%)",
                  "b2 stderr (µs/%)", "R² (unitless)", "adjusted R² (unitless)",
                  "points (cells)"], rows)


def fill_ms(config: TorConfig, frame_size_bytes: int, threshold_pct: int, load_pct: float
            ) -> float:
    """Time two sources at ``load_pct`` each need to fill C's share from empty, ms: the share
    holds share/(L − 4) frames and C falls behind by (2·load − 1) of its frame rate."""
    excess = 2 * load_pct / 100 - 1
    share = config.pool_bytes * threshold_pct / 100
    frames = share / (frame_size_bytes - 4)
    return frames * (frame_size_bytes + 20) * 8e3 / (config.port_rate_bps * excess)


def _scaling(report: Report, config: TorConfig) -> None:
    report.section("Scaling")
    drain_ms = config.pool_bytes * 8e3 / config.port_rate_bps
    report.paragraph(
        f"The seed's switch held 6,398 frames of 512 bytes at 100 % (about "
        f"{SEED_POOL_BYTES:,} bytes); this run's pool is {config.pool_bytes:,} bytes, "
        f"{config.pool_bytes / SEED_POOL_BYTES:.3g} of it, at {config.port_rate_bps:,} bit/s. "
        f"Emptying the whole pool takes {drain_ms:.4g} ms, so a trial of {config.trial_ms:g} ms is "
        f"{config.trial_ms / drain_ms:.0f} pool drain times. Frame counts and delays scale with "
        "the pool; ratios, linearity and R² do not. At a congesting load the queue must reach "
        "the threshold before the latency window opens for the window to see it full:")
    rows = []
    smallest = min(config.frame_sizes_bytes)
    window_ms = config.latency_from_ns / 1e6
    for load in config.loads_pct:
        if is_congesting(load):
            needed = fill_ms(config, smallest, max(config.thresholds_pct), load)
            rows.append([load, smallest, max(config.thresholds_pct), needed, window_ms,
                         needed <= window_ms])
    if rows:
        report.table(["load per port (% of line rate)", "frame size (bytes)",
                      "threshold (% of pool)", "fill time (ms)", "window opens at (ms)",
                      "full before the window"], rows)


def _differences(report: Report, config: TorConfig, virtual: bool, cell_bytes: int | None,
                 tm_overhead_bytes: int) -> None:
    byte_ns = 8e9 / config.port_rate_bps
    report.section("Where the emulator differs from the seed, and why")
    if cell_bytes:
        small, large = (cells_up(size - FCS_BYTES + tm_overhead_bytes, cell_bytes)
                        for size in (512, 1024))
        report.paragraph(
            f"* **Cells (the TNA port).** The share is the TM's queue limit in {cell_bytes}-byte "
            f"cells (the share in bytes rounded up), and a frame of L bytes takes ⌈(L − 4 + "
            f"{tm_overhead_bytes}) / {cell_bytes}⌉ cells: the TM stores the frame with the "
            f"program's {tm_overhead_bytes}-byte bridged header, in whole cells. A 512-byte "
            f"frame then holds {small} cells and a 1024-byte one {large}, so twice the frame "
            f"size is {large}/{small} = {large / small:.3g} times the cells: the ratio in bytes "
            f"misses its expectation by {100 * abs(large / small / 2 - 1):.1f} % where the "
            "ratio in cells meets its own. The frames buffered at a full share, and so the "
            "maximum and average delay at congesting loads, follow the cells; the minimum "
            "delay does not depend on the buffer.")
    if virtual:
        absolute = (
            f"* **Absolute delays.** Our switch is store-and-forward with no pipeline time: a "
            f"frame that finds C idle leaves its last bit (frame + 8 bytes preamble) × "
            f"{byte_ns:g} ns/byte after its last bit came in, so the minimum delay's slope is "
            "exactly one byte time of C and its intercept the preamble. The seed's hardware "
            "switch (probably cut-through, measured by the tester with its own latency "
            "definition and cable/PHY delays) shows another slope and intercept; the linearity "
            "is what carries over.\n")
        noise = "ours are exact lines (R² = 1) because virtual time has no measurement noise."
    else:
        absolute = (
            f"* **Absolute delays.** Measured from the sender's kernel TX stamp to the "
            f"receiver's kernel RX stamp: port C's serialisation ({byte_ns:g} ns/byte, the "
            "slope of the minimum delay) plus the veths, the switch process and the host "
            "stacks, a constant of tens to hundreds of µs in the intercept. The seed's tester "
            "measured at its own ports with its own latency definition; the linearity is "
            "what carries over.\n")
        noise = ("ours carry the shared machine's scheduling noise: a switch or receiver "
                 "thread held back for a few ms shows as a delay outlier (the maximum is the "
                 "most exposed statistic).")
    report.paragraph(
        absolute +
        "* **Buffer size.** The pool is scaled down (README \"Scaling\"), so frame counts and "
        "maximum delays are smaller than the seed's by the pool ratio; ratios between cells "
        "are comparable.\n"
        "* **Loss.** Above 50 % per port the sources offer C more than its line rate, so a "
        "long enough trial always fills the threshold and tail drops; the seed calls its test "
        "'no packet loss' delay, which holds only for the loads up to 50 %. The tables report "
        "the loss of every cell.\n"
        "* **Maximum vs average.** In the latency window of a congesting cell the queue sits "
        "at the threshold, so average and maximum nearly coincide there; over all loads the "
        "average mixes congested and uncongested rounds, as the seed's did.\n"
        "* **Maximum/average vs frame size.** The seed found them non-linear in frame size; "
        "here a full threshold of T bytes drains in T·(L+20)/(L−4) byte times for frames of "
        "L bytes (the buffer counts frame bytes, the wire adds preamble and gap), which is "
        "also non-linear in L and largest for the smallest frames.\n"
        "* **Regression figures.** The seed's fits of the minimum delay against packet size "
        "were y = 5.2844x + 12.722 (R² = 0.9992) and y = 6.5574x + 15.416 (R² = 0.9989), units "
        "not stated on the slides; " + noise)


def write_outputs(out_dir: str | Path, config: TorConfig, description: Sequence[tuple[str, str]],
                  burst_rows: Sequence[dict], delay_rows: Sequence[dict], summary: Sequence[dict],
                  checks: Sequence[Check], virtual: bool = True, cell_bytes: int | None = None,
                  tm_overhead_bytes: int = 0) -> Outputs:
    """Writes the CSV files, the plots and ``report.md`` into ``out_dir``; ``virtual`` says
    whether the times are the virtual backend's exact ones or measured on a live switch,
    ``cell_bytes`` the TM's cell size when the switch ran the TNA port."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_paths = []
    for name, rows in (("buffer_size.csv", burst_rows), ("delay_cells.csv", delay_rows),
                       ("delay_summary.csv", summary)):
        if rows:
            write_csv(rows, out / name)
            csv_paths.append(out / name)
    plot_paths = _plots(out, summary, burst_rows)

    report = Report("ToR switch buffer size and forwarding delay (seed 000)")
    report.section("What ran")
    report.table(["parameter", "value"], [list(p) for p in description])
    report.paragraph(
        f"Grid: frame sizes {', '.join(map(str, config.frame_sizes_bytes))} bytes; thresholds "
        f"{', '.join(map(str, config.thresholds_pct))} % of the pool; loads "
        f"{', '.join(f'{x:g}' for x in config.loads_pct)} % of line rate per source port. "
        f"Buffer-size test: {', '.join(map(str, config.burst_frame_sizes_bytes))} bytes at "
        f"{', '.join(map(str, config.burst_thresholds_pct))} %.")
    _scaling(report, config)
    report.section("Expected outcome")
    report.paragraph("\n".join(f"* {c.line()}" for c in checks))
    if burst_rows:
        _burst_section(report, burst_rows, cell_bytes, tm_overhead_bytes)
    if summary:
        report.section("Forwarding delay per frame size and threshold (over all loads)")
        report.table(["frame size (bytes)", "threshold (% of pool)", "loads (count)",
                      "lost (frames)", "min delay (µs)", "avg delay (µs)", "max delay (µs)"],
                     [[r["frame_size_bytes"], r["threshold_pct"], r["loads"], r["lost_frames"],
                       r["delay_min_us"], r["delay_avg_us"], r["delay_max_us"]]
                      for r in summary])
        _univariate_section(report, summary, delay_rows)
        _regression_section(report, summary, delay_rows)
    if plot_paths:
        report.section("Plots")
        for path in plot_paths:
            report.image(path, path.stem.replace("_", " "))
    _differences(report, config, virtual, cell_bytes, tm_overhead_bytes)
    report.section("Files")
    report.paragraph("\n".join(f"* `{p.name}`" for p in csv_paths))
    return Outputs(report.write(out / "report.md"), csv_paths, plot_paths)
