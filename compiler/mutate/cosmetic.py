"""Mutations that change only the form: rename a local, wrap a statement in a block,
split a declaration from its initialisation, swap the operands of a commutative operator.

- rename_locals: a variable or constant declared in a block, a parser state, or among a
  control's or parser's locals gets a fresh name, and every use follows it (uses are
  found by what the checker resolved, so a shadowing name elsewhere is left alone).
  Instances are not renamed: their names are control-plane names; nor is a local a
  table key names (the key's control-plane name is its text).
- wrap_in_blocks: a statement (not a declaration, whose scope would shrink) becomes
  `{ statement }`.
- split_declarations: `T x = e;` becomes `T x; x = e;` (`e` is evaluated at the same
  point; constants stay as they are).
- swap_commutative_operands: `a op b` becomes `b op a` for `+ * & | ^ == !=` and for
  `&& ||` when neither operand has an effect (then the order of evaluation is
  unobservable: `&&` and `||` of pure operands give the same value either way round),
  except inside a table key written without `@name` (its text is its name).
"""

from __future__ import annotations

from .. import ast
from ..printer import print_expression, print_statement
from .site import Site
from .tree import (
    Names,
    Place,
    has_effect,
    key_name_nodes,
    own_declarations,
    places,
    statement_lists,
    walk,
)

RENAME = "rename_locals"
WRAP = "wrap_in_blocks"
SPLIT = "split_declarations"
SWAP = "swap_commutative_operands"

COMMUTATIVE = frozenset({"+", "*", "&", "|", "^", "==", "!=", "&&", "||"})

_DECLARATIONS = (ast.VariableDeclaration, ast.ConstantDeclaration)


def rename_locals(program: ast.Program, file: str) -> list[Site]:
    """Every local variable or constant of `file`'s code."""
    names = Names(program)
    keys = key_name_nodes(program)
    keyed = {id(n.ref) for n in walk(program) if isinstance(n, ast.PathExpression) and id(n) in keys}
    sites = []
    for decl in own_declarations(program, file):
        if isinstance(decl, ast.ControlDeclaration | ast.ParserDeclaration):
            scope: ast.Node = decl
            for local in decl.locals:
                if isinstance(local, _DECLARATIONS) and id(local) not in keyed:
                    sites.append(_rename_site(names, local, scope))
    for holder, _ in statement_lists(program, file):
        for stmt in holder:
            if isinstance(stmt, _DECLARATIONS) and id(stmt) not in keyed:
                sites.append(_rename_site(names, stmt, program))
    return sites


def _rename_site(names: Names, decl: ast.Declaration, scope: ast.Node) -> Site:
    def rewrite() -> None:
        fresh = names.fresh(f"{decl.name}_renamed")
        for n in walk(scope):
            if isinstance(n, ast.PathExpression) and n.ref is decl:
                n.name = fresh
        decl.name = fresh

    return Site(RENAME, decl.pos, f"local `{decl.name}` renamed", rewrite)


def wrap_in_blocks(program: ast.Program, file: str) -> list[Site]:
    """Every statement of `file`'s code that is not a declaration."""
    sites = []
    for place in places(program, file):
        stmt = place.statement
        if not isinstance(stmt, ast.Declaration | ast.EmptyStatement):
            sites.append(_wrap_site(place))
    return sites


def _wrap_site(place: Place) -> Site:
    stmt = place.statement

    def rewrite() -> None:
        place.replace([ast.BlockStatement(pos=stmt.pos, components=[stmt])])

    first_line = print_statement(stmt).splitlines()[0].strip()
    return Site(WRAP, stmt.pos, f"`{first_line}` wrapped in a block", rewrite)


def split_declarations(program: ast.Program, file: str) -> list[Site]:
    """Every initialised local variable in `file`'s statement lists."""
    sites = []
    for place in places(program, file):
        stmt = place.statement
        if isinstance(stmt, ast.VariableDeclaration) and stmt.init is not None and place.holder is not None:
            sites.append(_split_site(place, stmt))
    return sites


def _split_site(place: Place, decl: ast.VariableDeclaration) -> Site:
    text = print_statement(decl)

    def rewrite() -> None:
        ref = ast.PathExpression(pos=decl.pos, name=decl.name)
        ref.ref, ref.type = decl, decl.p4type
        assign = ast.AssignmentStatement(pos=decl.pos, left=ref, right=decl.init)
        decl.init = None
        place.replace([decl, assign])

    return Site(SPLIT, decl.pos, f"`{text}` split", rewrite)


def swap_commutative_operands(program: ast.Program, file: str) -> list[Site]:
    """Every commutative operator with effect-free operands in `file`'s declarations."""
    return swap_operands(program, file, COMMUTATIVE, SWAP)


def swap_operands(program: ast.Program, file: str, operators: frozenset[str], name: str) -> list[Site]:
    """Sites that swap the operands of each `operators` expression with pure operands (the
    differential check's own tests pass a non-commutative one to see it caught)."""
    keys = key_name_nodes(program)
    in_annotations = {id(m) for n in walk(program) if isinstance(n, ast.Annotation) for m in walk(n)}
    sites = []
    for decl in own_declarations(program, file):
        for n in walk(decl):
            if isinstance(n, ast.BinaryExpression) and n.op in operators and id(n) not in keys \
                    and id(n) not in in_annotations and not has_effect(n.left) and not has_effect(n.right):
                sites.append(_swap_site(n, name))
    return sites


def _swap_site(expr: ast.BinaryExpression, name: str) -> Site:
    def rewrite() -> None:
        expr.left, expr.right = expr.right, expr.left

    return Site(name, expr.pos, f"`{print_expression(expr)}` operands swapped", rewrite)
