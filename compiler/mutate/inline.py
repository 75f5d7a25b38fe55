"""inline_functions: a call of a program's function or action becomes a block holding
its body.

Copy-in/copy-out as spec 6.8 defines a call: each `in`/`inout` argument is copied into
a fresh local named for the parameter, left to right, an `out` parameter's local starts
uninitialised; the body runs on those locals (its own locals renamed too); then each
`out`/`inout` local is copied back to its argument, left to right; a result goes into
its own local before the copies back, and to the assignment's target after them:

    x = f(a, b);   =>   { bit<8> f_p_0 = a; bit<8> f_q_0; ...body...;
                          bit<8> f_ret_0 = <returned>; b = f_q_0; x = f_ret_0; }

Taken: a call statement, `x = f(...)`, or `T x = f(...)` calling a non-generic function
whose body returns only as its last statement, and a call statement of an action whose
body neither returns nor exits (its directionless parameters are copied in like `in`
ones). Skipped also when the body names something the call site could hide: a name the
callee does not declare that a local of the calling block's declaration also has. Skipped when an `out`/`inout` argument
or the target has any effect or a run-time index (the argument is an l-value evaluated
once, at the call, and the body's copies could change the index), or the call's other
arguments have effects after an l-value argument (they would run before it is
evaluated, which here cannot matter only because l-values are effect-free).
"""

from __future__ import annotations

from .. import ast
from ..printer import print_expression
from .site import Site
from .tree import (
    Names,
    Place,
    checksum_controls,
    clone,
    decl_places,
    has_effect,
    has_runtime_index,
    local,
    own_declarations,
    path_to,
    walk,
)

NAME = "inline_functions"


def inline_functions(program: ast.Program, file: str) -> list[Site]:
    """Every call of a function in `file`'s code that can be replaced by its body."""
    names = Names(program)
    sites = []
    skip = checksum_controls(program)
    for decl in own_declarations(program, file):
        if id(decl) in skip:
            continue
        local_names = {n.name for n in walk(decl) if isinstance(n, ast.VariableDeclaration | ast.ConstantDeclaration)}
        for place in decl_places(decl):
            site = _site_at(names, place, local_names)
            if site is not None:
                sites.append(site)
    return sites


def _site_at(names: Names, place: Place, local_names: set[str]) -> Site | None:
    """The inlining of the call `place` holds, when it can be inlined."""
    stmt = place.statement
    call, target = _call_of(stmt)
    if call is None or not _inlinable(call, target) or _hidden(call.call.target, local_names):
        return None
    if call.call.kind is ast.CallKind.FUNCTION:
        last = call.call.target.body.components[-1:]
        dropped = isinstance(stmt, ast.MethodCallStatement) and last and isinstance(last[0], ast.ReturnStatement)
        if dropped and last[0].value is not None and has_effect(last[0].value):
            # The discarded result's own effects would be lost with it.
            return None
    return _site(names, place, stmt, call, target)


def _hidden(callee: ast.Node, local_names: set[str]) -> bool:
    """Whether the callee's body names something of its surroundings (a constant, a
    control's local) that a local of the call site's declaration could hide."""
    own = {id(p) for p in callee.params}
    own |= {id(n) for n in walk(callee.body) if isinstance(n, ast.VariableDeclaration | ast.ConstantDeclaration)}
    return any(isinstance(n, ast.PathExpression) and id(n.ref) not in own and n.name in local_names
               for n in walk(callee.body))


def _call_of(stmt: ast.Node) -> tuple[ast.MethodCallExpression | None, ast.Expression | None]:
    """The function call a statement consists of, and where its result goes."""
    if isinstance(stmt, ast.MethodCallStatement):
        return stmt.call, None
    if isinstance(stmt, ast.AssignmentStatement) and stmt.op is None and isinstance(stmt.right, ast.MethodCallExpression):
        return stmt.right, stmt.left
    if isinstance(stmt, ast.VariableDeclaration) and isinstance(stmt.init, ast.MethodCallExpression):
        return stmt.init, None
    return None, None


def _inlinable(call: ast.MethodCallExpression, target: ast.Expression | None) -> bool:
    info = call.call
    if info is None or info.kind not in (ast.CallKind.FUNCTION, ast.CallKind.ACTION):
        return False
    fn = info.target
    if info.kind is ast.CallKind.ACTION:
        if not isinstance(fn, ast.ActionDeclaration) or target is not None:
            return False
        if any(isinstance(n, ast.ReturnStatement | ast.ExitStatement) for n in walk(fn.body)):
            return False
    elif not isinstance(fn, ast.FunctionDeclaration) or fn.type_params:
        return False
    body = fn.body.components
    returns = [n for n in walk(fn.body) if isinstance(n, ast.ReturnStatement)]
    if any(r is not (body[-1] if body else None) for r in returns):
        return False
    if any(isinstance(n, ast.ExitStatement) for n in walk(fn.body)):
        return False
    if target is not None and (has_effect(target) or has_runtime_index(target)):
        return False
    for param, arg in zip(info.params, info.args, strict=False):
        if arg is None:
            return False
        if param.direction in (ast.Direction.OUT, ast.Direction.INOUT) and not isinstance(arg, ast.DontCareExpression):
            if has_effect(arg) or has_runtime_index(arg):
                return False
    return True


def _site(names: Names, place: Place, stmt: ast.Node, call: ast.MethodCallExpression,
          target: ast.Expression | None) -> Site:
    info = call.call
    fn: ast.FunctionDeclaration | ast.ActionDeclaration = info.target

    def rewrite() -> None:
        pos = stmt.pos
        renamed: dict[int, str] = {}
        prologue, epilogue = [], []
        for param, arg in zip(info.params, info.args, strict=False):
            name = names.fresh(f"{fn.name}_{param.name}")
            renamed[id(param)] = name
            copy_in = param.direction is not ast.Direction.OUT
            prologue.append(local(name, clone(param.type_node), clone(arg) if copy_in else None, pos))
            if param.direction in (ast.Direction.OUT, ast.Direction.INOUT) and not isinstance(arg, ast.DontCareExpression):
                epilogue.append(ast.AssignmentStatement(pos=pos, left=clone(arg), right=path_to(name, pos)))
        copies: dict[int, ast.Node] = {}
        body = [clone(c, copies) for c in fn.body.components]
        for n in (n for c in fn.body.components for n in walk(c)):
            if isinstance(n, ast.VariableDeclaration | ast.ConstantDeclaration):
                renamed[id(n)] = copies[id(n)].name = names.fresh(f"{fn.name}_{n.name}")
        for n in (n for c in body for n in walk(c)):
            if isinstance(n, ast.PathExpression) and id(n.ref) in renamed:
                n.name = renamed[id(n.ref)]
        result: list[ast.Node] = []
        if body and isinstance(body[-1], ast.ReturnStatement):
            returned = body.pop().value
            declared = isinstance(stmt, ast.VariableDeclaration)
            if returned is not None and (target is not None or declared):
                name = names.fresh(f"{fn.name}_ret")
                result.append(local(name, clone(fn.return_type), returned, pos))
                left = path_to(stmt.name, pos) if declared else target
                epilogue.append(ast.AssignmentStatement(pos=pos, left=left, right=path_to(name, pos)))
        block = ast.BlockStatement(pos=pos, components=[*prologue, *body, *result, *epilogue])
        if isinstance(stmt, ast.VariableDeclaration):
            # The declared name stays visible after the call: declared outside, set inside.
            bare = ast.VariableDeclaration(pos=stmt.pos, name=stmt.name, annotations=stmt.annotations,
                                           type_node=stmt.type_node)
            place.replace([bare, block])
        else:
            place.replace([block])

    return Site(NAME, call.pos, f"`{print_expression(call)}` inlined", rewrite)
