"""The validation's files: trials.csv (every run, both worlds), cells.csv (each cell
judged) and report.md (what ran, the scaling, the bands, the table, invalid trials)."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.tcp_validation.cells import (
    BACKGROUND_UDP_PORT,
    BOTTLENECK_PORT,
    RECEIVER,
    SENDER,
    UDP_SENDER,
)
from bufferlab.experiments.tcp_validation.compare import PASS, Bands, CellRuns, Comparison
from bufferlab.experiments.tcp_validation.config import (
    FRAME_WIRE_BYTES,
    MSS_BYTES,
    PROFILE,
    ValidationConfig,
)
from bufferlab.traffic.rfc2544.report import write_csv


def trial_rows(runs: Sequence[CellRuns]) -> list[dict[str, object]]:
    """One row per run (virtual first, then each live trial in order)."""
    rows = []
    for cell in runs:
        for i, r in enumerate((cell.virtual, *cell.live)):
            rows.append({
                "cell": cell.name, "backend": r.backend, "trial": 0 if i == 0 else i,
                "valid": r.valid, "goodput_bps": round(r.goodput_bps),
                "counted_s": max((f.seconds for f in r.flows), default=0.0),
                "admission_drops_frames": r.admission_drops,
                "retransmitted_segments": r.retransmits,
                "switch_packet_thread_cpu_share": next(
                    (v for k, v in r.notes.items() if k.endswith("_packet_thread_cpu")), ""),
                "load_average_1min": r.notes.get("load_average_1min", ""),
                "why_invalid": "" if r.valid else r.describe()})
    return rows


def cell_rows(comparisons: Sequence[Comparison]) -> list[dict[str, object]]:
    """One row per cell: live mean and spread, virtual, ratios, verdicts."""
    rows = []
    for c in comparisons:
        cell = c.cell
        rows.append({
            "cell": c.name,
            "rate_bps": cell.rate_bps if cell else "", "rtt_ns": cell.rtt_ns if cell else "",
            "buffer_bdp": cell.buffer_bdp if cell else "",
            "buffer_bytes": cell.buffer_bytes if cell else "",
            "background": cell.background if cell else "",
            "live_trials": c.live_trials, "valid_live_trials": c.valid_trials,
            "live_goodput_bps": _num(c.live_goodput_bps),
            "live_goodput_sd_bps": _num(c.live_goodput_sd_bps),
            "virtual_goodput_bps": round(c.virtual_goodput_bps),
            "goodput_ratio": _num(c.goodput_ratio, 4), "goodput": c.goodput_verdict,
            "live_drops_frames": _num(c.live_drops, 1),
            "live_drops_sd_frames": _num(c.live_drops_sd, 1),
            "virtual_drops_frames": c.virtual_drops,
            "drops_band_low_frames": _num(c.drop_limits[0], 1),
            "drops_band_high_frames": _num(c.drop_limits[1], 1),
            "drops_ratio": _num(c.drops_ratio, 3), "drops": c.drops_verdict,
            "verdict": c.verdict})
    return rows


def _num(value: float, digits: int = 0) -> object:
    if value is None or math.isnan(value):
        return ""
    return round(value, digits) if digits else round(value)


def checks(comparisons: Sequence[Comparison], bands: Bands) -> list[Check]:
    """Two lines per cell: goodput and drops; INVALID cells fail, saying why."""
    out = []
    for c in comparisons:
        if c.valid_trials == 0:
            out.append(Check(f"{c.name}", False, f"INVALID: none of {c.live_trials} live "
                                                 "trials was valid (see report)"))
            continue
        out.append(Check(f"{c.name} goodput within {bands.goodput_tolerance:.0%}",
                         c.goodput_verdict == PASS,
                         f"live {c.live_goodput_bps / 1e6:.2f} Mbit/s (n={c.valid_trials}), "
                         f"virtual {c.virtual_goodput_bps / 1e6:.2f} ({c.goodput_ratio:.3f})"))
        out.append(Check(f"{c.name} drops within the band", c.drops_verdict == PASS,
                         f"live {c.live_drops:.0f} frames, band {c.drop_limits[0]:.0f}-"
                         f"{c.drop_limits[1]:.0f}, virtual {c.virtual_drops}"))
    return out


def _mbit(bps: float) -> str:
    return "–" if math.isnan(bps) else f"{bps / 1e6:.2f}"


def table(comparisons: Sequence[Comparison]) -> list[str]:
    """The validation table in Markdown."""
    lines = ["| cell | live goodput Mbit/s (sd, n) | virtual | ratio | | live drops (range) "
             "| band | virtual | ratio | | cell |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in comparisons:
        rng = f"{c.live_drops_range[0]}-{c.live_drops_range[1]}" if c.live_drops_range else "–"
        sd = "" if math.isnan(c.live_goodput_sd_bps) else f"{c.live_goodput_sd_bps / 1e6:.2f}, "
        lines.append(
            f"| {c.name} | {_mbit(c.live_goodput_bps)} ({sd}{c.valid_trials}/{c.live_trials}) "
            f"| {_mbit(c.virtual_goodput_bps)} | {c.goodput_ratio:.3f} | {c.goodput_verdict} "
            f"| {c.live_drops:.0f} ({rng}) | {c.drop_limits[0]:.0f}-{c.drop_limits[1]:.0f} "
            f"| {c.virtual_drops} | {c.drops_ratio:.2f} | {c.drops_verdict} | {c.verdict} |")
    return lines


def scaling(config: ValidationConfig) -> list[str]:
    """The rates, RTTs, buffers and background against the issue's ranges, with the
    arithmetic."""
    lines = ["| | issue 29 | here |", "|---|---|---|",
             f"| bottleneck | 100-500 Mbit/s | "
             f"{', '.join(f'{r / 1e6:g}' for r in config.rates_bps)} Mbit/s (the switch's "
             f"port {BOTTLENECK_PORT} towards `{RECEIVER}`, shaped by its port model) |",
             f"| RTT | 10-50 ms | {', '.join(f'{r / 1e6:g}' for r in config.rtts_ns)} ms "
             f"(a quarter on `{SENDER}`'s and on `{RECEIVER}`'s link each way) |",
             f"| buffer | 0.25-2 BDP | {', '.join(f'{b:g}' for b in config.buffers_bdp)} × "
             "BDP (P4 admission cap) |"]
    for rate in config.rates_bps:
        for rtt in config.rtts_ns:
            bdp = rate * rtt // 8_000_000_000
            lines.append(f"| BDP at {rate / 1e6:g} Mbit/s, {rtt / 1e6:g} ms | | {bdp:,} bytes = "
                         f"{bdp / FRAME_WIRE_BYTES:.0f} "
                         "full frames on the wire |")
    share = config.background_share
    tick = config.background_timer_ms
    for rate in config.rates_bps:
        frames = max(1, round(share * rate * tick / 1000 / (8 * FRAME_WIRE_BYTES)))
        lines.append(f"| UDP background | with and without, bursty | {share:.0%} of "
                     f"{rate / 1e6:g} Mbit/s from `{UDP_SENDER}` to `{RECEIVER}` port "
                     f"{BACKGROUND_UDP_PORT}: {frames} frames of {FRAME_WIRE_BYTES} wire "
                     f"bytes every {tick:g} ms, back to back at {rate / 1e6:g} Mbit/s |")
    lines.append(f"| TCP | real TCP vs `{PROFILE}` | {config.flows} bulk flow(s), CUBIC, MSS "
                 f"{MSS_BYTES}, {config.trial_s} s counted after {config.omit_s} s left out, "
                 f"starting {config.lead_s} s after the background |")
    lines.append(f"| senders' NIC | | {config.nic_factor} × the bottleneck (HTB live) |")
    return lines


def write_report(out: Path, config: ValidationConfig, runs: Sequence[CellRuns],
                 comparisons: Sequence[Comparison], bands: Bands, failures: Sequence[str],
                 wall_s: float, command: str) -> list[Path]:
    """Writes the CSVs and report.md into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    if runs:
        write_csv(trial_rows(runs), out / "trials.csv")
        files.append(out / "trials.csv")
    if comparisons:
        write_csv(cell_rows(comparisons), out / "cells.csv")
        files.append(out / "cells.csv")
    verdicts = [c.verdict for c in comparisons]
    invalid = [(c.name, i + 1, r) for c in runs for i, r in enumerate(c.live) if not r.valid]
    loads = [r.notes["load_average_1min"] for c in runs for r in c.live
             if "load_average_1min" in r.notes]
    lines = [
        "# TCP validation: live Linux against the `linux-today` host model",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} with `{command}`: {wall_s / 60:.1f} min of "
        f"wall time on {os.cpu_count()} shared cores"
        + (f", load average {min(loads):.1f}-{max(loads):.1f} during the live trials"
           if loads else "") + ".",
        "",
        f"Cells: {verdicts.count('PASS')} PASS, {verdicts.count('FAIL')} FAIL, "
        f"{verdicts.count('INVALID')} INVALID of {len(comparisons)}.",
        "",
        "Each cell is one scenario file (`cells/<cell>/scenario.json`, experiments/scenario's "
        "format) that both backends read: virtual time runs it in bufferlab-sim with the TCP "
        "host models, live brings its topology up in Mininet (bufferlab-switch programmed "
        "from the same controller config, the kernel's TCP in iperf3, the UDP background "
        "in bufferlab-gen).",
        "",
        "## Scaling",
        "",
        *scaling(config),
        "",
        "## The bands",
        "",
        f"* Goodput: virtual within {bands.goodput_tolerance:.0%} of the live trials' mean.",
        f"* Drops (frames the P4 admission dropped over the whole trial, TCP and UDP): "
        f"virtual within live mean × (1 ± {bands.drop_band:.3f}) ± "
        f"{bands.drop_floor_frames} frames; the band is {bands.source}.",
        "* A live trial that lost a frame outside the admission, or whose switch packet "
        f"thread was busy more than {config.cpu_saturation:.0%} of it, is INVALID: listed "
        "below, never averaged in.",
        "",
        "## Live against virtual",
        "",
        *table(comparisons),
        "",
        "## Invalid live trials",
        "",
    ]
    lines += ([f"* {name} trial {n}: {r.describe()}" for name, n, r in invalid]
              or ["None: every live trial lost frames only at the admission."])
    if failures:
        lines += ["", "## Failures", "", *[f"* {f}" for f in failures]]
    lines += ["", "## Files", "", "`trials.csv` (every run, both worlds), `cells.csv` (each "
              "cell judged), `cells/` (the scenario files)."]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    return [out / "report.md", *files]
