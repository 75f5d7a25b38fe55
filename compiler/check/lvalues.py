"""L-values: what may be assigned or passed to an out/inout parameter."""

from __future__ import annotations

from .. import ast
from ..types import StructLike


def lvalue_problem(expr: ast.Expression) -> str | None:
    """None when `expr` is an l-value, else the reason it is not."""
    if isinstance(expr, ast.PathExpression):
        decl = expr.ref
        if isinstance(decl, ast.VariableDeclaration):
            return None
        if isinstance(decl, ast.Parameter):
            if decl.direction in (ast.Direction.OUT, ast.Direction.INOUT):
                return None
            if decl.direction is ast.Direction.IN:
                return f"parameter '{decl.name}' has direction in and cannot be written"
            return f"parameter '{decl.name}' has no direction and cannot be written"
        if isinstance(decl, ast.ConstantDeclaration):
            return f"'{expr.name}' is a constant and cannot be written"
        return f"'{expr.name}' is not a variable and cannot be written"
    if isinstance(expr, ast.MemberExpression):
        if isinstance(expr.expr.type, StructLike) or expr.member in ("next", "last"):
            return lvalue_problem(expr.expr)
        return f"'.{expr.member}' is not an l-value"
    if isinstance(expr, ast.IndexExpression | ast.SliceExpression):
        return lvalue_problem(expr.expr)
    return "this expression is not an l-value"
