"""Markdown reports per run: headings, paragraphs, tables and links to plots."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path


def format_cell(value: object, digits: int = 4) -> str:
    """A table cell: floats with ``digits`` significant digits, ints as is, NaN as ``–``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.{digits}g}"
    return str(value).replace("|", "\\|")


class Report:
    """Collects a run's results and writes them as one Markdown file."""

    def __init__(self, title: str) -> None:
        """An empty report with a top-level title."""
        self.title = title
        self._blocks: list[tuple[str, object]] = []

    def section(self, title: str) -> None:
        """Start a section (second-level heading)."""
        self._blocks.append(("section", title))

    def paragraph(self, text: str) -> None:
        """A paragraph of text."""
        self._blocks.append(("text", text))

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[object]],
              digits: int = 4) -> None:
        """A table; headers should name their units (e.g. ``latency (µs)``)."""
        for row in rows:
            if len(row) != len(headers):
                raise ValueError(f"row {list(row)} has {len(row)} cells for {len(headers)} headers")
        lines = ["| " + " | ".join(format_cell(h) for h in headers) + " |",
                 "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(format_cell(v, digits) for v in row) + " |" for row in rows]
        self._blocks.append(("text", "\n".join(lines)))

    def image(self, path: str | Path, caption: str) -> None:
        """A link to a plot; written relative to the report's folder."""
        self._blocks.append(("image", (Path(path), caption)))

    def render(self, report_dir: str | Path) -> str:
        """The Markdown text, with image links relative to ``report_dir``."""
        out = [f"# {self.title}"]
        for kind, content in self._blocks:
            if kind == "section":
                out.append(f"## {content}")
            elif kind == "text":
                out.append(str(content))
            else:
                path, caption = content
                rel = Path(os.path.relpath(Path(path).resolve(), Path(report_dir).resolve()))
                out.append(f"![{caption}]({rel.as_posix()})")
        return "\n\n".join(out) + "\n"

    def write(self, path: str | Path) -> Path:
        """Write the report to ``path`` (folders created); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.render(target.parent), encoding="utf-8")
        return target
