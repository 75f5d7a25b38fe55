"""CSV, plots and `report.md` of a DCTCP run: the paper's claims beside our figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bufferlab.analysis.plots import plot_sweep, plot_time_series
from bufferlab.analysis.report import Report
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.dctcp.backend import INCAST, LONG, CellResult
from bufferlab.experiments.dctcp.config import ALGORITHMS, PAPER, DctcpConfig
from bufferlab.experiments.dctcp.evaluation import Row, find
from bufferlab.traffic.rfc2544.report import write_csv


@dataclass(frozen=True)
class Outputs:
    """The files a run wrote."""

    report: Path
    csv: list[Path]
    plots: list[Path]


def _kb(value: float | str) -> str:
    return "—" if value == "" else f"{float(value) / 1e3:,.1f}"


def _us(value: float | str) -> str:
    return "—" if value == "" else f"{float(value):,.0f}"


def _plots(out: Path, config: DctcpConfig, results: Sequence[CellResult]) -> list[Path]:
    paths = []
    traces = {f"{r.cell.algorithm} ({ALGORITHMS[r.cell.algorithm]})":
              ([t / 1e6 for t in r.queue_trace[0]], [b / 1e3 for b in r.queue_trace[1]])
              for r in results if r.cell.kind == LONG}
    if traces:
        paths.append(plot_time_series(
            out / "queue_long_flows.png", traces, "time (ms)", "bottleneck queue (kB)",
            title=f"{config.long_flows} long flows at {config.link_bps / 1e9:g} Gbit/s",
            reference_lines={f"K = {config.k_packets} packets": config.k_bytes / 1e3,
                             "buffer": config.pool_bytes / 1e3}, log_y=True))
    qct = {}
    for algorithm in config.algorithms:
        done = [r for r in results if r.cell.kind == INCAST and r.cell.algorithm == algorithm]
        for stat, pick in (("median", 0.5), ("max", 1.0)):
            points = []
            for r in sorted(done, key=lambda r: r.cell.senders):
                times = sorted(q.qct_ns for q in r.queries if q.qct_ns is not None)
                if times and len(times) == len(r.queries):
                    points.append((r.cell.senders,
                                   times[min(len(times) - 1, int(pick * len(times)))] / 1e6))
            if points:
                qct[f"{algorithm}, {stat}"] = ([p[0] for p in points], [p[1] for p in points])
    if qct:
        paths.append(plot_sweep(out / "query_completion.png", qct, "servers answering (N)",
                                "query completion time (ms)",
                                title=f"N → 1 queries of {config.query_bytes / 1e6:g} MB beside "
                                      f"{config.long_flows} long flows"))
    return paths


def _setup(config: DctcpConfig) -> list[list[str]]:
    return [
        ["network", f"one switch (p4src/buffer_switch.p4 in bufferlab-sim, programmed by the "
                    f"controller), every link {config.link_bps / 1e9:g} Gbit/s and "
                    f"{config.link_delay_ns / 1e3:g} µs long: RTT {config.rtt_ns / 1e3:g} µs"],
        ["buffer", f"{config.pool_bytes:,} bytes, shared; the receiver's port may take all "
                   "of it; tail drop"],
        ["DCTCP", f"profile dctcp (ECN, g = 1/16), switch marks CE above K = {config.k_bytes:,}"
                  f" bytes ({config.k_packets} packets of 1500 bytes)"],
        ["CUBIC", "profile linux-today (CUBIC, SACK, RACK-TLP), no ECN, no marking"],
        ["TCP", f"MSS {config.mss_bytes} bytes, initial window 10, RTO minimum "
                f"{config.rto_min_ns / 1e6:g} ms, 6 MiB receive windows"],
        ["long flows", f"{config.long_flows} bulk flows, each from its own host; measured "
                       f"{config.warmup_ns / 1e6:g}-"
                       f"{(config.warmup_ns + config.long_window_ns) / 1e6:g} ms"],
        ["incast", f"beside the long flows, {config.queries} queries "
                   f"{config.query_interval_ns / 1e6:g} ms apart from "
                   f"{config.warmup_ns / 1e6:g} ms: N servers each answer "
                   f"{config.query_bytes:,} / N bytes on a new connection, N = "
                   + ", ".join(map(str, config.incast_senders))],
    ]


def _claims(report: Report, rows: list[Row]) -> None:
    d, c = find(rows, "dctcp", LONG), find(rows, "cubic", LONG)
    ours = {
        "k": (f"mean queue {_kb(d['queue_mean_bytes'])} kB, p99 {_kb(d['queue_p99_bytes'])} kB"
              if d else "—"),
        "throughput": (f"DCTCP {d['utilisation']:.1%}, CUBIC {c['utilisation']:.1%} of the link"
                       if d and c else "—"),
        "buffer": (f"DCTCP's mean queue {d['queue_mean_bytes'] / c['queue_mean_bytes']:.1%} of "
                   "CUBIC's" if d and c and c["queue_mean_bytes"] else "—"),
        "incast": "DCTCP: " + ", ".join(
            f"N = {r['senders']}: {r['response_timeouts']} timeouts" for r in rows
            if r["kind"] == INCAST and r["algorithm"] == "dctcp"),
        "latency": "; ".join(
            f"N = {r['senders']}: {r['algorithm']} median {_us(r['qct_median_us'])} µs"
            for r in rows if r["kind"] == INCAST),
    }
    report.table(["the paper", "where", "source", "ours"],
                 [[claim.what, claim.figure, claim.source, ours[key]]
                  for key, claim in PAPER.items()])


def write_outputs(out_dir: str | Path, config: DctcpConfig, results: Sequence[CellResult],
                  rows: list[Row], checks: Sequence[Check], notes: Sequence[str] = ()
                  ) -> Outputs:
    """cells.csv, the plots and report.md in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "cells.csv"
    write_csv(rows, csv_path)
    plots = _plots(out, config, results)
    report = Report("DCTCP at 10 Gbit/s: the queue at K, incast beside long flows")
    report.section("What ran")
    report.table(["what", "how"], _setup(config))
    report.section("Expected outcome")
    report.paragraph("\n".join(f"- `{c.line()}`" for c in checks))
    report.section("The paper beside ours")
    _claims(report, rows)
    report.section("Long flows")
    report.table(["algorithm", "bottleneck (Gbit/s)", "utilisation", "queue mean (kB)",
                  "p50", "p99", "largest (kB)", "mean / K", "dropped (frames)",
                  "marked (frames)"],
                 [[r["algorithm"], f"{r['bottleneck_bps'] / 1e9:.3f}", f"{r['utilisation']:.1%}",
                   _kb(r["queue_mean_bytes"]), _kb(r["queue_p50_bytes"]),
                   _kb(r["queue_p99_bytes"]), _kb(r["max_queue_bytes"]),
                   f"{r['queue_mean_over_k']:.2f}", r["drops_frames"], r["ecn_marked_frames"]]
                  for r in rows if r["kind"] == LONG])
    report.section("Incast beside the long flows")
    report.table(["algorithm", "N", "queries", "query completion median (µs)", "p99", "max",
                  "unfinished", "with timeouts", "response timeouts", "dropped (frames)",
                  "queue mean (kB)", "largest (kB)", "long flows (Gbit/s)"],
                 [[r["algorithm"], r["senders"], r["queries"], _us(r["qct_median_us"]),
                   _us(r["qct_p99_us"]), _us(r["qct_max_us"]), r["queries_unfinished"],
                   r["queries_with_timeouts"], r["response_timeouts"], r["drops_frames"],
                   _kb(r["queue_mean_bytes"]), _kb(r["max_queue_bytes"]),
                   f"{r['long_goodput_bps'] / 1e9:.2f}"]
                  for r in rows if r["kind"] == INCAST])
    for note in notes:
        report.paragraph(note)
    report.section("Plots")
    for p in plots:
        report.image(p, p.stem.replace("_", " "))
    path = report.write(out / "report.md")
    return Outputs(path, [csv_path], plots)
