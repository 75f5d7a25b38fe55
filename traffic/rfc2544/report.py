"""RFC 2544 reporting form: one table per test and frame size, as CSV and Markdown.

Rows are flat dicts whose keys name their units (``*_fps``, ``*_bps``, ``*_ns``,
``*_pct``, ``*_frames``, ``*_bytes``, ``*_s``); every row carries ``frame_size_bytes``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path


def write_csv(rows: Sequence[dict], path: str | Path) -> None:
    """All rows of one test in one CSV file (columns in the rows' order)."""
    if not rows:
        raise ValueError(f"{path}: no rows to write")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else f"{value:.6g}"
    return str(value)


def markdown_tables(title: str, rows: Sequence[dict]) -> str:
    """One Markdown table per frame size, under ``## title`` and ``### <size> bytes``."""
    out = [f"## {title}", ""]
    sizes = sorted({r["frame_size_bytes"] for r in rows})
    for size in sizes:
        mine = [r for r in rows if r["frame_size_bytes"] == size]
        columns = [c for c in mine[0] if c != "frame_size_bytes"]
        out += [f"### Frame size {size} bytes (incl. FCS)", ""]
        out.append("| " + " | ".join(columns) + " |")
        out.append("|" + "|".join("---:" for _ in columns) + "|")
        for r in mine:
            out.append("| " + " | ".join(_cell(r[c]) for c in columns) + " |")
        out.append("")
    return "\n".join(out)
