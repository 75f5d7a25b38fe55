"""python -m bufferlab.experiments.tor_switch [--backend virtual|live] [--program v1model|tna]
[--full] [--out DIR] ..."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from bufferlab.analysis.report import format_cell
from bufferlab.experiments.common.buffer_engine import PROGRAMS
from bufferlab.experiments.common.checks import print_outcome
from bufferlab.experiments.common.grid import (
    add_grid_arguments,
    jobs_error,
    scheduler_address,
    where,
)
from bufferlab.experiments.tor_switch.config import FULL, LIVE, SHORT
from bufferlab.experiments.tor_switch.experiment import run
from bufferlab.experiments.tor_switch.virtual_time import default_out, program_backend


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.tor_switch",
        description="Seed 000: ToR switch buffer size and forwarding delay, on buffer_switch.p4 "
                    "in the in-process engine (deterministic virtual time) or live in Mininet.")
    p.add_argument("--backend", choices=("virtual", "live"), default="virtual",
                   help="virtual: the engine in virtual time (default); live: bufferlab-switch "
                        "in Mininet with the RFC 2544 tester (root; its own grid, ~2 min)")
    p.add_argument("--program", choices=sorted(PROGRAMS), default="v1model",
                   help="v1model: p4src/buffer_switch.p4 (default); tna: its Tofino port "
                        "p4src/tna/buffer_switch.p4 on the engine's TNA target, the config's "
                        "pool and threshold mapped to the TM in 80-byte cells (virtual only)")
    p.add_argument("--full", action="store_true",
                   help="the seed's whole grid (7 frame sizes × 12 thresholds × 5 loads; "
                        "about 5 min on two cores here, about 10 CPU-minutes) instead of the "
                        "short default grid")
    p.add_argument("--out",
                   help="folder for CSV, plots and report.md (default: results/tor_switch, "
                        "results/tor_switch_tna with --program tna)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the engine and of source B's phase (default: %(default)s; "
                        "virtual only)")
    p.add_argument("--rate-bps", type=int, dest="port_rate_bps",
                   help="line rate of ports A, B and C, bit/s (default: 1000000000; live 2000000)")
    p.add_argument("--pool-bytes", type=int, dest="pool_bytes",
                   help="shared buffer pool, bytes (default: 65536 short, 153600 full, 16384 live)")
    p.add_argument("--trial-ms", type=float, dest="trial_ms",
                   help="time per delay cell, ms (default: 400 short, 2000 full, 2000 live)")
    add_grid_arguments(p, "cells")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the study; prints progress, a summary table, PASS/FAIL lines and the file paths."""
    args = _parser().parse_args(argv)
    live = args.backend == "live"
    if live and args.full:
        print("error: --full: the seed's whole grid runs on the virtual backend only "
              "(the live backend's wall-clock trials would take hours)", file=sys.stderr)
        return 2
    if live and (args.jobs not in (None, 1) or scheduler_address(args.scheduler)):
        print("error: --jobs/--scheduler: the live backend has one switch, cells run one at a "
              "time", file=sys.stderr)
        return 2
    if live and args.program != "v1model":
        print("error: --program tna: the TNA port runs on the virtual backend only",
              file=sys.stderr)
        return 2
    if live and os.geteuid() != 0:
        print("error: --backend live: needs root (Mininet namespaces)", file=sys.stderr)
        return 2
    base = LIVE if live else FULL if args.full else SHORT
    try:
        config = base.with_overrides(seed=args.seed, port_rate_bps=args.port_rate_bps,
                                     pool_bytes=args.pool_bytes, trial_ms=args.trial_ms)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs)}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        if live:
            # Imported here so a virtual run does not need Mininet.
            from bufferlab.experiments.tor_switch.live import LiveBackend
            backend = stack.enter_context(LiveBackend(config))
        else:
            backend = program_backend(config, args.program)
        jobs = 1 if live else args.jobs
        scheduler = None if live else args.scheduler
        print(f"cells: {where(jobs, scheduler)}", file=sys.stderr)
        out = args.out or default_out(args.program)
        result = run(config, backend, out, jobs=jobs, scheduler=scheduler)

    print("\nframe size (bytes) | threshold (%) | min delay (µs) | avg delay (µs) | "
          "max delay (µs) | lost (frames)")
    for r in result.summary:
        print(" | ".join(format_cell(v) for v in (
            r["frame_size_bytes"], r["threshold_pct"], r["delay_min_us"], r["delay_avg_us"],
            r["delay_max_us"], r["lost_frames"])))
    print("\nframe size (bytes) | threshold (%) | longest loss-free burst per port (frames)")
    for r in result.burst_rows:
        print(f"{r['frame_size_bytes']} | {r['threshold_pct']} | {r['burst_per_port_frames']}")
    print()
    for failure in result.failures:
        print(failure.line())
    print_outcome(result.checks, result.outputs.report, result.outputs.csv + result.outputs.plots)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
