"""A mutation site: one place where one mutation can rewrite a program."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..diagnostics import SourcePos


@dataclass
class Site:
    """`rewrite()` edits the checked tree the site was found in (once: the tree then holds
    the rewritten program); `pos` is where in the original source, `what` says how."""

    mutation: str
    pos: SourcePos
    what: str
    rewrite: Callable[[], None]

    def __str__(self) -> str:
        return f"{self.pos}: {self.mutation}: {self.what}"
