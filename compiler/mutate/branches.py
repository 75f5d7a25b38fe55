"""Mutations of conditional code.

- negate_conditions: `if (c) A else B` becomes `if (!c) B else A` (an `if` without
  `else` gets an empty `then`). The condition is still evaluated once, first, whatever
  it calls (`t.apply().hit` included), so any condition may be negated.
- expand_conditional_assignments: `x = c ? a : b;` becomes `if (c) { x = a; } else {
  x = b; }`. `?:` evaluates only the chosen branch, as `if` does; the l-value `x` is
  evaluated before `c` in the assignment and after it in the `if`, so `x` must have no
  effect and no run-time index (then where it is evaluated cannot matter).
"""

from __future__ import annotations

from .. import ast
from ..printer import print_expression, print_statement
from .site import Site
from .tree import Place, has_effect, has_runtime_index, places

NEGATE = "negate_conditions"
EXPAND = "expand_conditional_assignments"


def negate_conditions(program: ast.Program, file: str) -> list[Site]:
    """Every `if` statement of `file`'s code."""
    sites = []
    for place in places(program, file):
        stmt = place.statement
        if isinstance(stmt, ast.IfStatement):
            sites.append(_negate_site(stmt))
    return sites


def _negate_site(stmt: ast.IfStatement) -> Site:
    def rewrite() -> None:
        negated = ast.UnaryExpression(pos=stmt.cond.pos, op="!", operand=stmt.cond)
        negated.type = stmt.cond.type
        otherwise = stmt.otherwise if stmt.otherwise is not None else ast.BlockStatement(pos=stmt.pos)
        stmt.cond, stmt.then, stmt.otherwise = negated, otherwise, stmt.then

    return Site(NEGATE, stmt.pos, f"`if ({print_expression(stmt.cond)})` negated, branches swapped", rewrite)


def expand_conditional_assignments(program: ast.Program, file: str) -> list[Site]:
    """Every `x = c ? a : b;` of `file`'s code whose target can be evaluated anywhere."""
    sites = []
    for place in places(program, file):
        stmt = place.statement
        if isinstance(stmt, ast.AssignmentStatement) and stmt.op is None \
                and isinstance(stmt.right, ast.TernaryExpression) \
                and not has_effect(stmt.left) and not has_runtime_index(stmt.left):
            sites.append(_expand_site(place, stmt))
    return sites


def _expand_site(place: Place, stmt: ast.AssignmentStatement) -> Site:
    def branch(value: ast.Expression) -> ast.BlockStatement:
        return ast.BlockStatement(pos=stmt.pos, components=[
            ast.AssignmentStatement(pos=stmt.pos, left=stmt.left, right=value)])

    def rewrite() -> None:
        t = stmt.right
        place.replace([ast.IfStatement(pos=stmt.pos, cond=t.cond, then=branch(t.then), otherwise=branch(t.otherwise))])

    return Site(EXPAND, stmt.pos, f"`{print_statement(stmt)}` as an if statement", rewrite)
