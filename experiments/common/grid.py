"""One runner for every experiment's grid of independent trials, on Dask.

A trial is a plain, picklable description; ``work(trial)`` (a module-level function) turns
it into a result. `run_grid` runs them

- one after another in this process (``jobs=1``, no scheduler): live experiments, whose
  trials share one Mininet network, and quick runs;
- on an embedded `dask.distributed.LocalCluster` of ``jobs`` worker processes (default:
  one per core), started and stopped by the call;
- on an existing Dask cluster at ``scheduler`` (``tcp://HOST:PORT``, or the
  ``DASK_SCHEDULER_ADDRESS`` environment variable), whose workers have bufferlab installed.

Results come back in trial order whatever ran where, so a grid's output does not depend
on the cluster. A trial that raises is reported by name with the worker's error; every
other result is kept.
"""

from __future__ import annotations

import argparse
import logging
import os
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: The environment variable Dask itself reads for a scheduler address.
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


@dataclass(frozen=True)
class TrialFailure:
    """A trial that raised: its name and the error the worker reported."""

    name: str
    error: str

    def line(self) -> str:
        """``FAILED name: error`` for the run's output."""
        return f"FAILED {self.name}: {self.error}"


@dataclass(frozen=True)
class GridOutcome(Generic[R]):
    """Results in trial order (None where the trial failed) and the failures."""

    results: list[R | None]
    failures: list[TrialFailure]

    @property
    def succeeded(self) -> list[R]:
        """The results of the trials that did not fail, in trial order."""
        return [r for r in self.results if r is not None]


def scheduler_address(given: str | None) -> str | None:
    """The scheduler to use: ``given``, else ``$DASK_SCHEDULER_ADDRESS``, else None (local)."""
    return given or os.environ.get(SCHEDULER_ENV) or None


def where(jobs: int | None, scheduler: str | None) -> str:
    """Where a grid with these settings runs, for reports."""
    address = scheduler_address(scheduler)
    if address:
        return f"Dask cluster at {address}"
    if jobs == 1:
        return "this process, one trial at a time"
    return f"embedded Dask LocalCluster, {jobs or os.cpu_count()} worker processes"


def add_grid_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """Adds ``--jobs`` and ``--scheduler`` to an experiment's command line; ``what`` names
    its trials (e.g. "cells")."""
    parser.add_argument("--jobs", type=int,
                        help=f"the {what} run on an embedded Dask cluster of this many worker "
                             "processes (default: one per core; 1 runs them in this process); "
                             "the results do not depend on it")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help=f"run the {what} on this Dask scheduler's workers instead "
                             f"(default: ${SCHEDULER_ENV} if set)")


def jobs_error(jobs: int | None) -> str | None:
    """Why ``--jobs`` cannot be used, or None."""
    if jobs is not None and jobs < 1:
        return f"--jobs: {jobs} processes, need at least 1"
    return None


def _error(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()


def run_grid(trials: Sequence[T], work: Callable[[T], R], name: Callable[[T], str],
             jobs: int | None = None, scheduler: str | None = None,
             on_done: Callable[[T, R | None], object] | None = None) -> GridOutcome[R]:
    """Runs ``work`` on every trial (see the module docstring for where); ``on_done(trial,
    result)`` is called as each finishes (result None when it failed)."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs: {jobs} workers, need at least 1")
    address = scheduler_address(scheduler)
    if address is None and jobs == 1:
        return _serial(trials, work, name, on_done)
    return _on_dask(trials, work, name, jobs, address, on_done)


def _serial(trials: Sequence[T], work: Callable[[T], R], name: Callable[[T], str],
            on_done: Callable[[T, R | None], object] | None) -> GridOutcome[R]:
    results: list[R | None] = []
    failures = []
    for trial in trials:
        try:
            result: R | None = work(trial)
        except Exception as error:  # a failed trial is reported, the grid goes on
            result = None
            failures.append(TrialFailure(name(trial), _error(error)))
        results.append(result)
        if on_done:
            on_done(trial, result)
    return GridOutcome(results, failures)


def _on_dask(trials: Sequence[T], work: Callable[[T], R], name: Callable[[T], str],
             jobs: int | None, address: str | None,
             on_done: Callable[[T, R | None], object] | None) -> GridOutcome[R]:
    # Imported here: a serial or live run needs no Dask.
    from distributed import Client, LocalCluster, as_completed

    cluster: Any = None
    if address is None:
        # Its HTTP server takes a free port, so it clashes with no other cluster or service.
        cluster = LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=":0",
                               silence_logs=logging.ERROR)
    try:
        with Client(cluster if cluster is not None else address) as client:
            # Dask takes equal keys for the same task: a token per call keeps two grids that
            # share a scheduler (say a short and a full run, with the same cell names) apart.
            run = uuid.uuid4().hex[:12]
            futures = [client.submit(work, trial, key=f"{name(trial)}-{i}-{run}", pure=False)
                       for i, trial in enumerate(trials)]
            index = {future.key: i for i, future in enumerate(futures)}
            results: list[R | None] = [None] * len(trials)
            failures: dict[int, TrialFailure] = {}
            for future in as_completed(futures):
                i = index[future.key]
                if future.status == "finished":
                    results[i] = future.result()
                elif future.status == "error":
                    failures[i] = TrialFailure(name(trials[i]), _error(future.exception()))
                else:
                    # Cancelled or lost (the scheduler or the connection went away).
                    failures[i] = TrialFailure(name(trials[i]), f"the task was {future.status}")
                if on_done:
                    on_done(trials[i], results[i])
            return GridOutcome(results, [failures[i] for i in sorted(failures)])
    finally:
        if cluster is not None:
            cluster.close()
