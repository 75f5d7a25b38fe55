"""python -m bufferlab.experiments.bcn [--seeds N] [--only 003|001] [--program v1model|tna]
[--out DIR]"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bufferlab.experiments.bcn.evidence import evidence
from bufferlab.experiments.bcn.experiment import run
from bufferlab.experiments.common.buffer_engine import PROGRAMS
from bufferlab.experiments.common.grid import add_grid_arguments, jobs_error, where


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.bcn",
        description="Seeds 003 and 001: BCN congestion control with and without 802.3x PAUSE "
                    "at 10 Gbit/s, buffer_switch.p4 in the network simulator (virtual time).")
    p.add_argument("--seeds", type=int, default=10,
                   help="seeds per seed-001 variant (default: %(default)s, as the seed's table)")
    p.add_argument("--only", choices=("003", "001"), help="run one seed's study only")
    p.add_argument("--duration-ms", type=float,
                   help="virtual time per run, ms (default: the scenarios' 200 ms; the checks "
                        "need at least 95)")
    p.add_argument("--program", choices=sorted(PROGRAMS), default="v1model",
                   help="v1model: p4src/buffer_switch.p4 (default); tna: its Tofino port "
                        "p4src/tna/buffer_switch.p4 in every switch, from the same configs "
                        "(buffer and PAUSE the TM's, BCN in egress)")
    add_grid_arguments(p, "runs")
    p.add_argument("--out",
                   help="folder for CSVs, plots and report.md (default: results/bcn, "
                        "results/bcn_tna with --program tna)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the study; prints each run, the PASS/FAIL lines and the file paths."""
    args = _parser().parse_args(argv)
    if args.seeds < 1:
        print(f"error: --seeds {args.seeds}: need at least 1", file=sys.stderr)
        return 2
    if jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs)}", file=sys.stderr)
        return 2
    duration = None
    if args.duration_ms is not None:
        if args.duration_ms < 95:
            print("error: --duration-ms: the checks look at 5–95 ms, run at least 95",
                  file=sys.stderr)
            return 2
        duration = round(args.duration_ms * 1e6)
    print(f"runs: {where(args.jobs, args.scheduler)}")
    out = args.out or ("results/bcn" if args.program == "v1model" else f"results/bcn_{args.program}")
    outcome = run(out, seeds_001=args.seeds, only=args.only, duration_ns=duration,
                  jobs=args.jobs, scheduler=args.scheduler, program=None if args.program == "v1model" else PROGRAMS[args.program])
    print()
    for failure in outcome.failures:
        print(failure.line())
    for check in outcome.checks:
        print(check.line())
        found = None if check.passed or not check.binding else evidence(check.name)
        if found:
            print(f"     calibration: {found}")
    print(f"\nthe runs took {outcome.wall_s:.1f} s in all (summed over workers)")
    print(f"report: {outcome.report}")
    for path in outcome.csv[:1] + outcome.plots:
        print(f"        {path}")
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    sys.exit(main())
