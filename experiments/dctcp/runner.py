"""The procedure: the grid of cells (per algorithm, the long flows alone, then each incast
fan-in beside them), run on the common grid runner (Dask, or this process)."""

from __future__ import annotations

from typing import TextIO

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.common.grid import GridOutcome, run_grid
from bufferlab.experiments.dctcp.backend import INCAST, LONG, Cell, CellResult
from bufferlab.experiments.dctcp.config import DctcpConfig
from bufferlab.experiments.dctcp.virtual_time import run_cell


def cells(config: DctcpConfig) -> list[Cell]:
    """Every cell in run order."""
    return [cell for algorithm in config.algorithms
            for cell in [Cell(LONG, algorithm, 0, config),
                         *(Cell(INCAST, algorithm, n, config) for n in config.incast_senders)]]


def _name(cell: Cell) -> str:
    return cell.name


def run_cells(config: DctcpConfig, jobs: int | None = 1, scheduler: str | None = None,
              progress_out: TextIO | None = None) -> GridOutcome[CellResult]:
    """Every cell on the grid runner, a progress line per finished cell (standard error
    unless ``progress_out``)."""
    grid = cells(config)
    progress = Progress(len(grid), label="dctcp", out=progress_out)

    def done(cell: Cell, result: CellResult | None) -> None:
        if result is None:
            progress.step(f"{cell.name}: FAILED")
            return
        progress.step(f"{cell.name}: {result.bottleneck_bps / 1e9:.2f} Gbit/s, mean queue "
                      f"{result.queue.mean / 1e3:.0f} kB, {result.drops_frames} dropped "
                      f"({result.wall_s:.1f} s)")

    return run_grid(grid, run_cell, _name, jobs=jobs, scheduler=scheduler, on_done=done)
