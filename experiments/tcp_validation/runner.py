"""The procedure: every cell's scenario written, run in virtual time (on the grid runner)
and live (`live_repeats` trials, an invalid one run again up to `attempts` times, each
reported), with a progress line and ETA per live trial."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bufferlab.experiments.common.grid import run_grid
from bufferlab.experiments.scenario import Scenario, load_scenario
from bufferlab.experiments.tcp_validation.cells import write_cell
from bufferlab.experiments.tcp_validation.compare import CellRuns
from bufferlab.experiments.tcp_validation.config import Cell, ValidationConfig
from bufferlab.experiments.tcp_validation.measure import RunResult
from bufferlab.experiments.tcp_validation.virtual_time import run_virtual

#: Extra live trials allowed per cell to replace invalid ones.
REPLACEMENTS = 2


@dataclass(frozen=True)
class VirtualJob:
    """One virtual run: the scenario file and the seconds left out."""

    name: str
    scenario: Path
    omit_s: int


def run_virtual_job(job: VirtualJob) -> RunResult:
    """Runs one scenario file in virtual time (module-level: grid workers run it)."""
    return run_virtual(load_scenario(job.scenario), job.omit_s)


class LiveBackend:
    """What the procedure needs of the live world (a test double can stand in)."""

    def trials(self, scenario: Scenario, omit_s: int, count: int,
               progress: Callable[[RunResult], None]) -> list[RunResult]:
        """``count`` valid trials of ``scenario`` if it can (up to REPLACEMENTS more for
        invalid ones), every trial returned in order."""
        from bufferlab.experiments.tcp_validation.live import LiveRunner

        out: list[RunResult] = []
        with LiveRunner(scenario, omit_s, cpu_saturation=self.cpu_saturation) as runner:
            while sum(r.valid for r in out) < count and len(out) < count + REPLACEMENTS:
                result = runner.run()
                out.append(result)
                progress(result)
        return out

    def __init__(self, cpu_saturation: float = 0.9) -> None:
        """``cpu_saturation``: the switch's packet-thread share that invalidates a trial."""
        self.cpu_saturation = cpu_saturation


def write_cells(config: ValidationConfig, out: Path) -> dict[Cell, Path]:
    """Each cell's scenario and switch config under ``out``/cells/<cell>/."""
    return {cell: write_cell(cell, config, out / "cells" / cell.name) for cell in config.cells()}


def run_cells(config: ValidationConfig, out: Path, live: LiveBackend,
              jobs: int | None = 1, scheduler: str | None = None,
              log: Callable[[str], None] = print,
              recorded: Mapping[str, Sequence[RunResult]] | None = None,
              ) -> tuple[list[CellRuns], list[str]]:
    """Every cell in both worlds (live: the ``recorded`` trials of a cell when given, and
    nothing is run live); returns the runs of cells whose virtual run succeeded and the
    failures (a virtual run that raised, a live cell that raised or was not recorded)."""
    paths = write_cells(config, out)
    cells = list(paths)
    log(f"virtual time: {len(cells)} cells")
    outcome = run_grid([VirtualJob(c.name, paths[c], config.omit_s) for c in cells],
                       run_virtual_job, lambda j: j.name, jobs=jobs, scheduler=scheduler)
    failures = [f.line() for f in outcome.failures]
    planned = len(cells) * config.live_repeats
    done = 0
    started = time.monotonic()
    runs: list[CellRuns] = []
    for cell, virtual in zip(cells, outcome.results, strict=True):
        if virtual is None:
            continue

        def progress(result: RunResult, cell: Cell = cell) -> None:
            nonlocal done
            done += 1
            left = (time.monotonic() - started) / done * max(0, planned - done)
            log(f"live {done}/{planned} {cell.name}: {result.goodput_bps / 1e6:.2f} Mbit/s, "
                f"{result.admission_drops} dropped; {result.describe()}; ETA {left / 60:.1f} min")

        if recorded is not None:
            if cell.name not in recorded:
                failures.append(f"FAILED live {cell.name}: not in the recorded trials")
                continue
            runs.append(CellRuns(cell.name, tuple(recorded[cell.name]), virtual, cell))
            continue
        try:
            trials = live.trials(load_scenario(paths[cell]), config.omit_s,
                                 config.live_repeats, progress)
        except (RuntimeError, OSError, ValueError) as error:
            failures.append(f"FAILED live {cell.name}: {error}")
            continue
        runs.append(CellRuns(cell.name, tuple(trials), virtual, cell))
    return runs, failures


def run_scenario_file(path: Path, omit_s: int, repeats: int, live: LiveBackend,
                      log: Callable[[str], None] = print) -> CellRuns:
    """A user's scenario file in both worlds, ``repeats`` live trials."""
    scenario = load_scenario(path)
    virtual = run_virtual(scenario, omit_s)
    log(f"virtual: {virtual.goodput_bps / 1e6:.2f} Mbit/s, {virtual.admission_drops} dropped")
    trials = live.trials(scenario, omit_s, repeats, lambda r: log(
        f"live: {r.goodput_bps / 1e6:.2f} Mbit/s, {r.admission_drops} dropped; {r.describe()}"))
    return CellRuns(scenario.name, tuple(trials), virtual)


def summary(runs: Sequence[CellRuns]) -> tuple[int, int]:
    """Live trials run and valid ones."""
    return sum(len(r.live) for r in runs), sum(len(r.valid_live) for r in runs)
