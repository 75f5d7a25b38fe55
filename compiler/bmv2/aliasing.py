"""Which `in` arguments of an inlined call must be copied in.

Inlining binds parameters to the caller's storage. That matches P4's copy-in/copy-out
only while the callee does not write, directly or through another parameter, storage the
`in` argument reads; for those arguments the value is copied into a local first, as p4c's
copy-in does. Storage is compared by access path (`hdr.ipv4.ttl`), so writing `hdr.tcp`
does not force a copy of an argument reading `hdr.ipv4.protocol`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import ast

WRITING = (ast.Direction.OUT, ast.Direction.INOUT)
# Semantic slots holding nodes declared elsewhere (`MethodCallStatement.call` is syntax).
SEMANTIC_SLOTS = frozenset({"ref", "type", "const_value", "p4type", "resolved"})

# An access path: the id of the root declaration, then member names.
Path = tuple[Any, ...]


def access_path(e: Any) -> Path | None:
    """`(root id, member, …)` of an l-value; indexing and slicing keep the whole prefix."""
    members: list[str] = []
    while True:
        if isinstance(e, ast.MemberExpression):
            members.append(e.member)
            e = e.expr
        elif isinstance(e, ast.IndexExpression | ast.SliceExpression):
            members.clear()
            e = e.expr
        elif isinstance(e, ast.PathExpression) and e.ref is not None:
            return (id(e.ref), *reversed(members))
        else:
            return None


def syntax_children(node: Any) -> list[Any]:
    """The syntactic sub-nodes of an AST node (semantic slots point elsewhere)."""
    if isinstance(node, list):
        return list(node)
    if isinstance(node, ast.Node):
        return [v for k, v in vars(node).items() if k not in SEMANTIC_SLOTS and isinstance(v, ast.Node | list)]
    return []


def read_paths(e: Any) -> list[Path]:
    """Access paths an argument expression reads."""
    found: list[Path] = []
    stack = [e]
    while stack:
        node = stack.pop()
        path = access_path(node) if isinstance(node, ast.Expression) else None
        if path is not None:
            found.append(path)
            continue
        stack.extend(syntax_children(node))
    return found


def call_writes(call: ast.CallInfo | None) -> list[Any]:
    """L-values a call writes: arguments of out/inout parameters, receivers of mutators."""
    if call is None:
        return []
    out = []
    if call.kind == ast.CallKind.BUILTIN and call.builtin in ("setValid", "setInvalid", "push_front", "pop_front"):
        out.append(call.receiver)
    params = call.params or getattr(call.target, "params", []) or []
    for param, arg in zip(params, call.args, strict=False):
        if arg is not None and getattr(param, "direction", None) in WRITING:
            out.append(arg)
    return out


def written_paths(nodes: Iterable[Any]) -> list[Path]:
    """Access paths the statements in `nodes` may write."""
    found: list[Path] = []
    seen: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        targets: list[Any] = []
        if isinstance(node, ast.AssignmentStatement):
            targets.append(node.left)
        if isinstance(node, ast.MethodCallExpression):
            targets.extend(call_writes(node.call))
        for target in targets:
            path = access_path(target)
            if path is not None:
                found.append(path)
        stack.extend(syntax_children(node))
    return found


def overlaps(a: Path, b: Path) -> bool:
    """Whether two access paths name overlapping storage (one is a prefix of the other)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def copied_parameters(params: list[Any], args: list[Any], body: Iterable[Any]) -> list[Any]:
    """The `in` (or directionless) parameters whose arguments must be copied in."""
    bound = {id(p): a for p, a in zip(params, args, strict=False) if a is not None}
    caller_writes: list[Path] = []
    written_params: set[int] = set()
    for path in written_paths(body):
        written_params.add(path[0])
        param = next((p for p in params if id(p) == path[0]), None)
        if param is None:
            caller_writes.append(path)  # storage of an enclosing scope, written directly
        elif param.direction in WRITING and id(param) in bound:
            base = access_path(bound[id(param)])
            if base is not None:
                caller_writes.append((*base, *path[1:]))
    copies = []
    for param, arg in zip(params, args, strict=False):
        if arg is None or param.direction in WRITING or arg.const_value is not None:
            continue
        if id(param) in written_params or any(
            overlaps(read, write) for read in read_paths(arg) for write in caller_writes
        ):
            copies.append(param)
    return copies


def copied_out_parameters(params: list[Any], args: list[Any], body: Iterable[Any]) -> list[Any]:
    """The `out`/`inout` parameters that need a local with copy-out instead of the caller's storage.

    Binding such a parameter to the argument's storage is exact only when nothing else in
    the call touches that storage: another argument overlapping it (`a(x, x)`: copy-out
    goes left to right, so the last write wins) or the body reaching it directly. `_`
    arguments (discarded results) always get a local.
    """
    bound = [(p, a) for p, a in zip(params, args, strict=False) if a is not None]
    body_paths: list[Path] | None = None
    copies = []
    for param, arg in bound:
        if param.direction not in WRITING:
            continue
        if isinstance(arg, ast.DontCareExpression):
            copies.append(param)
            continue
        path = access_path(arg)
        if path is None:
            continue
        others = [q for p, a in bound if p is not param for q in read_paths(a)]
        if body_paths is None:
            body_paths = [q for q in read_paths(list(body)) if q[0] not in {id(p) for p in params}]
        if any(overlaps(path, q) for q in others + body_paths):
            copies.append(param)
    return copies
