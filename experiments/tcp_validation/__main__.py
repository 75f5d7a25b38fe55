"""python -m bufferlab.experiments.tcp_validation [--quick] [--scenario FILE] ..."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bufferlab.experiments.common.checks import print_outcome
from bufferlab.experiments.common.grid import add_grid_arguments, jobs_error
from bufferlab.experiments.scenario import ScenarioError
from bufferlab.experiments.tcp_validation.compare import compare, drop_band
from bufferlab.experiments.tcp_validation.config import (
    FULL,
    MBIT,
    MS,
    QUICK,
    ValidationConfig,
)
from bufferlab.experiments.tcp_validation.records import read_live_trials
from bufferlab.experiments.tcp_validation.report import checks, write_report
from bufferlab.experiments.tcp_validation.runner import (
    LiveBackend,
    run_cells,
    run_scenario_file,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.tcp_validation",
        description="Issue 29 item 2: the same scenario files run live (Linux TCP through "
                    "bufferlab-switch in Mininet; root) and in virtual time (bufferlab-sim "
                    "with the linux-today TCP model), goodput and drops compared cell by cell.")
    p.add_argument("--quick", action="store_true",
                   help="4 cells (10 ms; 0.25 and 1 BDP; with and without background), 2 "
                        "live trials each, 8-s trials")
    p.add_argument("--scenario", type=Path, metavar="FILE",
                   help="instead of the grid, run this scenario file in both worlds "
                        "(--repeats live trials) and compare")
    p.add_argument("--rate-mbps", type=float, action="append", dest="rates",
                   help="bottleneck rate, Mbit/s, repeatable (default 100)")
    p.add_argument("--rtt-ms", type=float, action="append", dest="rtts",
                   help="RTT, ms, repeatable (default 10 and 50)")
    p.add_argument("--buffer-bdp", type=float, action="append", dest="buffers",
                   help="buffer as a fraction of the BDP, repeatable (default 0.25 0.5 1 2)")
    p.add_argument("--background", choices=("with", "without", "both"),
                   help="the bursty UDP background (default both)")
    p.add_argument("--flows", type=int, help="TCP flows per cell (default 1)")
    p.add_argument("--trial-s", type=int, dest="trial_s", help="seconds counted (default 15)")
    p.add_argument("--omit-s", type=int, dest="omit_s", help="seconds left out (default 3)")
    p.add_argument("--repeats", type=int, dest="live_repeats",
                   help="live trials per cell (default 3)")
    p.add_argument("--drop-band", type=float, dest="drop_band",
                   help="relative drop band (default: 2 × the live trials' pooled CV)")
    p.add_argument("--background-timer-ms", type=float, dest="background_timer_ms",
                   help="the background's tick (default 10 ms)")
    p.add_argument("--live-from", type=Path, metavar="DIR", dest="live_from",
                   help="compare with the live trials a previous run recorded in "
                        "DIR/trials.csv instead of running live (no root needed): the "
                        "virtual side again, e.g. after a change to the TCP models")
    add_grid_arguments(p, "virtual runs")
    p.add_argument("--out", type=Path, default=Path("results/tcp_validation"),
                   help="folder for report.md, CSVs and the cells' scenario files "
                        "(default: %(default)s)")
    return p


def _config(args: argparse.Namespace) -> ValidationConfig:
    base = QUICK if args.quick else FULL
    backgrounds = {"with": (True,), "without": (False,), "both": (False, True)}
    return base.with_overrides(
        rates_bps=tuple(round(r * MBIT) for r in args.rates) if args.rates else None,
        rtts_ns=tuple(round(r * MS) for r in args.rtts) if args.rtts else None,
        buffers_bdp=tuple(args.buffers) if args.buffers else None,
        backgrounds=backgrounds[args.background] if args.background else None,
        flows=args.flows, trial_s=args.trial_s, omit_s=args.omit_s,
        live_repeats=args.live_repeats, drop_band=args.drop_band,
        background_timer_ms=args.background_timer_ms)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the validation; 0 when every cell passed, 1 otherwise, 2 for bad options."""
    args = _parser().parse_args(argv)
    try:
        config = _config(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs)}", file=sys.stderr)
        return 2
    recorded = None
    if args.live_from is not None:
        if args.scenario is not None:
            print("error: --live-from compares the grid's cells, not --scenario",
                  file=sys.stderr)
            return 2
        try:
            recorded = read_live_trials(args.live_from / "trials.csv")
        except ValueError as error:
            print(f"error: --live-from: {error}", file=sys.stderr)
            return 2
    elif os.geteuid() != 0:
        print("error: the live runs need root (Mininet namespaces)", file=sys.stderr)
        return 2
    command = "python -m bufferlab.experiments.tcp_validation " + shlex.join(
        sys.argv[1:] if argv is None else list(argv))
    started = time.monotonic()
    live = LiveBackend(config.cpu_saturation)
    try:
        if args.scenario is not None:
            runs = [run_scenario_file(args.scenario, config.omit_s, config.live_repeats, live)]
            failures: list[str] = []
        else:
            # The virtual cells take seconds each: this process runs them unless told.
            jobs = 1 if args.jobs is None and args.scheduler is None else args.jobs
            runs, failures = run_cells(config, args.out, live, jobs, args.scheduler,
                                       recorded=recorded)
    except ScenarioError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    bands = drop_band(runs, config.drop_band, config.drop_floor_frames,
                      config.goodput_tolerance)
    comparisons = [compare(r, bands) for r in runs]
    files = write_report(args.out, config, runs, comparisons, bands, failures,
                         time.monotonic() - started, command)
    for failure in failures:
        print(failure)
    outcome = checks(comparisons, bands)
    print_outcome(outcome, files[0], files[1:])
    return 0 if outcome and all(c.passed for c in outcome) and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
