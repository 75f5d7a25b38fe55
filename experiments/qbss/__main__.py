"""python -m bufferlab.experiments.qbss [--quick] [--phase-s S] [--ping-s S] [--runs A,B] ..."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from bufferlab.analysis.report import format_cell
from bufferlab.experiments.common.checks import print_outcome
from bufferlab.experiments.qbss.config import CLASSES, FULL, QUICK, SEED_RUNS
from bufferlab.experiments.qbss.experiment import RunResult, run


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.qbss",
        description="Seed 002: SLAC's QBSS scavenger class against best effort and priority, "
                    "live in Mininet (real TCP through bufferlab-switch; root).")
    p.add_argument("--quick", action="store_true",
                   help="10-s phases and 20 s of ping (~7 min) instead of the seed's 30 s and "
                        "100 s (~23 min)")
    p.add_argument("--phase-s", type=float, dest="phase_s",
                   help="time between changes, whole seconds ≥ 4 (default 30, quick 10)")
    p.add_argument("--ping-s", type=float, dest="ping_s",
                   help="ping time per trial, s (default 100, quick 20)")
    p.add_argument("--runs", help="comma-separated runs to do, of: "
                                  f"{', '.join(r.name for r in SEED_RUNS)} (default all; "
                                  "'none' for the ping study alone)")
    p.add_argument("--congestion", help="TCP congestion control of the copies (default "
                                        "cubic; e.g. reno, bbr: see /proc/sys/net/ipv4/"
                                        "tcp_available_congestion_control)")
    p.add_argument("--no-ping", action="store_true", help="leave out the ping study")
    p.add_argument("--out", default="results/qbss",
                   help="folder for CSV, plots and report.md (default: %(default)s)")
    return p


def _print_summary(result: RunResult) -> None:
    if result.phase_rows:
        print("\nrun | phase | classes | " + " | ".join(f"{c.label} (% of bottleneck)"
                                                       for c in CLASSES) + " | total (Mbit/s)")
    for r in result.phase_rows:
        print(" | ".join(format_cell(v, 3) for v in (
            r["run"], r["phase"], r["classes"],
            *(r[f"{c.name}_pct_of_bottleneck"] for c in CLASSES), r["total_goodput_mbit_per_s"])))
    if result.ping_rows:
        print("\nbulk flow | ping class | min/avg/max/mdev RTT (ms) | median / idle median | "
              "iperf3 (Mbit/s) | probe queued avg (µs)")
        for r in result.ping_rows:
            stats = "/".join(f"{r[k]:.3f}" for k in ("rtt_min_ms", "rtt_avg_ms", "rtt_max_ms",
                                                     "rtt_mdev_ms"))
            print(" | ".join([r["bulk_class"], r["ping_class"], stats,
                              format_cell(r["rtt_median_over_idle"], 3),
                              format_cell(r["iperf3_goodput_mbit_per_s"], 4),
                              format_cell(r["switch_queue_avg_us"], 4)]))


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the study; prints progress, a summary, PASS/FAIL lines and the file paths."""
    args = _parser().parse_args(argv)
    runs = SEED_RUNS
    if args.runs is not None:
        names = [] if args.runs == "none" else [n.strip() for n in args.runs.split(",")]
        known = {r.name: r for r in SEED_RUNS}
        unknown = [n for n in names if n not in known]
        if unknown:
            print(f"error: --runs: unknown {', '.join(unknown)} (known: {', '.join(known)})",
                  file=sys.stderr)
            return 2
        runs = tuple(known[n] for n in names)
    base = QUICK if args.quick else FULL
    try:
        config = base.with_overrides(phase_s=args.phase_s, ping_s=args.ping_s, runs=runs,
                                     congestion=args.congestion,
                                     ping_bulk=() if args.no_ping else None)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("error: needs root (Mininet namespaces)", file=sys.stderr)
        return 2
    # Imported here so --help and option errors need no Mininet.
    from bufferlab.experiments.qbss.live import LiveLab
    with LiveLab(config) as lab:
        result = run(config, lab, args.out)
    _print_summary(result)
    print()
    print_outcome(result.checks, result.outputs.report, result.outputs.csv + result.outputs.plots)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
