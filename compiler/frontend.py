"""The front end's entry point: P4_16 source file -> checked, typed AST.

Phases, each in its own module and each rejecting what it must:
`preprocess` (cpp, as p4c runs it) -> `lexer` -> `parser` -> `check`.
Every error is a `CompileError` printed as `file:line:col: error: message`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from .check import CheckedProgram, check
from .diagnostics import CompileError
from .lexer import tokenize
from .parse import parse
from .preprocess import preprocess

# The parser and checker recurse once per nesting level; real programs stay far below this.
_RECURSION_LIMIT = 20000

R = TypeVar("R")


def _guarded(phases: Callable[[], R], source: str) -> R:
    """Run recursive phases with room for deep nesting; too deep is a CompileError, not a crash."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
    try:
        return phases()
    except RecursionError:
        raise CompileError(
            None, f"{source}: expressions or statements are nested too deeply"
        ) from None
    finally:
        sys.setrecursionlimit(old)


def load(
    path: str | Path, include_dirs: Iterable[str | Path] = (), defines: Iterable[str] = ()
) -> CheckedProgram:
    """Preprocess, parse and check the P4 program at `path`."""
    text = preprocess(path, include_dirs, defines)
    return _guarded(lambda: check(parse(tokenize(text, str(path)))), str(path))


def load_text(text: str, file: str = "<string>") -> CheckedProgram:
    """Parse and check already-preprocessed P4 text (no `#include`)."""
    return _guarded(lambda: check(parse(tokenize(text, file))), file)
