"""Which `in` arguments of an inlined call must be copied in.

Inlining binds parameters to the caller's storage. That matches P4's copy-in/copy-out
only while the callee neither writes the `in` parameter itself nor writes, through another
parameter, the storage the `in` argument reads; for those the argument is copied into a
local first, as p4c's copy-in does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import ast

WRITING = (ast.Direction.OUT, ast.Direction.INOUT)
SEMANTIC_SLOTS = frozenset({"ref", "type", "const_value", "call", "p4type", "resolved"})


def root(e: Any) -> Any:
    """The declaration at the base of an l-value (`hdr` in `hdr.ipv4.ttl`), or None."""
    while isinstance(e, ast.MemberExpression | ast.IndexExpression | ast.SliceExpression):
        e = e.expr
    return e.ref if isinstance(e, ast.PathExpression) else None


def read_roots(e: Any) -> set[int]:
    """Ids of every declaration an argument expression reads."""
    found: set[int] = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.PathExpression) and node.ref is not None:
            found.add(id(node.ref))
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, ast.Node):
            stack.extend(
                v for k, v in vars(node).items()
                if k not in SEMANTIC_SLOTS and isinstance(v, ast.Node | list)
            )
    return found


def call_writes(call: ast.CallInfo | None) -> list[Any]:
    """Roots a call writes: arguments of out/inout parameters, receivers of mutating methods."""
    if call is None:
        return []
    out = []
    if call.kind == ast.CallKind.BUILTIN and call.builtin in ("setValid", "setInvalid", "push_front", "pop_front"):
        out.append(root(call.receiver))
    params = call.params or getattr(call.target, "params", []) or []
    for param, arg in zip(params, call.args, strict=False):
        if arg is not None and getattr(param, "direction", None) in WRITING:
            out.append(root(arg))
    return out


def written_roots(nodes: Iterable[Any]) -> set[int]:
    """Ids of the declarations the statements (and expressions) in `nodes` may write."""
    found: set[int] = set()
    seen: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ast.AssignmentStatement):
            found.add(id(root(node.left)))
        if isinstance(node, ast.MethodCallExpression):
            found.update(id(r) for r in call_writes(node.call))
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, ast.Node):
            # Only the syntax below `node`: semantic slots point elsewhere in the program.
            stack.extend(
                v for k, v in vars(node).items()
                if k not in SEMANTIC_SLOTS and isinstance(v, ast.Node | list)
            )
    found.discard(id(None))
    return found


def copied_parameters(params: list[Any], args: list[Any], body: Iterable[Any]) -> list[Any]:
    """The `in` (or directionless) parameters whose arguments must be copied in."""
    writes = written_roots(body)
    written_args = {
        id(root(arg))
        for param, arg in zip(params, args, strict=False)
        if arg is not None and id(param) in writes and param.direction in WRITING
    }
    copies = []
    for param, arg in zip(params, args, strict=False):
        if arg is None or param.direction in WRITING or arg.const_value is not None:
            continue
        reads = read_roots(arg)
        # The callee writes the parameter, the argument's storage directly (an action's
        # enclosing control), or the same storage through an out/inout parameter.
        if id(param) in writes or reads & (written_args | writes):
            copies.append(param)
    return copies
