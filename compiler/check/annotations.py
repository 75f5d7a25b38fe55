"""Well-known annotations: their bodies must have the shape the back end reads."""

from __future__ import annotations

import dataclasses

from .. import ast
from ..diagnostics import CompileError

# Annotations that take exactly one string.
_STRING = ("name", "alias", "deprecated")
# Annotations that take exactly one integer.
_INTEGER = ("id", "priority")
# Annotations that take no body.
_EMPTY = (
    "hidden",
    "defaultonly",
    "tableonly",
    "atomic",
    "optional",
    "pure",
    "noSideEffects",
    "metadata",
)


def check_annotation(a: ast.Annotation) -> None:
    """Raise a located error when a well-known annotation's body has the wrong shape."""
    if a.name in _EMPTY and a.body:
        raise CompileError(a.pos, f"@{a.name} takes no arguments")
    if a.name in _STRING:
        if not a.args or len(a.args) != 1 or not isinstance(a.args[0], ast.StringLiteral):
            raise CompileError(a.pos, f"@{a.name} takes one string argument")
    if a.name in _INTEGER:
        if not a.args or len(a.args) != 1 or not _may_be_int(a.args[0]):
            raise CompileError(a.pos, f"@{a.name} takes one integer argument")
    if a.name == "field_list":
        if not a.args or not all(_may_be_int(x) for x in a.args):
            raise CompileError(a.pos, "@field_list takes one or more integer arguments")


def _may_be_int(e: ast.Expression) -> bool:
    """A literal, or an expression over names that `fold_integer_annotations` evaluates."""
    return not isinstance(e, ast.StringLiteral | ast.BoolLiteral)


def integer_annotations(node: object) -> list[ast.Annotation]:
    """The `@id`, `@priority` and `@field_list` annotations under `node` with non-literal arguments."""
    found = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Annotation):
            if (n.name in _INTEGER or n.name == "field_list") and any(
                not isinstance(x, ast.IntLiteral) for x in n.args or []
            ):
                found.append(n)
            continue
        if isinstance(n, list):
            stack.extend(n)
        elif dataclasses.is_dataclass(n) and isinstance(n, ast.Node):
            for f in dataclasses.fields(n):
                if f.compare:
                    stack.append(getattr(n, f.name))
    return found


def fold_integer_annotations(program: ast.Program, check_expr: object) -> None:
    """Give integer-annotation arguments such as `@field_list(KEEP)` their constant values.

    `check_expr` types and folds an expression in the top-level scope, so named
    constants and constant expressions over them are accepted, as p4c does.
    """
    for ann in integer_annotations(program):
        for arg in ann.args or []:
            check_expr(arg)  # type: ignore[operator]
            value = arg.const_value
            if not isinstance(value, int) or isinstance(value, bool):
                raise CompileError(arg.pos, f"@{ann.name} needs a compile-time integer constant")


def check_all_annotations(node: object) -> None:
    """Check every annotation anywhere under `node`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Annotation):
            check_annotation(n)
            continue
        if isinstance(n, list):
            stack.extend(n)
        elif dataclasses.is_dataclass(n) and isinstance(n, ast.Node):
            for f in dataclasses.fields(n):
                if f.compare:
                    stack.append(getattr(n, f.name))
