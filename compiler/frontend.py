"""The front end's entry point: P4_16 source file -> checked, typed AST.

Phases, each in its own module and each rejecting what it must:
`preprocess` (cpp, as p4c runs it) -> `lexer` -> `parser` -> `check`.
Every error is a `CompileError` printed as `file:line:col: error: message`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .check import CheckedProgram, check
from .lexer import tokenize
from .parser import parse
from .preprocess import preprocess


def load(
    path: str | Path, include_dirs: Iterable[str | Path] = (), defines: Iterable[str] = ()
) -> CheckedProgram:
    """Preprocess, parse and check the P4 program at `path`."""
    text = preprocess(path, include_dirs, defines)
    return check(parse(tokenize(text, str(path))))


def load_text(text: str, file: str = "<string>") -> CheckedProgram:
    """Parse and check already-preprocessed P4 text (no `#include`)."""
    return check(parse(tokenize(text, file)))
