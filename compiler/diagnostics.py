"""Source positions and located diagnostics for the P4_16 front end.

Every AST node carries a `SourcePos` naming the ORIGINAL file and line (after
the preprocessor's `# line` markers are mapped back) and a 1-based column.
A bad program raises `CompileError`; `str(err)` / `err.format()` gives the
p4c-style text::

    file:line:col: error: message
    <the source line>
    <spaces>^

Warnings (`CompileWarning`) render the same way with `warning:`. The source
line is read from the named file (through `linecache`); when the file cannot
be read (e.g. `<string>` input) only the first line is printed.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class SourcePos:
    """A position in an original source file: 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        """Render as `file:line:col`."""
        return f"{self.file}:{self.line}:{self.column}"


def _render(kind: str, pos: SourcePos | None, message: str) -> str:
    """Format one diagnostic with its source line and a caret under the column."""
    if pos is None:
        return f"{kind}: {message}"
    head = f"{pos}: {kind}: {message}"
    # A long-lived process (the switch's STF runner) may compile an edited file again.
    linecache.checkcache(pos.file)
    line = linecache.getline(pos.file, pos.line).rstrip("\r\n")
    if not line:
        return head
    # Keep tabs so the caret lines up in a terminal however tabs are rendered.
    lead = "".join(c if c == "\t" else " " for c in line[: max(pos.column - 1, 0)])
    return f"{head}\n{line}\n{lead}^"


class CompileError(Exception):
    """A located error in a P4 program: the phase that detects it raises it."""

    def __init__(self, pos: SourcePos | None, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message

    def format(self) -> str:
        """The full diagnostic text (first line `file:line:col: error: message`)."""
        return _render("error", self.pos, self.message)

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class CompileWarning:
    """A located warning: compilation goes on."""

    pos: SourcePos | None
    message: str

    def format(self) -> str:
        """The full diagnostic text (first line `file:line:col: warning: message`)."""
        return _render("warning", self.pos, self.message)

    def __str__(self) -> str:
        return self.format()
