"""Implicit conversions and generic type inference.

P4 converts implicitly only (a) an arbitrary-precision `int` to a sized type
when the value fits, (b) a `{...}` list or struct expression to the tuple,
header or struct it initialises, (c) `{#}` to a header or union, (d) a
serializable enum to its underlying type. Everything else needs an explicit
cast: `bit<8>` never meets `bit<16>` silently.
"""

from __future__ import annotations

from .. import ast
from ..types import (
    Bits,
    DontCare,
    Header,
    HeaderUnion,
    InfInt,
    ListLiteral,
    ListOf,
    P4Type,
    SerEnum,
    Specialized,
    Stack,
    Struct,
    StructLike,
    StructLiteral,
    Tuple,
    TypeVar,
)
from .context import CheckerBase


def substitute(t: P4Type, bindings: dict[str, P4Type]) -> P4Type:
    """`t` with bound type variables replaced."""
    if isinstance(t, TypeVar):
        return bindings.get(t.name, t)
    if isinstance(t, Specialized):
        return Specialized(t.base, tuple(substitute(a, bindings) for a in t.args))
    if isinstance(t, Tuple):
        return Tuple(tuple(substitute(e, bindings) for e in t.elements))
    if isinstance(t, ListOf):
        return ListOf(substitute(t.element, bindings))
    if isinstance(t, Stack):
        return Stack(substitute(t.element, bindings), t.size)
    return t


def _fits_wildcards(src: P4Type, target: P4Type) -> bool:
    """`Register<bit<32>, bit<16>>` where `Register<_, _>` is wanted: `_` type arguments
    accept any type (TNA's `RegisterAction(Register<_, _> reg)`)."""
    if not (isinstance(src, Specialized) and isinstance(target, Specialized)):
        return False
    if src.base != target.base or len(src.args) != len(target.args):
        return False
    return all(
        isinstance(want, DontCare) or want == got or _fits_wildcards(got, want)
        for got, want in zip(src.args, target.args, strict=True)
    )


class Coercer(CheckerBase):
    """Implicit conversion of an expression to the type its context needs."""

    def coerce(self, expr: ast.Expression, target: P4Type | None, what: str) -> None:
        """Make `expr` usable as a `target`, or raise a located type error naming `what`."""
        src = expr.type
        if target is None or src is None or isinstance(target, DontCare | TypeVar):
            return
        if isinstance(expr, ast.DontCareExpression):
            expr.type = target
            return
        if src == target or _fits_wildcards(src, target):
            return
        if isinstance(src, InfInt) and isinstance(target, Bits):
            value = expr.const_value
            if isinstance(value, int) and not isinstance(value, bool) and not target.fits(value):
                # A negative constant becomes its two's complement in an unsigned type
                # (spec 8.9.1): `bit<8> x = -1` is all ones. Other values that do not fit are
                # truncated with a warning, as p4c does (its WARN_OVERFLOW).
                if target.signed or value >= 0 or -value >= 1 << target.width:
                    self.warn(expr.pos, f"{what}: value {value} does not fit in {target}; "
                                        f"truncated to {target.wrap(value)}")
            self.retype(expr, target)
            return
        if isinstance(expr, ast.InvalidExpression) and isinstance(target, Header | HeaderUnion):
            expr.type = target
            return
        if isinstance(src, SerEnum) and src.underlying == target:
            return
        if isinstance(expr, ast.ListExpression) and isinstance(src, ListLiteral):
            self._coerce_list(expr, target, what)
            return
        if isinstance(expr, ast.StructExpression) and isinstance(src, StructLiteral):
            self._coerce_struct(expr, target, what)
            return
        raise self.fail(expr.pos, f"{what}: cannot convert {src} to {target}")

    def retype(self, expr: ast.Expression, target: P4Type) -> None:
        """Give an `int`-typed expression (and its `int` operands) the sized type `target`."""
        if not isinstance(expr.type, InfInt):
            return
        expr.type = target
        if isinstance(expr.const_value, int) and not isinstance(expr.const_value, bool):
            expr.const_value = (
                target.wrap(expr.const_value) if isinstance(target, Bits) else expr.const_value
            )
        if isinstance(expr, ast.BinaryExpression) and expr.op not in ("<<", ">>"):
            self.retype(expr.left, target)
            self.retype(expr.right, target)
        elif isinstance(expr, ast.BinaryExpression):
            self.retype(expr.left, target)
        elif isinstance(expr, ast.UnaryExpression):
            self.retype(expr.operand, target)
        elif isinstance(expr, ast.TernaryExpression):
            self.retype(expr.then, target)
            self.retype(expr.otherwise, target)

    def _coerce_list(self, expr: ast.ListExpression, target: P4Type, what: str) -> None:
        if isinstance(target, StructLike) and not isinstance(target, HeaderUnion):
            targets = [t for _, t in target.fields]
        elif isinstance(target, Tuple):
            targets = list(target.elements)
        elif isinstance(target, ListOf):
            targets = [target.element] * len(expr.components)
        elif isinstance(target, Stack):
            targets = [target.element] * target.size
        else:
            raise self.fail(expr.pos, f"{what}: cannot convert a list expression to {target}")
        if len(targets) != len(expr.components) and not (
            expr.has_rest and len(expr.components) <= len(targets)
        ):
            raise self.fail(
                expr.pos,
                f"{what}: {target} has {len(targets)} fields but the list has {len(expr.components)}",
            )
        for component, t in zip(expr.components, targets, strict=False):
            self.coerce(component, t, what)
        expr.type = target
        values = tuple(c.const_value for c in expr.components)
        if not expr.has_rest and all(v is not None for v in values):
            expr.const_value = values

    def _coerce_struct(self, expr: ast.StructExpression, target: P4Type, what: str) -> None:
        if not isinstance(target, Struct | Header):
            raise self.fail(expr.pos, f"{what}: cannot convert a struct expression to {target}")
        given = {f.name: f for f in expr.fields}
        for f in expr.fields:
            if target.field_type(f.name) is None:
                raise self.fail(f.pos, f"{what}: {target} has no field '{f.name}'")
        missing = [n for n, _ in target.fields if n not in given]
        if missing and not expr.has_rest:
            raise self.fail(
                expr.pos, f"{what}: field '{missing[0]}' of {target} is not initialised"
            )
        for f in expr.fields:
            self.coerce(f.value, target.field_type(f.name), what)
        expr.type = target
        if not missing and all(f.value.const_value is not None for f in expr.fields):
            # In the target's field order, like a list initialiser.
            expr.const_value = tuple(given[n].value.const_value for n, _ in target.fields)

    def unify(
        self, param: P4Type, arg: ast.Expression, bindings: dict[str, P4Type], what: str
    ) -> None:
        """Bind `param`'s type variables from the argument's type (P4 infers type arguments)."""
        arg_t = arg.type
        if isinstance(arg, ast.DontCareExpression):
            # `_` takes its type from the parameter; it cannot bind a type variable.
            return
        if isinstance(param, TypeVar):
            if param.name in bindings:
                return
            bindings[param.name] = self.inferred_type(arg, what)
            return
        if (
            isinstance(param, Specialized)
            and isinstance(arg_t, Specialized)
            and param.base == arg_t.base
        ):
            for p, a in zip(param.args, arg_t.args, strict=False):
                if isinstance(p, TypeVar) and p.name not in bindings:
                    bindings[p.name] = a
        if isinstance(param, Tuple) and isinstance(arg, ast.ListExpression):
            for p, a in zip(param.elements, arg.components, strict=False):
                self.unify(p, a, bindings, what)

    def inferred_type(self, arg: ast.Expression, what: str) -> P4Type:
        """The type a type variable takes from this argument."""
        t = arg.type
        if isinstance(t, InfInt):
            raise self.fail(
                arg.pos,
                f"{what}: cannot infer a width for the integer {arg.const_value}; cast it, e.g. (bit<8>)",
            )
        if isinstance(t, ListLiteral) and isinstance(arg, ast.ListExpression):
            elements = tuple(self.inferred_type(c, what) for c in arg.components)
            arg.type = Tuple(elements)
            return arg.type
        if isinstance(t, StructLiteral):
            raise self.fail(
                arg.pos, f"{what}: cannot infer a type for a struct expression; cast it"
            )
        return t
