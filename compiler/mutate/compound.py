"""split_compound_assignments: `a op= b` becomes `a = a op b`.

The l-value of `a op= b` is evaluated once (spec 8.1; p4c's side-effect ordering), so
the split is direct only when `a` has no effect. When its one effect is a stack index,
`s[f(x)].g op= b`, the index goes into a temporary first, `T i = f(x); s[i].g = s[i].g
op b;`, which evaluates it once, before `b`, as the compound assignment does. Any other
effect in `a` (two effectful indices, a call elsewhere) skips the site.
"""

from __future__ import annotations

from .. import ast
from ..printer import print_statement
from .site import Site
from .tree import Names, Place, clone, has_effect, local, path_to, places, type_node_for, walk

NAME = "split_compound_assignments"


def split_compound_assignments(program: ast.Program, file: str) -> list[Site]:
    """Every compound assignment of `file`'s code that can be written out."""
    names = Names(program)
    sites = []
    for place in places(program, file):
        stmt = place.statement
        if not isinstance(stmt, ast.AssignmentStatement) or stmt.op is None:
            continue
        if not has_effect(stmt.left):
            sites.append(_site(names, place, stmt, None))
            continue
        index = _single_effectful_index(stmt.left)
        if index is not None and type_node_for(index.index.type, index.pos) is not None:
            sites.append(_site(names, place, stmt, index))
    return sites


def _single_effectful_index(left: ast.Expression) -> ast.IndexExpression | None:
    """The one stack index of `left` with an effect, when that is its only effect and no
    other index depends on run time (which the effect might change)."""
    indices = [n for n in walk(left) if isinstance(n, ast.IndexExpression)]
    effectful = [n for n in indices if has_effect(n.index)]
    if len(effectful) != 1:
        return None
    chosen = effectful[0]
    if any(n is not chosen and n.index.const_value is None for n in indices):
        return None
    # Nothing else in the l-value may call anything.
    rest = [n for n in walk(left) if n is not chosen.index and isinstance(n, ast.MethodCallExpression)
            and not any(n is m for m in walk(chosen.index))]
    return None if rest else chosen


def _site(names: Names, place: Place, stmt: ast.AssignmentStatement,
          index: ast.IndexExpression | None) -> Site:
    text = print_statement(stmt)

    def rewrite() -> None:
        before = []
        if index is not None:
            name = names.fresh("mut_idx")
            before.append(local(name, type_node_for(index.index.type, index.pos), index.index, index.pos))
            index.index = path_to(name, index.pos, index.index)
        read = clone(stmt.left)
        right = ast.BinaryExpression(pos=stmt.right.pos, op=stmt.op, left=read, right=stmt.right)
        right.type = stmt.left.type
        place.replace([*before, ast.AssignmentStatement(pos=stmt.pos, left=stmt.left, right=right)])

    how = "with the index in a temporary" if index is not None else "written out"
    return Site(NAME, stmt.pos, f"`{text}` {how}", rewrite)
