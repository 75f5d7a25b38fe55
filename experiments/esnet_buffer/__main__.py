"""python -m bufferlab.experiments.esnet_buffer [--backend live|virtual] [--quick] ..."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from bufferlab.experiments.common.checks import print_outcome
from bufferlab.experiments.common.grid import add_grid_arguments, jobs_error, where
from bufferlab.experiments.esnet_buffer.config import (
    FULL,
    QUICK,
    VIRTUAL_FULL,
    VIRTUAL_PROFILES,
    VIRTUAL_QUICK,
    EsnetConfig,
)
from bufferlab.traffic.rfc2544.report import write_csv


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bufferlab.experiments.esnet_buffer",
        description="Seed 004: ESnet's switch-buffer tests (buffer size against TCP "
                    "throughput on a 50 ms path, pacing with tc, a hold queue), live in "
                    "Mininet and scaled by k (real TCP through bufferlab-switch; root), or "
                    "unscaled in virtual time (bufferlab-sim, TCP host models).")
    p.add_argument("--backend", choices=("live", "virtual"), default="live",
                   help="live: Mininet, scaled by k (default); virtual: bufferlab-sim at the "
                        "seed's 10 Gbit/s, every --profile")
    p.add_argument("--quick", action="store_true",
                   help="12-s trials (3 s left out; virtual: 10 s, 2 s left out) instead of "
                        "the seed's 30 s (5 s left out)")
    p.add_argument("--trial-s", type=float, dest="trial_s", help="TCP time per trial, s")
    p.add_argument("--omit-s", type=float, dest="omit_s",
                   help="seconds iperf3 leaves out at the start (-O)")
    p.add_argument("--k", type=float, help="live link / 10 Gbit/s (default 0.1: 1 Gbit/s)")
    p.add_argument("--congestion", help="TCP congestion control (default cubic; bbr is "
                                        "offered by this kernel too)")
    p.add_argument("--background-timer-ms", type=float, dest="background_timer_ms",
                   help="the UDP background sends what is due once per tick, at once "
                        "(default 100: iperf3 up to 3.1.3, the seed's tool; 0: frame by "
                        "frame)")
    p.add_argument("--tcp-sysctl", action="append", dest="tcp_sysctls", metavar="tcp_NAME=V",
                   help="a net.ipv4.tcp_* setting for both TCP hosts, repeatable (e.g. "
                        "tcp_recovery=0 turns RACK off)")
    p.add_argument("--headroom", action="store_true",
                   help="only measure what the live network carries without loss (UDP and "
                        "TCP at 1-3 Gbit/s, unshaped): the measurement k rests on")
    p.add_argument("--profile", action="append", dest="profiles", choices=VIRTUAL_PROFILES,
                   help="virtual: a TCP host profile to run the grid with, repeatable; the "
                        "first one's checks decide the exit status (default: linux-2010, "
                        "the seed's hosts, and linux-today beside it)")
    p.add_argument("--live-results", metavar="DIR", default="results/esnet_buffer",
                   help="virtual: the live run's folder whose trials.csv is put beside ours "
                        "(default: %(default)s)")
    add_grid_arguments(p, "virtual trials")
    p.add_argument("--out", help="folder for CSV, plots and report.md (default: "
                                 "results/esnet_buffer, virtual: results/esnet_buffer_virtual)")
    return p


#: Options only the live lab has.
LIVE_ONLY = {"k": "--k", "congestion": "--congestion", "tcp_sysctls": "--tcp-sysctl",
             "headroom": "--headroom"}


def _virtual(args: argparse.Namespace) -> int:
    """Runs the grid in virtual time; prints progress, PASS/FAIL lines and the files."""
    given = [flag for key, flag in LIVE_ONLY.items() if getattr(args, key)]
    if given:
        print(f"error: {', '.join(given)}: live only (virtual time runs the seed's scale with "
              "the TCP host models' --profile)", file=sys.stderr)
        return 2
    if jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs)}", file=sys.stderr)
        return 2
    base = VIRTUAL_QUICK if args.quick else VIRTUAL_FULL
    try:
        omit = args.omit_s
        if omit is None and args.trial_s is not None:
            omit = min(base.omit_s, args.trial_s / 4)
        config = base.with_overrides(trial_s=args.trial_s, omit_s=omit,
                                     background_timer_ms=args.background_timer_ms,
                                     profiles=tuple(args.profiles or ()) or None)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from bufferlab.experiments.esnet_buffer.experiment import run_virtual

    print(f"trials: {where(args.jobs, args.scheduler)}")
    result = run_virtual(config, args.out or "results/esnet_buffer_virtual", args.jobs,
                         args.scheduler, args.live_results)
    print()
    for failure in result.failures:
        print(failure.line())
    print_outcome([*result.checks, *result.beside], result.outputs.report,
                  result.outputs.csv[:1] + result.outputs.plots)
    print(f"wall time: {result.wall_s / 60:.1f} min")
    return 0 if result.passed else 1


def _headroom(config: EsnetConfig, out: str) -> int:
    """Run the headroom probes, print them, write headroom.csv."""
    from bufferlab.experiments.esnet_buffer.headroom import headroom_row, headroom_specs
    from bufferlab.experiments.esnet_buffer.live import EsnetLab

    rows = []
    with EsnetLab(config) as lab:
        for spec in headroom_specs(config.trial_s):
            row = headroom_row(lab.trial(spec))
            rows.append(row)
            print(f"{row['traffic']} {row['offered_bps'] / 1e9:g} Gbit/s: "
                  f"{'carried' if row['carried'] else 'NOT carried'}; TCP "
                  f"{row['tcp_throughput_bps'] / 1e6:.0f} Mbit/s, UDP "
                  f"{row['udp_received_frames']}/{row['udp_sent_frames']} frames; "
                  f"{row['accounting']}", flush=True)
    Path(out).mkdir(parents=True, exist_ok=True)
    write_csv(rows, Path(out) / "headroom.csv")
    print(f"\n{Path(out) / 'headroom.csv'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the study; prints progress, the tables, PASS/FAIL lines and the file paths."""
    args = _parser().parse_args(argv)
    if args.backend == "virtual":
        return _virtual(args)
    virtual_only = [flag for flag, value in (("--profile", args.profiles),
                                             ("--jobs", args.jobs),
                                             ("--scheduler", args.scheduler)) if value]
    if virtual_only:
        print(f"error: {', '.join(virtual_only)}: --backend virtual only (the live trials "
              "share one network)", file=sys.stderr)
        return 2
    args.out = args.out or "results/esnet_buffer"
    base = QUICK if args.quick else FULL
    try:
        omit = args.omit_s
        if omit is None and args.trial_s is not None:
            # Keep -O at a quarter of a short trial, never more than the preset's.
            omit = min(base.omit_s, args.trial_s / 4)
        config = base.with_overrides(trial_s=args.trial_s, omit_s=omit, k=args.k,
                                     congestion=args.congestion,
                                     background_timer_ms=args.background_timer_ms,
                                     tcp_sysctls=tuple(args.tcp_sysctls or ()) or None)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("error: needs root (Mininet namespaces)", file=sys.stderr)
        return 2
    # Imported here so --help and option errors need no Mininet.
    from bufferlab.experiments.esnet_buffer.experiment import run
    from bufferlab.experiments.esnet_buffer.live import EsnetLab, describe

    if args.headroom:
        return _headroom(config, args.out)
    with EsnetLab(config) as lab:
        result = run(config, lab, args.out, describe(config))
    print()
    print_outcome(result.checks, result.outputs.report, result.outputs.csv + result.outputs.plots)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
