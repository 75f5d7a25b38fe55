"""A run's live trials read back from its trials.csv, so the virtual side can be run again
(after a change to the TCP models) against the same live measurements, without root."""

from __future__ import annotations

import csv
from pathlib import Path

from bufferlab.experiments.tcp_validation.measure import FlowResult, RunResult


def read_live_trials(path: Path) -> dict[str, list[RunResult]]:
    """Cell name → its live trials, in order, from a trials.csv written by `report`; the
    flows are summed into one (the file keeps the sum), an invalid trial keeps its
    reason. ValueError naming the file for a missing file or column."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as error:
        raise ValueError(f"{path}: cannot read: {error.strerror}") from None
    out: dict[str, list[RunResult]] = {}
    for i, row in enumerate(rows):
        try:
            if row["backend"] != "live":
                continue
            # Goodput is what counts; older files without the window's length keep it
            # over a nominal second.
            seconds = float(row.get("counted_s") or 1.0)
            flow = FlowResult("all flows", round(float(row["goodput_bps"]) * seconds / 8),
                              seconds, int(row["retransmitted_segments"]))
            valid = row["valid"] == "True"
            notes = {}
            if row.get("switch_packet_thread_cpu_share"):
                notes["switch_packet_thread_cpu"] = float(row["switch_packet_thread_cpu_share"])
            if row.get("load_average_1min"):
                notes["load_average_1min"] = float(row["load_average_1min"])
            problems = () if valid else (f"as recorded: {row['why_invalid']}",)
            result = RunResult("live", (flow,), int(row["admission_drops_frames"]), {}, notes,
                               problems)
        except (KeyError, ValueError) as error:
            raise ValueError(f"{path}: row {i + 2}: {error}") from None
        out.setdefault(row["cell"], []).append(result)
    return out
