"""One run of the study on a lab: the trials, the figures, the checks, the files."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.qbss.backend import Lab
from bufferlab.experiments.qbss.checks import run_checks
from bufferlab.experiments.qbss.config import QbssConfig
from bufferlab.experiments.qbss.evaluation import (
    capture_rows,
    phase_rows,
    ping_rows,
    run_series,
    transition_rows,
)
from bufferlab.experiments.qbss.report import Outputs, write_outputs
from bufferlab.experiments.qbss.runner import Trials, run_trials

REPORT_INTERVAL_S = 3.0  # the seed's bbcp reports
TRANSITION_INTERVAL_S = 1.0  # the seed's finer reports, for the changes


@dataclass(frozen=True)
class RunResult:
    """Trials, figures, checks and files of one run."""

    trials: Trials
    phase_rows: list[dict]
    transition_rows: list[dict]
    ping_rows: list[dict]
    checks: list[Check]
    outputs: Outputs

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)


def run(config: QbssConfig, lab: Lab, out_dir: str | Path,
        progress_out: TextIO | None = None) -> RunResult:
    """Runs every trial on ``lab``, then writes CSV, plots and report into ``out_dir``."""
    started = time.monotonic()
    progress = Progress(len(config.runs) + len(config.ping_bulk), label="qbss", out=progress_out)
    trials = run_trials(lab, config, progress)
    series_1s = [run_series(t, config.phase_s, TRANSITION_INTERVAL_S) for t in trials.phase]
    series_3s = [run_series(t, config.phase_s, REPORT_INTERVAL_S) for t in trials.phase]
    phases = [row for t in trials.phase for row in phase_rows(t, config.bottleneck_bps)]
    transitions = [row for t in trials.phase
                   for row in transition_rows(t, config.phase_s, config.bottleneck_bps)]
    captures = [row for t in trials.phase for row in capture_rows(t)]
    pings = ping_rows(trials.ping) if trials.ping else []
    checks = run_checks(phases, config.runs, transitions, series_3s, config.bottleneck_bps,
                        pings, config.ping_bottleneck_bps, trials.phase, trials.ping)
    outputs = write_outputs(out_dir, config, lab.describe(), trials.phase, trials.ping,
                            series_1s, series_3s, phases, transitions, captures, pings, checks,
                            time.monotonic() - started)
    return RunResult(trials, phases, transitions, pings, checks, outputs)
