"""The `deparsers` section: the headers `emit` calls name, stacks and unions expanded."""

from __future__ import annotations

from typing import Any

from .. import ast
from .context import Context, unsupported
from .expressions import ExpressionLowering
from .storage import Env, HeaderRef, StackRef, StructRef, UnionRef


def emitted_headers(binding: Any, node: Any) -> list[str]:
    """Header instance names emitted for one `emit` argument, in wire order."""
    if isinstance(binding, HeaderRef):
        return [binding.name]
    if isinstance(binding, UnionRef):
        return [m.name for m in binding.members.values()]
    if isinstance(binding, StackRef):
        names: list[str] = []
        for element in binding.elements:
            names += emitted_headers(element, node)
        return names
    if isinstance(binding, StructRef):
        names = []
        for value in binding.fields.values():
            names += emitted_headers(value, node)
        return names
    raise unsupported(node, "emitting this value")


def lower_deparser(ctx: Context, decl: ast.ControlDeclaration, env: Env) -> dict:
    """The `deparser` object of control `decl` (only `emit` calls are allowed)."""
    exprs = ExpressionLowering(ctx)
    order: list[str] = []

    def walk(statements: list[Any]) -> None:
        for s in statements:
            if isinstance(s, ast.BlockStatement):
                walk(s.components)
                continue
            if isinstance(s, ast.EmptyStatement):
                continue
            call = s.call.call if isinstance(s, ast.MethodCallStatement) else None
            if call is None or getattr(call.target, "name", "") != "emit":
                raise unsupported(s, "anything but emit() in a v1model deparser")
            for name in emitted_headers(exprs.resolve(call.args[0], env), s):
                if name not in order:
                    order.append(name)

    walk(decl.body.components)
    deparser: dict = {"name": "deparser", "id": ctx.next_id("deparser")}
    info = ctx.source_info(decl)
    if info is not None:
        deparser["source_info"] = info
    deparser["order"] = order
    deparser["primitives"] = []
    return deparser
