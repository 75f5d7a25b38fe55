"""introduce_temporaries: `x = a + b * c;` becomes `bit<8> t = b * c; x = a + t;`.

A subexpression moves into a local declared just before its statement. That keeps the
meaning when the subexpression is pure (no call but a pure built-in), has a run-time
value (not a compile-time constant, which may stand where only constants may), is not
an extern's generic argument or part of one (those may name fields), is a
`bit<W>`, `int<W>` or `bool` (types a local can be written with), indexes no stack at
run time (an out-of-range read must not move), and nothing the statement evaluates
before it can change what it reads: the statement makes no calls with effects. A
select key moves to the end of its state's statements, where the select is evaluated.
"""

from __future__ import annotations

from .. import ast
from ..printer import print_expression
from .site import Site
from .tree import (
    Names,
    Place,
    clone,
    has_effect,
    has_runtime_index,
    is_constant,
    local,
    own_declarations,
    path_to,
    places,
    replace_child,
    type_node_for,
    walk,
)

NAME = "introduce_temporaries"

# Arguments that may be values computed in advance: directions whose argument is read once.
_VALUE_DIRECTIONS = (ast.Direction.IN, ast.Direction.NONE)


def introduce_temporaries(program: ast.Program, file: str) -> list[Site]:
    """Every subexpression of `file`'s code that can move into a temporary."""
    names = Names(program)
    sites: list[Site] = []
    for place in places(program, file):
        for root in _value_roots(place.statement):
            for parent, expr in _movable(root):
                sites.append(_site(names, place, parent, expr))
    for decl in own_declarations(program, file):
        if isinstance(decl, ast.ParserDeclaration):
            for state in decl.states:
                sel = state.transition
                if not isinstance(sel, ast.SelectExpression) or any(has_effect(e) for e in sel.exprs):
                    continue
                end = Place("parser", holder=state.components, index=len(state.components))
                for root in sel.exprs:
                    for parent, expr in _movable_with_root(sel, root):
                        sites.append(_site(names, end, parent, expr, at_end=True))
    return sites


def _value_roots(stmt: ast.Node) -> list[ast.Expression]:
    """The expressions of `stmt` that are evaluated as values, when moving one of their
    parts ahead of the statement cannot reorder it against an effect."""
    if has_effect_outside(stmt):
        return []
    if isinstance(stmt, ast.AssignmentStatement):
        return [stmt.right]
    if isinstance(stmt, ast.IfStatement):
        return [stmt.cond]
    if isinstance(stmt, ast.VariableDeclaration) and stmt.init is not None:
        return [stmt.init]
    if isinstance(stmt, ast.ReturnStatement) and stmt.value is not None:
        return [stmt.value]
    if isinstance(stmt, ast.SwitchStatement):
        return [stmt.expr]
    if isinstance(stmt, ast.MethodCallStatement):
        info = stmt.call.call
        if info is None or info.kind not in (ast.CallKind.ACTION, ast.CallKind.FUNCTION,
                                             ast.CallKind.EXTERN_FUNCTION, ast.CallKind.EXTERN_METHOD):
            return []
        written = {id(a.value) for a in stmt.call.args}
        extern = info.kind in (ast.CallKind.EXTERN_FUNCTION, ast.CallKind.EXTERN_METHOD)
        # A left-out argument binds the parameter's default: that is not the call's to move.
        return [arg for param, arg in zip(info.params, info.args, strict=False)
                if arg is not None and id(arg) in written
                and getattr(param, "direction", None) in _VALUE_DIRECTIONS
                and not (extern and _generic(param))]
    return []


def _generic(param: ast.Parameter) -> bool:
    """Whether a parameter's type is a type variable: an extern's generic argument may name
    fields to be read later rather than pass values (v1model's `resubmit({meta.a})`,
    `clone3`, `recirculate` and `digest` data is read at the end of the block, as BMv2
    does), so a temporary could change what is read."""
    node = param.type_node
    return isinstance(node, ast.NamedType) and isinstance(node.ref, ast.TypeParameter)


def has_effect_outside(stmt: ast.Node) -> bool:
    """Whether `stmt` itself (not the statements nested in it) has an effect other than
    the one call a call statement makes."""
    if isinstance(stmt, ast.MethodCallStatement):
        return any(has_effect(a.value) for a in stmt.call.args) or has_effect(stmt.call.callee)
    if isinstance(stmt, ast.AssignmentStatement):
        return has_effect(stmt.left) or has_effect(stmt.right)
    if isinstance(stmt, ast.IfStatement):
        return has_effect(stmt.cond)
    if isinstance(stmt, ast.VariableDeclaration):
        return stmt.init is not None and has_effect(stmt.init)
    if isinstance(stmt, ast.ReturnStatement):
        return stmt.value is not None and has_effect(stmt.value)
    if isinstance(stmt, ast.SwitchStatement):
        # A switch on `t.apply().action_run` applies the table: it stays where it is.
        return has_effect(stmt.expr)
    return True


def _movable(root: ast.Expression) -> list[tuple[ast.Node | None, ast.Expression]]:
    """(parent, expression) pairs under `root` (root itself has parent None) that can move."""
    return _movable_with_root(None, root)


def _movable_with_root(holder: ast.Node | None, root: ast.Expression) -> list[tuple[ast.Node | None, ast.Expression]]:
    out = []
    parent_of = {id(root): holder}
    for node in walk(root):
        for child in _expression_children(node):
            parent_of[id(child)] = node
        if isinstance(node, ast.Expression) and _can_move(node, parent_of.get(id(node))):
            out.append((parent_of.get(id(node)), node))
    return out


def _expression_children(node: ast.Node) -> list[ast.Node]:
    """Children of `node` that are evaluated as part of it (not slice bounds, not types)."""
    if isinstance(node, ast.SliceExpression):
        return [node.expr]
    if isinstance(node, ast.MethodCallExpression):
        return [a.value for a in node.args]
    if isinstance(node, ast.CastExpression | ast.MemberExpression):
        return [node.expr]
    if isinstance(node, ast.IndexExpression):
        return [node.expr, node.index]
    if isinstance(node, ast.UnaryExpression):
        return [node.operand]
    if isinstance(node, ast.BinaryExpression):
        return [node.left, node.right]
    if isinstance(node, ast.TernaryExpression):
        return [node.cond, node.then, node.otherwise]
    if isinstance(node, ast.ListExpression):
        return list(node.components)
    if isinstance(node, ast.StructExpression):
        return [f.value for f in node.fields]
    return []


def _can_move(expr: ast.Expression, parent: ast.Node | None) -> bool:
    if isinstance(expr, ast.IntLiteral | ast.BoolLiteral) or is_constant(expr):
        return False
    if type_node_for(expr.type, expr.pos) is None:
        return False
    if has_effect(expr) or has_runtime_index(expr):
        return False
    if isinstance(parent, ast.MemberExpression | ast.IndexExpression) and parent.expr is expr:
        # `h.f` stays whole: a header's field is not a value of its own here.
        return False
    if isinstance(parent, ast.MethodCallExpression):
        # Arguments of calls inside an expression: only `in` (or directionless) ones.
        info = parent.call
        if info is None:
            return False
        for param, arg in zip(info.params, info.args, strict=False):
            if arg is expr:
                return getattr(param, "direction", None) in _VALUE_DIRECTIONS
        return False
    # A bare name is already as simple as a temporary.
    return not isinstance(expr, ast.PathExpression)


def _site(names: Names, place: Place, parent: ast.Node | None, expr: ast.Expression,
          at_end: bool = False) -> Site:
    text = print_expression(expr)

    def rewrite() -> None:
        name = names.fresh("mut_tmp")
        decl = local(name, type_node_for(expr.type, expr.pos), clone(expr), expr.pos)
        ref = path_to(name, expr.pos, expr)
        if parent is None:
            replace_child(_statement_holding(place, expr), expr, ref)
        else:
            replace_child(parent, expr, ref)
        if at_end:
            place.holder.append(decl)
        else:
            place.insert_before([decl])

    return Site(NAME, expr.pos, f"`{text}` into a temporary", rewrite)


def _statement_holding(place: Place, expr: ast.Expression) -> ast.Node:
    """The node whose field holds `expr` directly: the statement, or a call's argument."""
    stmt = place.statement
    if isinstance(stmt, ast.MethodCallStatement):
        for arg in stmt.call.args:
            if arg.value is expr:
                return arg
    return stmt
