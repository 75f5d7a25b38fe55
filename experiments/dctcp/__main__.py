"""python -m bufferlab.experiments.dctcp [--quick] [--jobs N] [--out DIR] ..."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bufferlab.experiments.common.checks import print_outcome
from bufferlab.experiments.common.grid import add_grid_arguments, jobs_error, where
from bufferlab.experiments.dctcp.config import FULL, QUICK


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.dctcp",
        description="DCTCP against CUBIC at 10 Gbit/s through buffer_switch.p4 with ECN "
                    "marking at K, in virtual time: long flows (queue and throughput), "
                    "N → 1 incast beside them (query completion, timeouts).")
    p.add_argument("--quick", action="store_true",
                   help="shorter windows, fan-ins 8 and 32, 4 queries (default: the study's "
                        "100-ms window, fan-ins 8, 16, 32, 40, 10 queries)")
    p.add_argument("--k-packets", type=int, dest="k_packets",
                   help="DCTCP's marking threshold, packets of 1500 bytes (default 65, the "
                        "paper's at 10 Gbit/s)")
    p.add_argument("--senders", type=int, nargs="+", dest="incast_senders", metavar="N",
                   help="incast fan-ins (default 8 16 32 40)")
    p.add_argument("--rto-min-ms", type=float, dest="rto_min_ms",
                   help="smallest RTO, ms (default 10; Linux's own is 200)")
    p.add_argument("--buffer-bytes", type=int, dest="pool_bytes",
                   help="the switch's shared buffer, bytes (default 4,000,000)")
    p.add_argument("--seed", type=int, help="the run's seed (default 1)")
    add_grid_arguments(p, "cells")
    p.add_argument("--out", default="results/dctcp",
                   help="folder for cells.csv, plots and report.md (default: %(default)s)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the study; prints progress, PASS/FAIL lines and the files."""
    args = _parser().parse_args(argv)
    if jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs)}", file=sys.stderr)
        return 2
    base = QUICK if args.quick else FULL
    try:
        config = base.with_overrides(
            k_packets=args.k_packets, pool_bytes=args.pool_bytes, seed=args.seed,
            incast_senders=tuple(args.incast_senders) if args.incast_senders else None,
            rto_min_ns=round(args.rto_min_ms * 1e6) if args.rto_min_ms is not None else None)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from bufferlab.experiments.dctcp.experiment import run

    print(f"cells: {where(args.jobs, args.scheduler)}")
    result = run(config, args.out, args.jobs, args.scheduler)
    print()
    for failure in result.failures:
        print(failure.line())
    print_outcome(result.checks, result.outputs.report, result.outputs.csv + result.outputs.plots)
    print(f"wall time: {result.wall_s:.1f} s")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
