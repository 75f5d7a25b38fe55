"""reorder_independent_statements: two adjacent assignments trade places.

Only assignments without any call (pure built-ins such as `isValid()` aside: no
function, extern, action or table apply), where neither writes what the other reads or
writes. The elements of a header stack are not told apart (`s[1].a` and `s[i].a`
conflict, `s[1].a` and `s[2].b` do not), nor the members of a header union (assigning one
changes the others' validity).
"""

from __future__ import annotations

from .. import ast
from ..printer import print_statement
from .site import Site
from .tree import access_path, any_overlap, has_effect, reads, statement_lists

NAME = "reorder_independent_statements"


def reorder_independent_statements(program: ast.Program, file: str) -> list[Site]:
    """Every pair of adjacent independent assignments in `file`'s code."""
    sites = []
    for holder, _ in statement_lists(program, file):
        for i in range(len(holder) - 1):
            first, second = holder[i], holder[i + 1]
            if _independent(first, second):
                sites.append(_site(holder, i))
    return sites


def _effects(stmt: ast.Node) -> tuple[list, list] | None:
    """(reads, writes) of a call-free assignment; None for any other statement."""
    if not isinstance(stmt, ast.AssignmentStatement) or has_effect(stmt.left) or has_effect(stmt.right):
        return None
    target = access_path(stmt.left)
    if target is None:
        return None
    read = reads(stmt.right)
    # The l-value's indices are read; a compound assignment reads its target too.
    read += [p for n in _indices(stmt.left) for p in reads(n)]
    if stmt.op is not None:
        read.append(target)
    return read, [target]


def _indices(left: ast.Expression) -> list[ast.Expression]:
    out = []
    e = left
    while isinstance(e, ast.MemberExpression | ast.IndexExpression | ast.SliceExpression):
        if isinstance(e, ast.IndexExpression):
            out.append(e.index)
        e = e.expr
    return out


def _independent(a: ast.Node, b: ast.Node) -> bool:
    ea, eb = _effects(a), _effects(b)
    if ea is None or eb is None:
        return False
    (ra, wa), (rb, wb) = ea, eb
    return not (any_overlap(wa, rb) or any_overlap(wa, wb) or any_overlap(wb, ra))


def _site(holder: list, i: int) -> Site:
    first, second = holder[i], holder[i + 1]
    what = f"`{print_statement(first)}` after `{print_statement(second)}`"

    def rewrite() -> None:
        holder[i], holder[i + 1] = holder[i + 1], holder[i]

    return Site(NAME, first.pos, what, rewrite)
