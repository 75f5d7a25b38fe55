"""What the mutations share: walking a checked tree, where statements sit, what an
expression reads and writes, whether it has effects, fresh names.

Every question here is answered conservatively: "has an effect" is any call but a pure
built-in, and a read or write of a header stack or union covers all of it, so a
mutation that relies on the answer can only skip sites it could have taken.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from .. import ast, types
from ..diagnostics import SourcePos

# Built-in methods that neither change state nor read the packet.
PURE_BUILTINS = frozenset(
    {"isValid", "minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}
)


def children(node: object) -> Iterator[object]:
    """The syntactic children of an AST node (nodes and lists of nodes), in field order."""
    if not dataclasses.is_dataclass(node):
        return
    for f in dataclasses.fields(node):
        if f.name == "pos" or not f.compare:
            continue
        value = getattr(node, f.name)
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.Node))
        elif isinstance(value, ast.Node):
            yield value


def walk(node: object) -> Iterator[ast.Node]:
    """`node` and every node below it, parents first."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Node):
            yield n
        stack.extend(reversed(list(children(n))))


def clone(node: ast.Node, copies: dict[int, ast.Node] | None = None) -> ast.Node:
    """A copy of the syntactic tree under `node`; semantic slots (types, refs, calls) are
    shared with the original, so the copy still says what each name refers to. `copies`,
    when given, receives each original node's copy by the original's id."""
    values = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.compare and f.name != "pos":
            if isinstance(value, list):
                value = [clone(v, copies) if isinstance(v, ast.Node) else v for v in value]
            elif isinstance(value, ast.Node):
                value = clone(value, copies)
        values[f.name] = value
    copy = type(node)(**values)
    if copies is not None:
        copies[id(node)] = copy
    return copy


def replace_child(parent: ast.Node, old: ast.Node, new: ast.Node) -> None:
    """Put `new` where `parent` holds `old` (a field or a list element)."""
    for f in dataclasses.fields(parent):
        value = getattr(parent, f.name)
        if value is old:
            setattr(parent, f.name, new)
            return
        if isinstance(value, list):
            for i, v in enumerate(value):
                if v is old:
                    value[i] = new
                    return
    raise ValueError(f"{type(parent).__name__} does not hold that {type(old).__name__}")


# ---------------------------------------------------------------- effects


def calls(expr: ast.Node) -> Iterator[ast.MethodCallExpression]:
    """Every call under `expr`."""
    return (n for n in walk(expr) if isinstance(n, ast.MethodCallExpression))


def is_pure_call(call: ast.MethodCallExpression) -> bool:
    """A call that can be evaluated any number of times, at any moment, with the same result."""
    info = call.call
    return info is not None and info.kind is ast.CallKind.BUILTIN and info.builtin in PURE_BUILTINS


def has_effect(node: ast.Node) -> bool:
    """Whether evaluating `node` may change state or read the packet: any call but a pure
    built-in (functions count even when their bodies happen to be pure)."""
    return any(not is_pure_call(c) for c in calls(node))


def has_runtime_index(node: ast.Node) -> bool:
    """Whether `node` indexes a stack (or anything) by a value only known at run time."""
    return any(isinstance(n, ast.IndexExpression) and n.index.const_value is None for n in walk(node))


def is_constant(expr: ast.Expression) -> bool:
    """Whether the checker folded `expr` to a compile-time value."""
    return expr.const_value is not None


# ---------------------------------------------------------------- reads and writes

# An access path: the declaration (by id) and the member names below it.
Path = tuple


def access_path(expr: ast.Expression) -> Path | None:
    """The storage an l-value-like expression names, coarsened to a whole header stack or
    union (their elements and members share validity); None when it names none."""
    if isinstance(expr, ast.PathExpression):
        return (id(expr.ref) if expr.ref is not None else expr.name,)
    if isinstance(expr, ast.SliceExpression):
        return access_path(expr.expr)
    if isinstance(expr, ast.IndexExpression):
        return access_path(expr.expr)
    if isinstance(expr, ast.MemberExpression):
        base = access_path(expr.expr)
        if base is None:
            return None
        if isinstance(expr.expr.type, types.Stack | types.HeaderUnion):
            return base
        return (*base, expr.member)
    return None


def reads(expr: ast.Node) -> list[Path]:
    """The storage `expr` reads (maximal access paths; every name it mentions)."""
    out: list[Path] = []

    def visit(e: ast.Node) -> None:
        if isinstance(e, ast.MemberExpression | ast.PathExpression | ast.IndexExpression | ast.SliceExpression):
            path = access_path(e)
            if path is not None:
                out.append(path)
                # Indices and slice bounds are read too.
                for sub in walk(e):
                    if isinstance(sub, ast.IndexExpression):
                        visit(sub.index)
                return
        for c in children(e):
            visit(c)

    visit(expr)
    return out


def overlaps(a: Path, b: Path) -> bool:
    """Whether two access paths may share storage (one is a prefix of the other)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def any_overlap(xs: list[Path], ys: list[Path]) -> bool:
    """Whether some path of `xs` overlaps some path of `ys`."""
    return any(overlaps(x, y) for x in xs for y in ys)


# ---------------------------------------------------------------- statement places


@dataclass
class Place:
    """Where a statement sits: `holder[index]` of a statement list, or the single
    statement field `attr` of `owner` (an `if` branch, a loop body). `kind` is the block
    the code runs in: `control`, `action`, `function` or `parser`."""

    kind: str
    holder: list | None = None
    index: int = 0
    owner: ast.Node | None = None
    attr: str = ""

    @property
    def statement(self) -> ast.Node:
        """The statement at this place."""
        return self.holder[self.index] if self.holder is not None else getattr(self.owner, self.attr)

    def insert_before(self, new: list[ast.Node]) -> None:
        """Put `new` statements just before this one (a branch becomes a block)."""
        if self.holder is not None:
            self.holder[self.index:self.index] = new
            self.index += len(new)
            return
        stmt = self.statement
        setattr(self.owner, self.attr, ast.BlockStatement(pos=stmt.pos, components=[*new, stmt]))

    def replace(self, new: list[ast.Node]) -> None:
        """Put `new` statements where this one is."""
        if self.holder is not None:
            self.holder[self.index:self.index + 1] = new
            return
        stmt = self.statement
        setattr(self.owner, self.attr, new[0] if len(new) == 1 else
                ast.BlockStatement(pos=stmt.pos, components=new))


def own_declarations(program: ast.Program, file: str) -> list[ast.Node]:
    """The top-level declarations written in `file` (not those it includes)."""
    return [d for d in program.declarations if d.pos.file == file]


def places(program: ast.Program, file: str) -> Iterator[Place]:
    """Every statement place in the code of `file`'s declarations, outer before inner. The
    checksum controls of v1model are left out: they may hold only checksum calls (in BMv2
    JSON a checksum control is a list of checksum entries), so no rewrite fits there."""
    skip = checksum_controls(program)
    for decl in own_declarations(program, file):
        if id(decl) not in skip:
            yield from decl_places(decl)


# The package parameter types of v1model whose blocks are checksum entries, not code.
CHECKSUM_BLOCK_TYPES = frozenset({"VerifyChecksum", "ComputeChecksum"})


def checksum_controls(program: ast.Program) -> set[int]:
    """The ids of the controls `main` passes for a checksum block of its package."""
    out: set[int] = set()
    for main in (d for d in program.declarations if isinstance(d, ast.Instantiation) and d.name == "main"):
        package_type = main.type_node.base if isinstance(main.type_node, ast.SpecializedTypeNode) else main.type_node
        package = getattr(package_type, "ref", None)
        params = getattr(package, "params", [])
        for i, arg in enumerate(main.args):
            param = next((p for p in params if p.name == arg.name), None) if arg.name else \
                (params[i] if i < len(params) else None)
            type_node = getattr(param, "type_node", None)
            base = type_node.base if isinstance(type_node, ast.SpecializedTypeNode) else type_node
            if getattr(base, "name", None) not in CHECKSUM_BLOCK_TYPES:
                continue
            value = arg.value.callee if isinstance(arg.value, ast.MethodCallExpression) else arg.value
            block = getattr(value, "ref", None)
            if isinstance(block, ast.Instantiation):
                block = getattr(block.type_node, "ref", None)
            if isinstance(block, ast.ControlDeclaration):
                out.add(id(block))
    return out


def decl_places(decl: ast.Node) -> Iterator[Place]:
    """Every statement place in one top-level declaration's code."""
    if isinstance(decl, ast.ControlDeclaration):
        for local in decl.locals:
            if isinstance(local, ast.ActionDeclaration):
                yield from _list_places(local.body.components, "action")
        yield from _list_places(decl.body.components, "control")
    elif isinstance(decl, ast.ActionDeclaration):
        yield from _list_places(decl.body.components, "action")
    elif isinstance(decl, ast.FunctionDeclaration):
        yield from _list_places(decl.body.components, "function")
    elif isinstance(decl, ast.ParserDeclaration):
        for state in decl.states:
            yield from _list_places(state.components, "parser")


def _list_places(holder: list, kind: str) -> Iterator[Place]:
    for i in range(len(holder)):
        yield from _stmt_places(Place(kind, holder=holder, index=i))


def _stmt_places(place: Place) -> Iterator[Place]:
    yield place
    s, kind = place.statement, place.kind
    if isinstance(s, ast.BlockStatement):
        yield from _list_places(s.components, kind)
    elif isinstance(s, ast.IfStatement):
        yield from _stmt_places(Place(kind, owner=s, attr="then"))
        if s.otherwise is not None:
            yield from _stmt_places(Place(kind, owner=s, attr="otherwise"))
    elif isinstance(s, ast.SwitchStatement):
        for case in s.cases:
            if case.body is not None:
                yield from _list_places(case.body.components, kind)
    elif isinstance(s, ast.ForStatement | ast.ForInStatement):
        yield from _stmt_places(Place(kind, owner=s, attr="body"))


def statement_lists(program: ast.Program, file: str) -> Iterator[tuple[list, str]]:
    """Every statement list (block, state, case body) in `file`'s code, with its kind."""
    seen: set[int] = set()
    for place in places(program, file):
        if place.holder is not None and id(place.holder) not in seen:
            seen.add(id(place.holder))
            yield place.holder, place.kind


def key_name_nodes(program: ast.Program) -> set[int]:
    """The ids of every node inside a table key written without `@name`: the key's
    control-plane name is its expression as written (p4c's too), so its text must stay."""
    out: set[int] = set()
    for n in walk(program):
        if isinstance(n, ast.KeyElement) and ast.find_annotation(n.annotations, "name") is None:
            out.update(id(m) for m in walk(n.expr))
    return out


# ---------------------------------------------------------------- names and types


class Names:
    """Fresh identifiers: none the program uses anywhere (declarations, members, paths)."""

    def __init__(self, program: ast.Program) -> None:
        self.used: set[str] = set()
        for n in walk(program):
            for attr in ("name", "member"):
                value = getattr(n, attr, None)
                if isinstance(value, str):
                    self.used.add(value)

    def fresh(self, stem: str) -> str:
        """`stem_N` for the first N nobody uses; it is then taken."""
        n = 0
        while f"{stem}_{n}" in self.used:
            n += 1
        name = f"{stem}_{n}"
        self.used.add(name)
        return name


def type_node_for(t: object, pos: SourcePos) -> ast.TypeNode | None:
    """A written type for `bit<W>`, `int<W>` and `bool` values (None for any other type)."""
    if isinstance(t, types.Bits) and t.width > 0:
        return ast.BaseTypeNode(pos=pos, kind="int" if t.signed else "bit",
                                width=ast.IntLiteral(pos=pos, value=t.width, text=str(t.width)))
    if isinstance(t, types.Bool):
        return ast.BaseTypeNode(pos=pos, kind="bool")
    return None


def local(name: str, type_node: ast.TypeNode, init: ast.Expression | None, pos: SourcePos) -> ast.VariableDeclaration:
    """`T name [= init];`."""
    return ast.VariableDeclaration(pos=pos, name=name, type_node=type_node, init=init)


def path_to(name: str, pos: SourcePos, like: ast.Expression | None = None) -> ast.PathExpression:
    """A reference to `name` carrying the type of `like` (for later questions about it)."""
    p = ast.PathExpression(pos=pos, name=name)
    if like is not None:
        p.type = like.type
    return p
