"""python -m bufferlab.experiments.tofino [--full] [--only tor_switch|bcn] [--seeds N]
[--out DIR] [--jobs N]: the seed studies on buffer_switch.p4 and on its TNA port, side by side."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bufferlab.experiments.common.grid import add_grid_arguments, jobs_error, where
from bufferlab.experiments.tofino.report import write_report
from bufferlab.experiments.tofino.study import COMPARED, run
from bufferlab.experiments.tor_switch.config import FULL, REDUCED

#: Seeds per seed-001 variant: quick by default, the seed's ten with --full.
QUICK_SEEDS = 3
FULL_SEEDS = 10


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.tofino",
        description="Seed 000 (tor_switch) and seeds 003/001 (bcn) on p4src/buffer_switch.p4 "
                    "and on its Tofino port p4src/tna/buffer_switch.p4, from the same configs, "
                    "in virtual time; one report with each check on both programs.")
    p.add_argument("--full", action="store_true",
                   help="seed 000's whole grid and 10 seeds per seed-001 variant (default: a "
                        f"reduced seed-000 grid and {QUICK_SEEDS} seeds)")
    p.add_argument("--only", choices=("tor_switch", "bcn"), help="run one study only")
    p.add_argument("--seeds", type=int,
                   help=f"seeds per seed-001 variant (default {QUICK_SEEDS}, {FULL_SEEDS} with "
                        "--full)")
    p.add_argument("--out", default="results/tofino",
                   help="folder for report.md, checks.csv and each run's folder "
                        "(default: %(default)s)")
    add_grid_arguments(p, "cells and runs")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the studies; prints the side-by-side PASS/FAIL lines and the report's path."""
    args = _parser().parse_args(argv)
    seeds = args.seeds if args.seeds is not None else FULL_SEEDS if args.full else QUICK_SEEDS
    if seeds < 1:
        print(f"error: --seeds {seeds}: need at least 1", file=sys.stderr)
        return 2
    if jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs)}", file=sys.stderr)
        return 2
    print(f"cells and runs: {where(args.jobs, args.scheduler)}", file=sys.stderr)
    tor_config = None if args.only == "bcn" else FULL if args.full else REDUCED
    runs = run(Path(args.out), tor_config=tor_config,
               bcn_seeds=None if args.only == "tor_switch" else seeds, jobs=args.jobs,
               scheduler=args.scheduler)
    report, checks_csv = write_report(Path(args.out), runs)
    for program in COMPARED:
        print(f"\n{program}:")
        for result in (runs.tor.get(program), runs.bcn.get(program)):
            for check in result.checks if result is not None else ():
                print(f"  {check.line()}")
    print(f"\nreport: {report}\n        {checks_csv}")
    return 0 if runs.passed else 1


if __name__ == "__main__":
    sys.exit(main())
