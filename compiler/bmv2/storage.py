"""Where P4 values live in BMv2: fields, header instances, stacks, unions and their bindings.

Lowering maps every name the program can touch (parameters of the v1model blocks, locals,
action data, arguments of inlined calls) to one of these bindings; expressions and
statements are then lowered against bindings instead of source names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import ast
from .. import types as t


@dataclass(frozen=True)
class FieldRef:
    """A scalar stored in field `field` of header instance `header`."""

    header: str
    field: str
    p4type: t.P4Type

    def operand(self) -> dict:
        """The `{"type": "field"}` operand naming this field."""
        return {"type": "field", "value": [self.header, self.field]}


@dataclass(frozen=True)
class HeaderRef:
    """A header (or non-flattened metadata) instance."""

    name: str
    p4type: t.StructLike
    metadata: bool = False

    def member(self, name: str) -> FieldRef | StructRef:
        """The field `name` of this instance (a struct of fields for a struct-typed header field)."""
        ftype = self.p4type.field_type(name)
        if ftype is None:
            raise KeyError(name)
        leaves = header_leaves(self.p4type)
        if len(leaves) == len(self.p4type.fields):
            return FieldRef(self.name, name, ftype)
        return self._nested((name,), ftype, {path: json for json, _, path in leaves})

    def _nested(self, path: tuple[str, ...], ftype: t.P4Type, names: dict) -> FieldRef | StructRef:
        """The binding of the header field at `path` once nested structs are flattened."""
        base = _plain(ftype)
        if isinstance(base, t.Struct):
            return StructRef(base, {f: self._nested((*path, f), ft, names) for f, ft in base.fields})
        return FieldRef(self.name, names[path], ftype)


def _plain(p4type: t.P4Type) -> t.P4Type:
    """`p4type` without typedef'd new types."""
    while isinstance(p4type, t.NewType) and p4type.underlying is not None:
        p4type = p4type.underlying
    return p4type


def header_leaves(p4type: t.StructLike) -> list[tuple[str, t.P4Type, tuple[str, ...]]]:
    """(BMv2 field name, type, source path) of every scalar field of a header, in order.

    A header with struct-typed fields is flattened as p4c's FlattenHeaders does: every
    field becomes `_<path joined by _><position>` (`_p_hi1`); other headers keep their names.
    """
    leaves: list[tuple[t.P4Type, tuple[str, ...]]] = []

    def walk(struct: t.StructLike, path: tuple[str, ...]) -> None:
        for fname, ftype in struct.fields:
            if isinstance(_plain(ftype), t.Struct):
                walk(_plain(ftype), (*path, fname))
            else:
                leaves.append((ftype, (*path, fname)))

    walk(p4type, ())
    if len(leaves) == len(p4type.fields):
        return [(path[0], ftype, path) for ftype, path in leaves]
    return [("_" + "_".join(path) + str(i), ftype, path) for i, (ftype, path) in enumerate(leaves)]


@dataclass(frozen=True)
class UnionRef:
    """A header union instance: one header instance per member (`u.member`)."""

    name: str
    p4type: t.HeaderUnion
    members: dict[str, HeaderRef]


@dataclass(frozen=True)
class StackRef:
    """A header stack (or union stack) instance with its elements in index order."""

    name: str
    p4type: t.Stack
    elements: tuple[Any, ...]

    @property
    def is_union_stack(self) -> bool:
        """True for a stack of header unions."""
        return isinstance(self.p4type.element, t.HeaderUnion)


@dataclass(frozen=True)
class StructRef:
    """A struct whose fields were flattened into separate bindings."""

    p4type: t.StructLike
    fields: dict[str, Any]


@dataclass(frozen=True)
class RuntimeDataRef:
    """Action data parameter number `index`."""

    index: int
    p4type: t.P4Type


@dataclass(frozen=True)
class ConstRef:
    """A compile-time constant."""

    value: Any
    p4type: t.P4Type


@dataclass
class ExprRef:
    """An argument of an inlined call, lowered on use in the caller's environment."""

    expr: Any
    env: Env


@dataclass(frozen=True)
class InstanceRef:
    """An extern, table, parser or control instance with its control-plane name."""

    decl: Any
    name: str
    p4type: Any = None
    # A parser or control's constructor parameters with what they are bound to.
    constructor: tuple[tuple[Any, Any], ...] = ()


@dataclass
class Env:
    """Bindings of declarations (by node identity) with lexical fall-back to a parent."""

    parent: Env | None = None
    bindings: dict[int, Any] = field(default_factory=dict)
    prefix: str = ""
    # Source positions of the instances inlined to reach this scope: orders actions as p4c does.
    anchor: tuple = ()

    def bind(self, decl: Any, binding: Any) -> None:
        """Bind declaration node `decl`."""
        self.bindings[id(decl)] = binding

    def lookup(self, decl: Any) -> Any:
        """The binding of `decl`, searching enclosing environments; None if unbound."""
        env: Env | None = self
        while env is not None:
            found = env.bindings.get(id(decl))
            if found is not None:
                return found
            env = env.parent
        return None

    def child(self, prefix: str | None = None) -> Env:
        """A nested environment (same control-plane prefix unless given)."""
        return Env(parent=self, prefix=self.prefix if prefix is None else prefix, anchor=self.anchor)


def applied_instance(target: Any, env: Env) -> Any:
    """The instance a parser or control `apply` call names: a declared instance's binding, or,
    for `T.apply(...)` on the type itself (spec 15.1, direct invocation), an instance of `T`
    named `T` in the caller's scope, as p4c's InstantiateDirectCalls names it."""
    if isinstance(target, ast.ParserDeclaration | ast.ControlDeclaration):
        return InstanceRef(target, f"{env.prefix}.{target.name}" if env.prefix else target.name, target)
    return env.lookup(target)
