"""One run of the study on a backend: both tests, the analysis, the checks, the files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.common.checks import Check, all_passed
from bufferlab.experiments.common.grid import TrialFailure
from bufferlab.experiments.tor_switch.backend import Backend
from bufferlab.experiments.tor_switch.checks import run_checks
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.evaluation import summary_rows
from bufferlab.experiments.tor_switch.report import Outputs, write_outputs
from bufferlab.experiments.tor_switch.runner import burst_cells, delay_cells, run_tests


@dataclass(frozen=True)
class RunResult:
    """Rows, checks and files of one run."""

    burst_rows: list[dict]
    delay_rows: list[dict]
    summary: list[dict]
    checks: list[Check]
    outputs: Outputs
    failures: list[TrialFailure]

    @property
    def passed(self) -> bool:
        """True when every cell ran and every check passed."""
        return not self.failures and all_passed(self.checks)


def run(config: TorConfig, backend: Backend, out_dir: str | Path,
        progress_out: TextIO | None = None, jobs: int | None = 1,
        scheduler: str | None = None) -> RunResult:
    """Runs the buffer-size and the forwarding-delay test (their cells on the grid runner:
    ``jobs`` local workers or the Dask cluster at ``scheduler``), then writes CSV, plots
    and report from every cell that ran."""
    steps = len(burst_cells(config)) + len(delay_cells(config))
    progress = Progress(steps, label="tor_switch", out=progress_out)
    rows = run_tests(backend, config, progress, jobs, scheduler)
    burst_rows, delay_rows, failures = rows.burst_rows, rows.delay_rows, rows.failures
    summary = summary_rows(delay_rows)
    checks = run_checks(burst_rows, delay_rows, summary)
    outputs = write_outputs(out_dir, config, backend.describe(), burst_rows, delay_rows,
                            summary, checks, virtual=backend.virtual,
                            cell_bytes=backend.cell_bytes,
                            tm_overhead_bytes=backend.tm_overhead_bytes)
    return RunResult(burst_rows, delay_rows, summary, checks, outputs, failures)
