"""One run of the study: every cell, the rows, the checks, the files."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.common.grid import TrialFailure, where
from bufferlab.experiments.dctcp.backend import CellResult
from bufferlab.experiments.dctcp.checks import evaluate
from bufferlab.experiments.dctcp.config import DctcpConfig
from bufferlab.experiments.dctcp.evaluation import Row, cell_row
from bufferlab.experiments.dctcp.report import Outputs, write_outputs
from bufferlab.experiments.dctcp.runner import run_cells


@dataclass(frozen=True)
class RunResult:
    """A run's results, rows, checks, failed cells, files and wall time (s)."""

    results: list[CellResult]
    rows: list[Row]
    checks: list[Check]
    failures: list[TrialFailure]
    outputs: Outputs
    wall_s: float

    @property
    def passed(self) -> bool:
        """Whether every cell ran and every check passed."""
        return not self.failures and all(c.passed for c in self.checks)


def run(config: DctcpConfig, out_dir: str | Path, jobs: int | None = 1,
        scheduler: str | None = None, progress_out: TextIO | None = None) -> RunResult:
    """Every cell, then the checks and the files in ``out_dir``."""
    start = time.monotonic()
    outcome = run_cells(config, jobs, scheduler, progress_out)
    results = outcome.succeeded
    rows = [cell_row(r) for r in results]
    checks = evaluate(rows, config)
    wall = time.monotonic() - start
    notes = [f"Run time: {wall:.1f} s of wall time for {len(outcome.results)} cells "
             f"({sum(r.wall_s for r in results):.1f} s simulating), {where(jobs, scheduler)}."]
    notes += [f"Failed: {f.line()}" for f in outcome.failures]
    outputs = write_outputs(out_dir, config, results, rows, checks, notes)
    return RunResult(results, rows, checks, outcome.failures, outputs, wall)
