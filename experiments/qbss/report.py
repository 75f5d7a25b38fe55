"""CSV files, plots and `report.md` of a QBSS run, the seed's figures beside ours."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bufferlab.analysis.plots import plot_bars, plot_time_series
from bufferlab.analysis.report import Report, format_cell
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.qbss.backend import PhaseTrial, PingTrial
from bufferlab.experiments.qbss.config import (
    CLASSES,
    ROUTER_WEIGHTS,
    SECOND_WEIGHTS,
    SEED_FIGURES_PCT,
    SEED_PING_IPERF_MBIT_PER_S,
    QbssConfig,
)
from bufferlab.experiments.qbss.evaluation import RunSeries, goodput_capacity_bps, series_rows
from bufferlab.traffic.rfc2544.report import write_csv


@dataclass(frozen=True)
class Outputs:
    """The files a run wrote."""

    report: Path
    csv: list[Path]
    plots: list[Path]


def _plots(out: Path, series_3s: Sequence[RunSeries], ping_rows: Sequence[dict]) -> list[Path]:
    paths = []
    for s in series_3s:
        t = s.start_s + s.interval_s / 2
        lines = {c.label: (t, s.goodput_bps[c.name] / 1e6) for c in CLASSES}
        paths.append(plot_time_series(
            out / f"{s.run.name}_goodput.png", {**lines, "total": (t, s.total_bps / 1e6)},
            "time since the QBSS copy started (s)", "goodput per 3 s (Mbit/s)",
            title=s.run.title, step=False))
        # A log axis shows the small shares; an interval a class did not run has no point.
        positive = {name: (x, np.where(y > 0, y, np.nan)) for name, (x, y) in lines.items()}
        paths.append(plot_time_series(
            out / f"{s.run.name}_goodput_log.png", positive,
            "time since the QBSS copy started (s)", "goodput per 3 s (Mbit/s)",
            title=s.run.title, log_y=True))
    if ping_rows:
        paths.append(plot_bars(
            out / "ping_rtt.png",
            [f"{r['ping_class']} ping, {r['bulk_class']} bulk" for r in ping_rows],
            [r["rtt_median_ms"] for r in ping_rows], "ping class, bulk flow's class (class)",
            "median ping RTT (ms)", title="ping RTT per class beside a bulk TCP flow"))
    return paths


def _seed(run: str, phase: int, cls: str) -> str:
    return SEED_FIGURES_PCT.get(run, {}).get(phase - 1, {}).get(cls, "–")


def _shares_section(report: Report, config: QbssConfig, phase_rows: Sequence[dict]) -> None:
    report.section("Shares per phase")
    report.paragraph(
        f"Steady goodput of each class in % of the {config.bottleneck_bps / 1e6:g} Mbit/s "
        "bottleneck (each phase without its first 2 s and last 1 s), the seed's figure beside "
        "it where the seed gives one, and the shares of what the port carried next to the "
        "shares the weights give the active classes (QBSS / BE / priority).")
    for run in config.runs:
        report.paragraph(f"**{run.name}**: {run.title}" + (f" ({run.note})" if run.note else ""))
        rows = []
        for r in (r for r in phase_rows if r["run"] == run.name):
            cells: list[object] = [r["phase"], r["classes"]]
            for c in CLASSES:
                cells += [r[f"{c.name}_pct_of_bottleneck"], _seed(run.name, r["phase"], c.name)]
            cells += [r["total_goodput_mbit_per_s"],
                      " / ".join(format_cell(r[f"{c.name}_share_pct"], 3) for c in CLASSES),
                      " / ".join(format_cell(r[f"{c.name}_weight_share_pct"], 3)
                                 for c in CLASSES)]
            rows.append(cells)
        report.table(["phase", "classes", "QBSS (%)", "seed QBSS (%)", "BE (%)", "seed BE (%)",
                      "priority (%)", "seed priority (%)", "total (Mbit/s)",
                      "shares of the port (%)", "weights' shares (%)"], rows, digits=3)


def _ping_section(report: Report, config: QbssConfig, ping_rows: Sequence[dict]) -> None:
    report.section("Ping per class beside a bulk flow")
    report.paragraph(
        f"{config.ping_bottleneck_bps / 1e6:g} Mbit/s bottleneck, weights "
        f"{' / '.join(map(str, config.ping_weights_pct))} % (QBSS / BE / priority); one bulk "
        f"iperf3 TCP flow ({config.ping_window_bytes // 1024} KB window) in the class named, "
        f"{config.ping_lead_s:g} s ahead of the pings; then `ping -Q TOS` of every class at "
        f"once, {config.ping_count} pings {config.ping_interval_s:g} s apart, and "
        f"{config.probe_count} bufferlab probes per class ({config.probe_rate_per_s:g}/s): "
        "their one-way latency (kernel TX at the sender to kernel RX at the receiver) and "
        "the time the switch held them in the queue (`deq_timedelta`). The seed's RTT table "
        "is not in the seed's text; its iperf throughput was about "
        f"{SEED_PING_IPERF_MBIT_PER_S:g} Mbit/s.")
    report.table(
        ["bulk flow", "ping class (TOS)", "sent/received", "min (ms)", "avg (ms)", "max (ms)",
         "mdev (ms)", "median (ms)", "median / idle median", "iperf3 (Mbit/s)",
         "probe one-way avg (µs)", "probe one-way max (µs)", "queued avg (µs)",
         "queued max (µs)"],
        [[r["bulk_class"], f"{r['ping_class']} ({r['ping_tos']})",
          f"{r['ping_sent']}/{r['ping_received']}", r["rtt_min_ms"], r["rtt_avg_ms"],
          r["rtt_max_ms"], r["rtt_mdev_ms"], r["rtt_median_ms"], r["rtt_median_over_idle"],
          r["iperf3_goodput_mbit_per_s"], r["probe_one_way_avg_us"], r["probe_one_way_max_us"],
          r["switch_queue_avg_us"], r["switch_queue_max_us"]] for r in ping_rows])


def _trials_section(report: Report, phase_trials: Sequence[PhaseTrial],
                    ping_trials: Sequence[PingTrial], capture_rows: Sequence[dict]) -> None:
    report.section("Was the emulator the bottleneck?")
    report.paragraph(
        "Counters read before and after every trial: the switch's live ports (kernel receive "
        "drops, oversize, send failures), its traffic manager's drops, P4 drops other than "
        "admission (the program's `queue_drops` counter holds the admission drops), every "
        "veth's dropped frames at both ends, and tcpdump's own drops. A trial that lost a "
        "frame anywhere else ran again; one that never came out clean is marked invalid and "
        "fails the last check.")
    rows = [[t.run.name, t.accounting.describe(), f"{t.launch_lag_s * 1e3:.1f}",
             "; ".join(t.reruns) or "–"] for t in phase_trials]
    rows += [[f"ping, {t.bulk or 'no'} bulk", t.accounting.describe(), "–",
              "; ".join(t.reruns) or "–"] for t in ping_trials]
    report.table(["trial", "frames lost", "latest copy start behind schedule (ms)",
                  "attempts run again"], rows)
    if capture_rows:
        report.paragraph(
            "The receiver's capture against iperf3's own count, and the payload sent to each "
            "class's server without the class's TOS (the seed checked its marks with tcpdump "
            "too; iperf3 leaves its control connection unmarked, a few hundred bytes):")
        report.table(["run", "class", "captured payload (bytes)", "iperf3 received (bytes)",
                      "retransmitted (segments)", "unmarked payload (bytes)"],
                     [[r["run"], r["class"], r["captured_payload_bytes"],
                       r["iperf3_received_bytes"], r["iperf3_retransmits_segments"],
                       r["unmarked_payload_bytes"]] for r in capture_rows])


def _scaling(report: Report, config: QbssConfig) -> None:
    report.section("Scaling")
    report.table(["", "seed", "this run"], [
        ["bottleneck (shares)", "10 Mbit/s", f"{config.bottleneck_bps / 1e6:g} Mbit/s"],
        ["bottleneck (ping)", "100 Mbit/s", f"{config.ping_bottleneck_bps / 1e6:g} Mbit/s"],
        ["time between changes", "about 30 s", f"{config.phase_s:g} s"],
        ["throughput reports", "every 3 s (and 1 s)", "3-s and 1-s intervals of the capture"],
        ["ping", "56 bytes, 1 s apart, 100 s", f"56 bytes, {config.ping_interval_s:g} s apart, "
                                               f"{config.ping_s:g} s"],
        ["copies", "bbcp, 8 KB window, 1 stream (BE also 10)",
         "iperf3, 8 KB or default window, 1 stream (BE also 10)"],
    ])
    report.paragraph(
        "Rates are the seed's. Only durations shrink for quick runs: at these rates TCP reaches "
        "its share within a second, so a phase of a few seconds still has a steady part, and "
        "the 1-s intervals that time the changes are the seed's own resolution.")


def _differences(report: Report, config: QbssConfig, phase_rows: Sequence[dict],
                 ping_rows: Sequence[dict]) -> None:
    report.section("Where we differ from the seed, and why")
    capacity = goodput_capacity_bps(config.bottleneck_bps)
    lines = [
        f"* **Goodput, not line rate.** Shares are TCP payload at the receiver (what bbcp and "
        f"iperf3 report). A full frame carries 1,448 payload bytes (TCP timestamps on) in "
        f"1,538 bytes of wire time, so TCP carries at most {capacity / 1e6:.2f} Mbit/s over "
        f"{config.bottleneck_bps / 1e6:g} Mbit/s ({100 * capacity / config.bottleneck_bps:.1f} "
        "%): that is our total, what the total is checked against, and why shares of the "
        "port are given too.",
        "* **The first setting with priority active.** The seed's 70 / 19 / 1 % add up to 90 % "
        "of the link, less than its other phases; it does not say where the rest went. Our "
        "scheduler (deficit round robin, work-conserving) divides everything the port carries "
        "by the weights, so BE keeps the 29 % the setting leaves it.",
        "* **Hosts and TCP.** Two network namespaces on one machine running Linux TCP "
        "(CUBIC), not Solaris hosts across SLAC's network: the base RTT is a fraction of a ms, "
        "so even an 8 KB window keeps a class's queue busy at 10 Mbit/s. Linux doubles the "
        "socket buffer asked for (`-w 8K` gives 16 KB buffers). The seed's copies ran in three "
        "unsynchronised processes and showed spikes in the total; ours are iperf3 clients "
        "started on schedule.",
        f"* **Queue limits.** The seed does not give its routers' queue limits; each class "
        f"here holds at most {config.queue_cap_frames} full-size frames (tail drop by the P4 "
        "admission), the default queue limit of a class in Cisco's class-based WFQ. Only the "
        "default-window runs fill them.",
    ]
    second = [r for run in config.runs if run.weights_pct in (SECOND_WEIGHTS, ROUTER_WEIGHTS)
              for r in phase_rows if r["run"] == run.name and r["phase"] == 3]
    if second:
        measured = "; ".join(
            f"{r['run']}: QBSS {r['qbss_pct_of_bottleneck']:.1f} %, BE "
            f"{r['be_pct_of_bottleneck']:.1f} %, priority {r['priority_pct_of_bottleneck']:.1f} %"
            for r in second)
        lines.append(
            "* **The second setting.** The seed's text gives QBSS 30 % and priority 1 %, but its "
            "figures (QBSS backing off to 20 then 10 KB/s, BE about 66 %, priority about 30 % "
            "with all three active) are what QBSS 1 % and priority 30 % give, the SLAC "
            "routers' `bandwidth percent` 1 / 30 / 69 (congestion.md §6). We ran both; with "
            f"all three classes active: {measured}.")
    if ping_rows:
        idle = [r for r in ping_rows if r["bulk_class"] == "none"]
        rtt = ", ".join(f"{r['ping_class']} {r['rtt_median_ms']:.3f} ms" for r in idle)
        lines.append(
            "* **Ping.** The seed's RTT table did not survive in the seed's text, so only its "
            "iperf throughput (about 93 Mbit/s) compares. Idle RTTs here are those of two "
            f"namespaces through a software switch ({rtt}), not of a path across two Catalyst "
            "6509s, and the ping study uses the first setting's weights (the seed does not "
            "give the 6509s' configuration). The seed's replies and acks came back unmarked; "
            "here the reverse path is unshaped and never queues, whatever its marks.")
    report.paragraph("\n".join(lines))


def write_outputs(out_dir: str | Path, config: QbssConfig, description: Sequence[tuple[str, str]],
                  phase_trials: Sequence[PhaseTrial], ping_trials: Sequence[PingTrial],
                  series_1s: Sequence[RunSeries], series_3s: Sequence[RunSeries],
                  phase_rows: Sequence[dict], transition_rows: Sequence[dict],
                  capture_rows: Sequence[dict], ping_rows: Sequence[dict],
                  checks: Sequence[Check], run_time_s: float) -> Outputs:
    """Writes the CSV files, the plots and ``report.md`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_paths = []
    tables = (("goodput_3s.csv", [row for s in series_3s for row in series_rows(s)]),
              ("goodput_1s.csv", [row for s in series_1s for row in series_rows(s)]),
              ("phases.csv", phase_rows), ("transitions.csv", transition_rows),
              ("capture.csv", capture_rows), ("ping.csv", ping_rows))
    for name, rows in tables:
        if rows:
            write_csv(rows, out / name)
            csv_paths.append(out / name)
    plot_paths = _plots(out, series_3s, ping_rows)

    report = Report("SLAC QBSS: a scavenger class under load (seed 002), live")
    report.section("What ran")
    report.table(["parameter", "value"], [list(p) for p in description])
    report.paragraph(
        "Each run follows the seed: a QBSS copy starts; BE joins after one phase, priority "
        "after two; priority stops after three, BE after four, QBSS after five. Runs: "
        + ("; ".join(f"`{r.name}` ({r.title})" for r in config.runs) or "none")
        + f". Run time: {run_time_s / 60:.1f} min.")
    _scaling(report, config)
    report.section("Expected outcome")
    report.paragraph("\n".join(f"* {c.line()}" for c in checks))
    if phase_rows:
        _shares_section(report, config, phase_rows)
    if transition_rows:
        report.section("How fast the shares change")
        report.paragraph(
            "A change happens when the receiver sees the copy's first (or last) data frame; "
            "it can come later than scheduled because iperf3's control connection is not "
            "marked, so a copy's handshake waits in the BE queue. Settled after: seconds from "
            "the change until every class stays within 10 % of the bottleneck of its new "
            "steady goodput for two 1-s intervals in a row (seed: < 1-2 s).")
        report.table(["run", "change", "due (s)", "happened (s)", "settled after (s)"],
                     [[r["run"], r["change"], r["scheduled_s"], r["at_s"], r["settle_s"]]
                      for r in transition_rows])
    if ping_rows:
        _ping_section(report, config, ping_rows)
    _trials_section(report, phase_trials, ping_trials, capture_rows)
    if plot_paths:
        report.section("Plots")
        for path in plot_paths:
            report.image(path, path.stem.replace("_", " "))
    _differences(report, config, phase_rows, ping_rows)
    report.section("Files")
    report.paragraph("\n".join(f"* `{p.name}`" for p in csv_paths))
    return Outputs(report.write(out / "report.md"), csv_paths, plot_paths)

