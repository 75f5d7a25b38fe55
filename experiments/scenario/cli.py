"""`bufferlab-sim`: run a scenario file in virtual time and write its results.

    bufferlab-sim experiments/bcn/scenarios/seed003_50pct.json --progress
    bufferlab-sim my.json --seed 7 --duration-ns 20000000 --out results/sim/my

It prints a summary per source, flow, switch and link, and writes the CSVs (units in
column names) under ``--out`` (default ``results/sim/<scenario name>/``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from bufferlab.analysis.progress import Progress
from bufferlab.analysis.report import Report
from bufferlab.experiments.scenario.run import ScenarioRun, run_scenario
from bufferlab.experiments.scenario.spec import ScenarioError, load_scenario

#: Progress lines over a run.
PROGRESS_STEPS = 20


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bufferlab-sim", description="Run a bufferlab scenario in virtual time.")
    parser.add_argument("scenario", type=Path, help="scenario file (JSON, see sim/README.md)")
    parser.add_argument("--seed", type=int, help="random seed (default: the file's, else 0)")
    parser.add_argument("--duration-ns", type=int, help="virtual time to run, ns "
                                                         "(default: the file's duration_ns)")
    parser.add_argument("--out", type=Path, help="results folder "
                                                 "(default results/sim/<scenario name>)")
    parser.add_argument("--progress", action="store_true",
                        help="print a progress line with ETA as virtual time passes")
    return parser.parse_args(argv)


def summary(run: ScenarioRun, title: str) -> Report:
    """The run's counters as a Markdown report."""
    r = run.results
    report = Report(title)
    report.section("Sources (frames)")
    report.table(["source", "offered", "sent", "dropped at RLQ", "rate at end (Gbit/s)"],
                 [[name, s["offered_frames"], s["sent_frames"], s["dropped_frames"],
                   s["rate_bps"] / 1e9] for name, s in r.sources.items()])
    report.section("Flows at their destination")
    report.table(["source", "received (frames)", "gaps (frames)", "latency mean (µs)",
                  "latency max (µs)"],
                 [[name, f["frames"], f["gaps"], f["latency_mean_ns"] / 1e3,
                   f["latency_max_ns"] / 1e3] for name, f in r.flows.items()])
    report.section("Switches (frames)")
    report.table(["switch", "received", "transmitted", "TM drops"],
                 [[name, c["received_frames"], c["transmitted_frames"],
                   c["dropped_by_tm_frames"]] for name, c in r.switches.items()])
    names = sorted({k for ports in run.ports.values() for cells in ports.values() for k in cells})
    report.section("Switch ports")
    report.table(["switch", "port", *names],
                 [[switch, port, *[cells.get(k, "") for k in names]]
                  for switch, ports in run.ports.items() for port, cells in ports.items()])
    report.section("Links (frames that arrived)")
    report.table(["from", "to", "data", "BCN", "PAUSE/PFC"],
                 [[link["from"], link["to"], link["frames"]["ipv4"], link["frames"]["bcn"],
                   link["frames"]["mac_control"]] for link in r.links])
    return report


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = _arguments(argv)
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as error:
        print(f"bufferlab-sim: {error}", file=sys.stderr)
        return 2
    if args.duration_ns is not None:
        if args.duration_ns <= 0:
            print("bufferlab-sim: --duration-ns must be positive", file=sys.stderr)
            return 2
        scenario.duration_ns = args.duration_ns
    progress = None
    if args.progress:
        meter = Progress(PROGRESS_STEPS, label=scenario.name)
        step_ns = scenario.duration_ns / PROGRESS_STEPS

        def progress(now_ns: int) -> None:
            while meter.done < PROGRESS_STEPS - 1 and now_ns >= (meter.done + 1) * step_ns:
                meter.step(f"{now_ns / 1e6:.1f} ms of virtual time")
    try:
        run = run_scenario(scenario, args.seed, progress)
    except (ValueError, RuntimeError) as error:
        print(f"bufferlab-sim: {error}", file=sys.stderr)
        return 1
    out = args.out or Path("results") / "sim" / scenario.name
    paths = run.results.write_csv(out)
    names = sorted({k for ports in run.ports.values() for cells in ports.values() for k in cells})
    with (out / "ports.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["switch", "port", *names])
        for switch, ports in run.ports.items():
            writer.writerows([switch, port, *[cells.get(k, "") for k in names]]
                             for port, cells in ports.items())
    report = summary(run, f"{scenario.name}: {scenario.duration_ns / 1e6:g} ms of virtual time")
    report.write(out / "summary.md")
    print(report.render(out))
    hops = run.results.run["frame_hops"]
    print(f"\n{scenario.duration_ns / 1e6:g} ms of virtual time in {run.wall_s:.2f} s "
          f"({hops:,} frame-hops, {hops / max(run.wall_s, 1e-9):,.0f} per second)")
    print(f"results: {out}/ ({', '.join(p.name for p in paths)}, ports.csv, "
          "summary.md)")
    return 0
