"""Runs the study's two tests on any backend and turns what it returns into table rows.

Rows are flat dicts whose keys name their units; they are what the CSV files hold and what
the analysis, the checks and the report read.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
from collections.abc import Callable

from bufferlab.analysis.progress import Progress
from bufferlab.analysis.stats import describe
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


def burst_row(config: TorConfig, cell: BurstCell, frames_per_port: int) -> dict:
    """One buffer-size result as a row."""
    threshold_bytes = config.pool_bytes * cell.threshold_pct // 100
    return {
        "frame_size_bytes": cell.frame_size_bytes,
        "threshold_pct": cell.threshold_pct,
        "threshold_bytes": threshold_bytes,
        "burst_per_port_frames": frames_per_port,
        "burst_total_frames": 2 * frames_per_port,
    }


def run_buffer_test(backend: Backend, config: TorConfig,
                    progress: Progress | None = None) -> list[dict]:
    """Longest loss-free back-to-back burst from A and B at once, per frame size and threshold."""
    rows = []
    for threshold in config.burst_thresholds_pct:
        for size in config.burst_frame_sizes_bytes:
            cell = BurstCell(size, threshold)
            longest = longest_lossless_burst(
                lambda n, cell=cell: backend.burst_trial(cell, n).lost_frames == 0)
            rows.append(burst_row(config, cell, longest))
            if progress:
                progress.step(f"buffer size {size} B at {threshold} %: {longest} frames per port")
    return rows


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


def _measure(job: tuple[Backend, DelayCell, int]) -> dict:
    """One delay cell's row (module-level so worker processes can run it)."""
    backend, cell, latency_from_ns = job
    return delay_row(cell, backend.delay_trial(cell), latency_from_ns)


def run_delay_test(backend: Backend, config: TorConfig, progress: Progress | None = None,
                   jobs: int = 1) -> list[dict]:
    """Every cell of the forwarding-delay grid, one row each, in grid order. With ``jobs`` > 1
    the cells run in that many processes (the backend must pickle and its cells must not
    share a switch, as in virtual time)."""
    work = [(backend, cell, config.latency_from_ns) for cell in delay_cells(config)]
    with contextlib.ExitStack() as stack:
        if jobs > 1:
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(jobs))
            results = pool.imap(_measure, work)
        else:
            results = map(_measure, work)
        rows = []
        for (_backend, cell, _from), row in zip(work, results, strict=True):
            rows.append(row)
            if progress:
                progress.step(f"delay {cell.frame_size_bytes} B, {cell.threshold_pct} %, "
                              f"{cell.load_pct:g} % per port: max {row['delay_max_us']:.2f} µs, "
                              f"lost {row['lost_frames']} frames")
    return rows
