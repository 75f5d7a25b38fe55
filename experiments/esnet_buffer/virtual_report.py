"""CSV files, plots and `report.md` of a virtual-time run: per table, the seed's figures,
the live run's scaled ones (if a live report is at hand) and every TCP profile's, side by
side."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from bufferlab.analysis.plots import plot_sweep
from bufferlab.analysis.report import Report
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.esnet_buffer.config import (
    MB,
    RTT_NS,
    SEED_BUFFER,
    SEED_LINK_BPS,
    STREAMS,
    EsnetConfig,
    bdp_bytes,
    sqrt_n_bytes,
)
from bufferlab.experiments.esnet_buffer.evaluation import Row, tables
from bufferlab.experiments.esnet_buffer.report import (
    Outputs,
    gbit,
    setting_label,
    table_title,
)
from bufferlab.traffic.rfc2544.report import write_csv

#: Where the live run writes its rows (`python -m bufferlab.experiments.esnet_buffer`).
LIVE_DIR = Path("results/esnet_buffer")
#: The live run's congestion control whose rows stand beside ours (its seed tables).
LIVE_CONGESTION = "cubic"

#: What the host models leave out that bears on the seed's figures.
MODEL_NOTES = (
    "**The hosts are models.** `traffic/hosts`' TCP has SACK loss recovery (RFC 6675), "
    "Linux's RTO (200 ms minimum), CUBIC (RFC 9438) and, for `linux-today`, RACK-TLP; it "
    "has no HyStart (slow start runs until the receive window or a loss stops it), no "
    "proportional rate reduction, no F-RTO and no TCP timestamps. `linux-2010` is Linux "
    "2.6.3x as those parts describe it (CUBIC, SACK, no RACK/TLP, initial window 3).",
    "**The windows are bounded as the live run's are.** Each receiver advertises 3/4 of "
    "64 MiB (ESnet's tuning for 10 Gbit/s hosts; 3/4 is Linux 2.6's tcp_adv_win_scale): "
    "two flows keep at most 100.7 MB in flight, 1.6 × BDP.",
    "**Virtual time is exact.** No frame is lost but where the buffer under test drops it, "
    "and the same trial gives the same figures on any machine; the live run must prove "
    "its emulator kept up, this one cannot fall behind.",
)


def load_live_rows(live_dir: str | Path | None) -> dict[tuple[str, int], dict[str, str]]:
    """The live run's valid rows of its seed tables by (table, seed setting), from its
    ``trials.csv``; empty when there is none."""
    path = Path(live_dir if live_dir is not None else LIVE_DIR) / "trials.csv"
    if not path.is_file():
        return {}
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    return {(r["table"], int(r["seed_setting"])): r for r in rows
            if r.get("congestion") == LIVE_CONGESTION and r.get("valid") == "True"}


def _live_cell(row: dict[str, str] | None) -> str:
    if row is None:
        return "—"
    return (f"{row['admission_drops_frames']}, "
            f"{float(row['tcp_throughput_seed_scale_bps']) / 1e9:.2f}")


def _profile_cell(row: Row | None) -> str:
    if row is None:
        return "—"
    valid = "" if row["valid"] else " INVALID"
    return (f"{row['admission_drops_frames']}, {row['tcp_retransmits_segments']}, "
            f"{row['tcp_timeouts']}, {row['tcp_throughput_bps'] / 1e9:.2f}{valid}")


def _side_by_side(report: Report, config: EsnetConfig, rows: Sequence[Row],
                  live: dict[tuple[str, int], dict[str, str]]) -> None:
    by_key = {(r["congestion"], r["table"], r["seed_setting"]): r for r in rows}
    first = tables([r for r in rows if r["congestion"] == config.profiles[0]]) or tables(
        list(rows))
    for table, trows in first.items():
        report.section(table_title(table).replace(", TCP " + config.profiles[0], ""))
        headers = ["setting (seed)", "buffer / BDP", "seed: dropped, Gbit/s",
                   "live k = 0.1: dropped, Gbit/s × 1/k"]
        headers += [f"{p}: dropped, retransmits, timeouts, Gbit/s" for p in config.profiles]
        body = []
        for r in trows:
            seed = (f"{r['seed_drops_packets']}, {gbit(r['seed_tcp_throughput_bps'])}"
                    if r["seed_drops_packets"] != "" else "—")
            cells = [setting_label(r), f"{r['buffer_over_bdp']:.2f}", seed,
                     _live_cell(live.get((table, r["seed_setting"])))]
            cells += [_profile_cell(by_key.get((p, table, r["seed_setting"])))
                      for p in config.profiles]
            body.append(cells)
        report.table(headers, body)


def _plots(out: Path, config: EsnetConfig, rows: Sequence[Row],
           live: dict[tuple[str, int], dict[str, str]]) -> list[Path]:
    sqrt_n = sqrt_n_bytes(SEED_LINK_BPS) / bdp_bytes(SEED_LINK_BPS)
    series = {}
    for table, trows in tables(list(rows)).items():
        if not table.startswith("buffer_"):
            continue
        for profile in config.profiles:
            prow = [r for r in trows if r["congestion"] == profile]
            if prow:
                series[f"{profile}, {table.split('_')[1].rstrip('g')} Gbit/s background"] = (
                    [r["buffer_over_bdp"] for r in prow],
                    [r["tcp_throughput_bps"] / 1e9 for r in prow])
    live_buffer = sorted((k[1], v) for k, v in live.items() if k[0] == "buffer_2g")
    if live_buffer:
        series["live k = 0.1 (Linux today), 2 Gbit/s background"] = (
            [s / bdp_bytes(SEED_LINK_BPS) for s, _ in live_buffer],
            [float(v["tcp_throughput_seed_scale_bps"]) / 1e9 for _, v in live_buffer])
    seed_bdp = bdp_bytes(SEED_LINK_BPS)
    series["seed (MX80), 2 Gbit/s background"] = (
        [r.setting / seed_bdp for r in SEED_BUFFER], [r.throughput_bps / 1e9 for r in SEED_BUFFER])
    return [plot_sweep(out / "throughput_vs_buffer.png", series, "buffer / BDP (ratio)",
                       "TCP throughput (Gbit/s)",
                       title="TCP throughput against buffer, 10 Gbit/s, 50 ms, virtual time",
                       vertical_lines={"BDP": 1.0, f"BDP/√{STREAMS}": sqrt_n}, log_x=True)]


def write_virtual_outputs(out_dir: str | Path, config: EsnetConfig, rows: Sequence[Row],
                          checks: Sequence[Check], beside: Sequence[Check],
                          setup: Sequence[tuple[str, str]], notes: Sequence[str] = (),
                          live_dir: str | Path | None = None) -> Outputs:
    """CSV (one per profile and table, one of everything), the plot and report.md in
    ``out_dir``; the live rows come from ``live_dir``'s trials.csv if there is one."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    live = load_live_rows(live_dir)
    csvs = []
    for profile in config.profiles:
        for table, trows in tables([r for r in rows if r["congestion"] == profile]).items():
            path = out / f"{profile}_{table}.csv"
            write_csv(trows, path)
            csvs.append(path)
    plots = _plots(out, config, rows, live)
    report = Report("ESnet switch-buffer tests (seed 004), unscaled in virtual time")
    report.section("What ran")
    report.table(["what", "how"], [list(s) for s in setup])
    report.section("Scale")
    report.paragraph(
        f"Nothing is scaled: the bottleneck is the seed's {SEED_LINK_BPS / 1e9:g} Gbit/s, "
        f"the RTT {RTT_NS / 1e6:g} ms, so the BDP is {bdp_bytes(SEED_LINK_BPS) / MB:g} MB "
        f"and BDP/√{STREAMS} {sqrt_n_bytes(SEED_LINK_BPS) / MB:.1f} MB; buffers "
        + ", ".join(f"{b / MB:g} MB" for b in config.buffers_bytes)
        + f"; trials of {config.trial_s:g} s of TCP after {config.omit_s:g} s left out "
        "(the seed: 30 s, -O5).")
    report.section("Expected outcome")
    report.paragraph(f"The seed's hosts ({config.profiles[0]}):\n\n"
                     + "\n".join(f"- `{c.line()}`" for c in checks))
    if beside:
        report.paragraph("Beside them (reported, not counted in the exit status):\n\n"
                         + "\n".join(f"- `{c.line()}`" for c in beside))
    if not live:
        report.paragraph(f"No live run's rows at {Path(live_dir or LIVE_DIR) / 'trials.csv'}"
                         " (`sudo make run-esnet` writes them): the live column is empty.")
    _side_by_side(report, config, rows, live)
    for note in notes:
        report.paragraph(note)
    report.section("What the models leave out")
    for text in MODEL_NOTES:
        report.paragraph(text)
    report.section("Accounting")
    report.table(["profile", "table", "setting (seed)", "accounting", "UDP frames sent",
                  "received"],
                 [[r["congestion"], r["table"], setting_label(r), r["accounting"],
                   r["udp_sent_frames"], r["udp_received_frames"]] for r in rows])
    report.section("Plots")
    for p in plots:
        report.image(p, p.stem.replace("_", " "))
    path = report.write(out / "report.md")
    all_csv = out / "trials.csv"
    write_csv(list(rows), all_csv)
    return Outputs(path, [all_csv, *csvs], plots)
