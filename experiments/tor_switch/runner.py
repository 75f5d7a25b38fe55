"""Runs the study's two tests on any backend and turns what it returns into table rows.

Rows are flat dicts whose keys name their units; they are what the CSV files hold and what
the analysis, the checks and the report read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from bufferlab.analysis.progress import Progress
from bufferlab.analysis.stats import describe
from bufferlab.controller.tofino_mapping import cells_up
from bufferlab.experiments.common.grid import TrialFailure, run_grid
from bufferlab.experiments.common.wire import FCS_BYTES
from bufferlab.experiments.tor_switch.backend import Backend, BurstCell, DelayCell, FrameRecords
from bufferlab.experiments.tor_switch.config import TorConfig

DELAY_PERCENTILES = (50.0, 99.0)


def longest_lossless_burst(lossless: Callable[[int], bool], limit: int = 1 << 24) -> int:
    """RFC 2544 §26.4 search: the longest burst (frames per port) ``lossless`` accepts.

    Doubles from 1 until a burst loses frames, then bisects between the longest good and the
    shortest bad burst; 0 if even one frame is lost. Raises if nothing up to ``limit`` loses.
    """
    good, bad = 0, 1
    while lossless(bad):
        good, bad = bad, 2 * bad
        if good >= limit:
            raise RuntimeError(f"no loss with bursts up to {limit} frames per port")
    while bad - good > 1:
        mid = (good + bad) // 2
        if lossless(mid):
            good = mid
        else:
            bad = mid
    return good


def burst_row(config: TorConfig, cell: BurstCell, frames_per_port: int,
              cell_bytes: int | None = None, tm_overhead_bytes: int = 0) -> dict:
    """One buffer-size result as a row; on a TM that counts ``cell_bytes`` cells also the
    threshold and one frame (with the program's ``tm_overhead_bytes``) in cells, as the
    controller maps and the TM counts them."""
    threshold_bytes = config.pool_bytes * cell.threshold_pct // 100
    row = {
        "frame_size_bytes": cell.frame_size_bytes,
        "threshold_pct": cell.threshold_pct,
        "threshold_bytes": threshold_bytes,
        "burst_per_port_frames": frames_per_port,
        "burst_total_frames": 2 * frames_per_port,
    }
    if cell_bytes:
        row["threshold_cells"] = cells_up(threshold_bytes, cell_bytes)
        row["frame_cells"] = cells_up(cell.frame_size_bytes - FCS_BYTES + tm_overhead_bytes,
                                      cell_bytes)
    return row


def delay_row(cell: DelayCell, records: FrameRecords, latency_from_ns: int) -> dict:
    """One forwarding-delay cell as a row: counts, then latency statistics in µs of the
    frames received in the latency window (NaN when none was)."""
    sent = int(records.in_ns.size)
    received = int(records.received.sum())
    latency_us = records.latency_ns(latency_from_ns) / 1000.0
    row = {
        "frame_size_bytes": cell.frame_size_bytes,
        "threshold_pct": cell.threshold_pct,
        "load_per_port_pct": cell.load_pct,
        "offered_total_pct": round(2 * cell.load_pct, 6),
        "sent_frames": sent,
        "received_frames": received,
        "lost_frames": sent - received,
        "loss_pct": 100.0 * (sent - received) / sent if sent else 0.0,
        "measured_frames": int(latency_us.size),
    }
    if latency_us.size:
        stats = describe(latency_us, DELAY_PERCENTILES)
        row.update({
            "delay_min_us": stats.min, "delay_avg_us": stats.mean, "delay_max_us": stats.max,
            "delay_p50_us": stats.percentiles[50.0], "delay_p99_us": stats.percentiles[99.0],
            "delay_stdev_us": stats.stdev,
        })
    else:
        row.update({k: math.nan for k in ("delay_min_us", "delay_avg_us", "delay_max_us",
                                          "delay_p50_us", "delay_p99_us", "delay_stdev_us")})
    return row


def delay_cells(config: TorConfig) -> list[DelayCell]:
    """The forwarding-delay grid in run order: frame size, then threshold, then load."""
    return [DelayCell(size, threshold, load, config.trial_ns)
            for size in config.frame_sizes_bytes
            for threshold in config.thresholds_pct
            for load in config.loads_pct]


def burst_cells(config: TorConfig) -> list[BurstCell]:
    """The buffer-size grid in run order: threshold, then frame size."""
    return [BurstCell(size, threshold) for threshold in config.burst_thresholds_pct
            for size in config.burst_frame_sizes_bytes]


@dataclass(frozen=True)
class Job:
    """One cell of either test, as the grid runner ships it to a worker."""

    backend: Backend
    config: TorConfig
    cell: BurstCell | DelayCell


def run_cell(job: Job) -> dict:
    """One cell's row: the longest loss-free burst of a buffer-size cell, or a delay cell's
    counts and latency statistics (module-level so grid workers can run it)."""
    backend, config, cell = job.backend, job.config, job.cell
    if isinstance(cell, BurstCell):
        longest = longest_lossless_burst(
            lambda n: backend.burst_trial(cell, n).lost_frames == 0)
        return burst_row(config, cell, longest, backend.cell_bytes, backend.tm_overhead_bytes)
    return delay_row(cell, backend.delay_trial(cell), config.latency_from_ns)


def cell_name(job: Job) -> str:
    """A cell as progress lines and failures name it."""
    cell = job.cell
    if isinstance(cell, BurstCell):
        return f"buffer size {cell.frame_size_bytes} B at {cell.threshold_pct} %"
    return (f"delay {cell.frame_size_bytes} B, {cell.threshold_pct} %, "
            f"{cell.load_pct:g} % per port")


@dataclass(frozen=True)
class CellRows:
    """Both tests' rows in grid order (cells that failed left out) and the failures."""

    burst_rows: list[dict]
    delay_rows: list[dict]
    failures: list[TrialFailure]


def run_tests(backend: Backend, config: TorConfig, progress: Progress | None = None,
              jobs: int | None = 1, scheduler: str | None = None) -> CellRows:
    """Every cell of the buffer-size and the forwarding-delay test through the grid runner
    (`run_grid`: in this process, on a local Dask cluster of ``jobs`` workers, or on the
    cluster at ``scheduler``). Cells run elsewhere than this process only if the backend
    pickles and its cells share no switch, as in virtual time."""
    work = [Job(backend, config, cell) for cell in [*burst_cells(config), *delay_cells(config)]]

    def done(job: Job, row: dict | None) -> None:
        if not progress:
            return
        if row is None:
            what = "FAILED"
        elif isinstance(job.cell, BurstCell):
            what = f"{row['burst_per_port_frames']} frames per port"
        else:
            what = f"max {row['delay_max_us']:.2f} µs, lost {row['lost_frames']} frames"
        progress.step(f"{cell_name(job)}: {what}")

    outcome = run_grid(work, run_cell, cell_name, jobs=jobs, scheduler=scheduler, on_done=done)
    rows = list(zip(work, outcome.results, strict=True))
    return CellRows(
        burst_rows=[r for job, r in rows if r is not None and isinstance(job.cell, BurstCell)],
        delay_rows=[r for job, r in rows if r is not None and isinstance(job.cell, DelayCell)],
        failures=outcome.failures)
