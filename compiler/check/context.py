"""State shared by the checker's passes: scopes, program-wide facts, where we are.

The checker is one walk over the program (P4 declares before use); each
module in this package contributes one job as a mixin of `Checker`
(`check/__init__.py`), and this base holds what they share.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import ast
from ..diagnostics import CompileError, CompileWarning, SourcePos
from ..types import P4Type
from .scope import Scope


@dataclass
class Where:
    """What encloses the code being checked."""

    kind: str = "top"  # top | parser | control | action | function | state | extern
    decl: object = None
    return_type: P4Type | None = None
    loop_depth: int = 0
    in_apply: bool = False


@dataclass
class ProgramFacts:
    """Program-wide collections the back end reads."""

    errors: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)
    error_members: dict[str, ast.ErrorMember] = field(default_factory=dict)


class CheckerBase:
    """Scopes, diagnostics and the enclosing-construct stack."""

    def __init__(self) -> None:
        self.scope = Scope()
        self.facts = ProgramFacts()
        self.warnings: list[CompileWarning] = []
        self.where = Where()

    def fail(self, pos: SourcePos | None, message: str) -> CompileError:
        """A located error to raise."""
        return CompileError(pos, message)

    def warn(self, pos: SourcePos | None, message: str) -> None:
        """Record a located warning."""
        self.warnings.append(CompileWarning(pos, message))

    @contextmanager
    def scoped(self):  # noqa: ANN201
        """Open a nested scope for the duration of a `with` block."""
        saved = self.scope
        self.scope = Scope(saved)
        try:
            yield self.scope
        finally:
            self.scope = saved

    @contextmanager
    def inside(self, where: Where):  # noqa: ANN201
        """Enter a construct (parser, control, action, ...)."""
        saved = self.where
        self.where = where
        try:
            yield where
        finally:
            self.where = saved
