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

from .arch import ARCHITECTURES, Architecture, by_name, included_architecture
from .check import CheckedProgram, check
from .diagnostics import CompileError, SourcePos
from .lexer import tokenize
from .parse import parse
from .preprocess import P4INCLUDE, preprocess

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


def select_architecture(
    path: str | Path,
    include_dirs: Iterable[str | Path],
    defines: Iterable[str],
    arch: str | None,
    target: str | None,
) -> tuple[str, Architecture, str]:
    """Preprocess `path` for its architecture: the one named (`--arch`), else the one whose
    file the program includes (`#include <tna.p4>`), else v1model. Returns the
    preprocessed text, the architecture and the target."""
    include_dirs, defines = list(include_dirs), list(defines)
    chosen = by_name(arch) if arch is not None else None
    # Without --arch, a first pass with the target's macros finds the program's include.
    first = chosen or next((a for a in ARCHITECTURES.values() if target in a.targets), by_name("v1model"))
    if target is not None and target not in first.targets:
        raise CompileError(None, f"--target {target}: architecture {first.name} runs on "
                                 f"{', '.join(first.targets)}")
    text = preprocess(path, include_dirs, defines, first.defines(target))
    included = included_architecture(text, str(P4INCLUDE))
    if chosen is None and included is not None and included is not first:
        # The program's own #include picks the architecture; its target macros may change
        # what the program (and the declaration files) say, so preprocess again.
        chosen = included
        if target is not None and target not in chosen.targets:
            raise CompileError(None, f"--target {target}: architecture {chosen.name} runs on "
                                     f"{', '.join(chosen.targets)}")
        text = preprocess(path, include_dirs, defines, chosen.defines(target))
    chosen = chosen or first
    if included is not None and included is not chosen:
        raise CompileError(
            SourcePos(str(path), 1, 1),
            f"the program includes {included.include} ({included.name}) but --arch {chosen.name} was given",
        )
    return text, chosen, target or chosen.default_target


def load(
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Iterable[str] = (),
    arch: str | None = None,
    target: str | None = None,
) -> CheckedProgram:
    """Preprocess, parse and check the P4 program at `path` for its architecture."""
    text, chosen, target = select_architecture(path, include_dirs, defines, arch, target)
    checked = _guarded(lambda: check(parse(tokenize(text, str(path)))), str(path))
    checked.arch = chosen
    checked.target = target
    return checked


def load_text(text: str, file: str = "<string>") -> CheckedProgram:
    """Parse and check already-preprocessed P4 text (no `#include`)."""
    return _guarded(lambda: check(parse(tokenize(text, file))), file)
