"""The study's procedure on a `Lab`: every phase run, then the ping trials, one at a time.

Trials share one network (one switch, two hosts) and run in wall-clock time, so they run in
turn rather than on the grid runner; each prints a progress line with its accounting.
"""

from __future__ import annotations

from dataclasses import dataclass

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.qbss.backend import Lab, PhaseTrial, PingTrial
from bufferlab.experiments.qbss.config import QbssConfig


@dataclass(frozen=True)
class Trials:
    """Everything a study ran: the phase runs in config order, then the ping trials."""

    phase: list[PhaseTrial]
    ping: list[PingTrial]


def run_trials(lab: Lab, config: QbssConfig, progress: Progress) -> Trials:
    """Each of ``config.runs`` through the phase schedule, then a ping trial per
    ``config.ping_bulk`` entry (the idle one first)."""
    phase = []
    for run in config.runs:
        trial = lab.phase_trial(run)
        phase.append(trial)
        progress.step(f"{run.name}: {trial.accounting.describe()}")
    ping = []
    for bulk in config.ping_bulk:
        trial = lab.ping_trial(bulk)
        ping.append(trial)
        progress.step(f"ping beside {bulk or 'no'} bulk: {trial.accounting.describe()}")
    return Trials(phase, ping)
