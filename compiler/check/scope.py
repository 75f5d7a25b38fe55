"""Name resolution: nested scopes mapping names to declarations.

P4 declares before use, so one walk that opens a scope per block, parser,
control, action and generic declaration resolves every name. Extern
functions and extern methods may be overloaded by parameter count; any other
second declaration of a name in the same scope is an error. An inner scope
may shadow an outer one.
"""

from __future__ import annotations

from ..diagnostics import CompileError, SourcePos


class Scope:
    """One level of names; `parent` is the enclosing scope."""

    def __init__(self, parent: Scope | None = None) -> None:
        self.parent = parent
        self.names: dict[str, list[object]] = {}

    def declare(self, name: str, decl: object, pos: SourcePos, overloadable: bool = False) -> None:
        """Add `name`; a duplicate in this scope is an error unless both are overloadable."""
        existing = self.names.get(name)
        if existing:
            if overloadable and all(getattr(d, "_overloadable", False) for d in existing):
                existing.append(decl)
                return
            first = getattr(existing[0], "pos", None)
            where = f" (first declared at {first})" if first else ""
            raise CompileError(pos, f"duplicate declaration of '{name}'{where}")
        if overloadable:
            object.__setattr__(decl, "_overloadable", True)
        self.names[name] = [decl]

    def lookup_all(self, name: str) -> list[object]:
        """Every declaration of `name` in the nearest scope that has one."""
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found:
                return found
            scope = scope.parent
        return []

    def lookup(self, name: str) -> object | None:
        """The nearest declaration of `name`, or None."""
        found = self.lookup_all(name)
        return found[0] if found else None

    def root(self) -> Scope:
        """The top-level scope."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope
