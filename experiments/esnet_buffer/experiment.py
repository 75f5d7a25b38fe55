"""One run of the study: every trial, the rows, the checks, the files; live (one trial
after another on the lab) or in virtual time (the grid runner, every TCP profile)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.common.grid import TrialFailure, run_grid, where
from bufferlab.experiments.esnet_buffer.backend import Lab, Trial
from bufferlab.experiments.esnet_buffer.checks import evaluate, evaluate_by_profile
from bufferlab.experiments.esnet_buffer.config import EsnetConfig
from bufferlab.experiments.esnet_buffer.evaluation import Row, trial_row
from bufferlab.experiments.esnet_buffer.report import Outputs, write_outputs
from bufferlab.experiments.esnet_buffer.runner import run_trials, trial_specs, virtual_trials
from bufferlab.experiments.esnet_buffer.virtual_report import write_virtual_outputs
from bufferlab.experiments.esnet_buffer.virtual_time import (
    VirtualTrial,
    describe,
    run_virtual_trial,
)


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


@dataclass(frozen=True)
class VirtualRunResult:
    """A virtual run's rows, the checks of the seed's profile (which decide the outcome),
    those of the other profiles (reported beside them), failed trials and the files."""

    rows: list[Row]
    checks: list[Check]
    beside: list[Check]
    failures: list[TrialFailure]
    outputs: Outputs
    wall_s: float

    @property
    def passed(self) -> bool:
        """Whether every trial ran and every check of the seed's profile passed."""
        return not self.failures and all(c.passed for c in self.checks)


def _trial_name(trial: VirtualTrial) -> str:
    return trial.name


def run_virtual(config: EsnetConfig, out_dir: str | Path, jobs: int | None = 1,
                scheduler: str | None = None, live_dir: str | Path | None = None,
                progress_out: TextIO | None = None) -> VirtualRunResult:
    """Every trial of every profile in virtual time on the grid runner (``jobs`` local
    workers, or the Dask cluster at ``scheduler``), then the checks per profile and the
    files in ``out_dir``, beside the live run's rows in ``live_dir`` if it has any; one
    progress line per finished trial (standard error unless ``progress_out``)."""
    start = time.monotonic()
    trials = virtual_trials(config)
    progress = Progress(len(trials), label="esnet_buffer virtual", out=progress_out)

    def done(trial: VirtualTrial, result: Trial | None) -> None:
        if result is None:
            progress.step(f"{trial.name}: FAILED")
            return
        thr = result.iperf.received_bps / 1e9 if result.iperf else 0.0
        progress.step(f"{trial.name}: TCP {thr:.2f} Gbit/s, "
                      f"{result.accounting.describe()}")

    outcome = run_grid(trials, run_virtual_trial, _trial_name, jobs=jobs, scheduler=scheduler,
                       on_done=done)
    rows = [trial_row(t, config.k) for t in outcome.succeeded]
    by_profile = evaluate_by_profile(rows)
    checks = by_profile.get(config.profiles[0], [
        Check(f"{config.profiles[0]}: trials", False, "no trial of the seed's profile ran")])
    beside = [c for p in config.profiles[1:] for c in by_profile.get(p, [])]
    wall = time.monotonic() - start
    notes = [f"Run time: {wall / 60:.1f} min of wall time for {len(trials)} trials of "
             f"{config.trial_s:g} s (-O{config.omit_s:g}) in virtual time, "
             f"{where(jobs, scheduler)}."]
    notes += [f"Failed: {f.line()}" for f in outcome.failures]
    setup = describe(config.profiles, config.receive_window_bytes)
    outputs = write_virtual_outputs(out_dir, config, rows, checks, beside, setup, notes,
                                    live_dir)
    return VirtualRunResult(rows, checks, beside, outcome.failures, outputs, wall)
