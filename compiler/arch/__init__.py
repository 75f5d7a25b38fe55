"""Architectures bufferlab-p4c compiles for: v1model, TNA and T2NA (one module each).

`by_name("tna")` gives an `Architecture`; `included_architecture(text)` finds which
one a preprocessed program included (its `# line` markers name our declaration files).
"""

from __future__ import annotations

import os
import re

from . import t2na, tna, v1model
from .base import Architecture, BlockRole, Intrinsic, TargetInfo

ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in (v1model.ARCH, tna.ARCH, t2na.ARCH)}

_LINE_MARKER = re.compile(r'^# \d+ "([^"]+)"', re.MULTILINE)

__all__ = ["ARCHITECTURES", "Architecture", "BlockRole", "Intrinsic", "TargetInfo",
           "by_name", "included_architecture"]


def by_name(name: str) -> Architecture:
    """The architecture called `name`; KeyError names the known ones."""
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise KeyError(f"unknown architecture {name} (known: {', '.join(ARCHITECTURES)})") from None


def included_architecture(text: str, include_dir: str) -> Architecture | None:
    """The architecture whose top-level file (`v1model.p4`, `tna.p4`, `t2na.p4`) from
    `include_dir` the preprocessed `text` included, or None. A program including two is
    reported as the last (cpp output order); the checker then finds the clash."""
    found = None
    by_include = {a.include: a for a in ARCHITECTURES.values()}
    for match in _LINE_MARKER.finditer(text):
        path = match.group(1)
        arch = by_include.get(os.path.basename(path))
        if arch is not None and os.path.dirname(os.path.abspath(path)) == include_dir:
            found = arch
    return found
