"""One run of the study: every trial, the rows, the checks, the files."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.esnet_buffer.backend import Lab
from bufferlab.experiments.esnet_buffer.checks import evaluate
from bufferlab.experiments.esnet_buffer.config import EsnetConfig
from bufferlab.experiments.esnet_buffer.evaluation import Row, trial_row
from bufferlab.experiments.esnet_buffer.report import Outputs, write_outputs
from bufferlab.experiments.esnet_buffer.runner import run_trials, trial_specs


@dataclass(frozen=True)
class RunResult:
    """A run's rows, checks and files."""

    rows: list[Row]
    checks: list[Check]
    outputs: Outputs

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return all(c.passed for c in self.checks)


def run(config: EsnetConfig, lab: Lab, out_dir: str | Path,
        setup: list[tuple[str, str]] | None = None,
        progress: Callable[[str], None] = print) -> RunResult:
    """Every trial on ``lab``, then the checks and the files in ``out_dir``."""
    start = time.monotonic()
    trials = run_trials(trial_specs(config), lab, progress)
    rows = [trial_row(t, config.k) for t in trials]
    checks = evaluate(rows)
    minutes = (time.monotonic() - start) / 60
    notes = [f"Run time: {minutes:.1f} min for {len(trials)} trials of {config.trial_s:g} s."]
    outputs = write_outputs(out_dir, config, rows, checks, setup or [], notes)
    return RunResult(rows, checks, outputs)
