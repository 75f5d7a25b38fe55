"""One run of the study on a backend: both tests, the analysis, the checks, the files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.tor_switch.backend import Backend
from bufferlab.experiments.tor_switch.checks import run_checks
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.evaluation import summary_rows
from bufferlab.experiments.tor_switch.report import Outputs, write_outputs
from bufferlab.experiments.tor_switch.runner import delay_cells, run_buffer_test, run_delay_test


@dataclass(frozen=True)
class RunResult:
    """Rows, checks and files of one run."""

    burst_rows: list[dict]
    delay_rows: list[dict]
    summary: list[dict]
    checks: list[Check]
    outputs: Outputs

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)


def run(config: TorConfig, backend: Backend, out_dir: str | Path,
        progress_out: TextIO | None = None, jobs: int = 1) -> RunResult:
    """Runs the buffer-size and the forwarding-delay test (its cells in ``jobs`` processes),
    then writes CSV, plots and report."""
    steps = (len(config.burst_frame_sizes_bytes) * len(config.burst_thresholds_pct)
             + len(delay_cells(config)))
    progress = Progress(steps, label="tor_switch", out=progress_out)
    burst_rows = run_buffer_test(backend, config, progress)
    delay_rows = run_delay_test(backend, config, progress, jobs)
    summary = summary_rows(delay_rows)
    checks = run_checks(burst_rows, delay_rows, summary)
    outputs = write_outputs(out_dir, config, backend.describe(), burst_rows, delay_rows,
                            summary, checks, virtual=backend.virtual)
    return RunResult(burst_rows, delay_rows, summary, checks, outputs)
