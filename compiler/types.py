"""The P4_16 type representation used by the checker and the back end.

Types are immutable values (frozen dataclasses) compared structurally, except
the nominal ones (header, header union, struct, enum, serializable enum, new
type, extern, parser, control, package), which compare by their declaration
node so two `struct`s with the same fields stay distinct. `typedef` is
transparent: it resolves to the aliased type.

| P4 | class |
|---|---|
| `bit<W>` / `int<W>` | `Bits(width, signed)` |
| `varbit<W>` | `Varbit(max_width)` |
| `int` (arbitrary precision) | `InfInt()` |
| `bool`, `string`, `void`, `error`, `match_kind` | `Bool`, `String`, `Void`, `Error`, `MatchKind` |
| `header`/`header_union`/`struct` | `Header`/`HeaderUnion`/`Struct` (fields in order) |
| `tuple<...>`, `list<T>` | `Tuple(elements)`, `ListOf(element)` |
| `T[n]` | `Stack(element, size)` |
| `enum E`, `enum bit<8> E` | `Enum`, `SerEnum(underlying, members)` |
| `type T N` | `NewType(name, underlying)` |
| `extern E<T>` | `Extern(name, type_params, decl)`; `register<bit<32>>` is `Specialized(Extern, args)` |
| parser/control/package types | `ParserType`/`ControlType`/`PackageType` |
| a type variable | `TypeVar(name)` |
| actions, functions, methods | `Callable(params, return_type)` |
| `table` / `t.apply()` result / `action_run` | `Table(decl)` / `ApplyResult(table)` / `ActionEnum(table)` |
| a keyset (`select` case, entry) | `Set(element)` |
| the type of a type name in an expression | `TypeOf(type)` |
| `_` | `DontCare()` |
| an unresolved `{...}` | `ListLiteral(elements)` / `StructLiteral(fields)` |

Compile-time values of enum members and errors are `EnumValue` / `ErrorValue`.
Later changes to this module are additive only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class P4Type:
    """Base of all P4 types."""

    def __str__(self) -> str:
        return type(self).__name__.lower()


@dataclass(frozen=True)
class Bits(P4Type):
    """`bit<W>` (unsigned) or `int<W>` (signed, two's complement)."""

    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    def fits(self, value: int) -> bool:
        """Whether `value` is representable without truncation."""
        if self.signed:
            return (
                -(1 << (self.width - 1)) <= value < (1 << (self.width - 1))
                if self.width
                else value == 0
            )
        return 0 <= value < (1 << self.width)

    def wrap(self, value: int) -> int:
        """`value` truncated to this width (two's complement when signed)."""
        value &= (1 << self.width) - 1
        if self.signed and self.width and value >> (self.width - 1):
            value -= 1 << self.width
        return value


@dataclass(frozen=True)
class Varbit(P4Type):
    """`varbit<W>`: up to `max_width` bits."""

    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class InfInt(P4Type):
    """Arbitrary-precision `int` (unsized literals and compile-time constants)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class Bool(P4Type):
    """`bool`."""


@dataclass(frozen=True)
class String(P4Type):
    """`string`."""


@dataclass(frozen=True)
class Void(P4Type):
    """`void`."""


@dataclass(frozen=True)
class Error(P4Type):
    """`error` (one global type; members collected from every `error {}`)."""


@dataclass(frozen=True)
class MatchKind(P4Type):
    """`match_kind`."""

    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class DontCare(P4Type):
    """The type of `_`: matches anything."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class TypeVar(P4Type):
    """A type parameter of a generic declaration; `owner` is the declaring node."""

    name: str
    owner: Any = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class Nominal(P4Type):
    """A named type declared in the program; equal only to itself (same declaration)."""

    name: str
    decl: Any = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        # The name tells specialisations of one generic declaration apart (`s<bit<8>>`).
        return (
            type(other) is type(self)
            and other.name == self.name
            and (other.decl is self.decl or self.decl is None or other.decl is None)
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class StructLike(Nominal):
    """Header, header union or struct: ordered `(name, type)` fields."""

    fields: tuple[tuple[str, P4Type], ...] = ()

    def field_type(self, name: str) -> P4Type | None:
        """The type of field `name`, or None."""
        return next((t for n, t in self.fields if n == name), None)


@dataclass(frozen=True, eq=False)
class Header(StructLike):
    """`header H {...}`."""

    def width(self) -> int:
        """The header's size in bits counting varbits at their maximum."""
        return sum(bit_width(t) for _, t in self.fields)


@dataclass(frozen=True, eq=False)
class HeaderUnion(StructLike):
    """`header_union U {...}`."""


@dataclass(frozen=True, eq=False)
class Struct(StructLike):
    """`struct S {...}`."""


@dataclass(frozen=True, eq=False)
class Enum(Nominal):
    """A plain `enum E { A, B }`."""

    members: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class SerEnum(Nominal):
    """A serializable `enum bit<W> E { A = v }`."""

    underlying: Bits = Bits(0)
    members: tuple[tuple[str, int], ...] = ()

    def value_of(self, member: str) -> int | None:
        """The numeric value of `member`, or None."""
        return next((v for n, v in self.members if n == member), None)


@dataclass(frozen=True, eq=False)
class NewType(Nominal):
    """`type T N`: a new type represented as `underlying`."""

    underlying: P4Type | None = None


@dataclass(frozen=True, eq=False)
class Extern(Nominal):
    """An extern object type; generic when `type_params` is non-empty."""

    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class ParserType(Nominal):
    """A parser type (declared `parser P(...);` or defined `parser P(...) {...}`)."""

    type_params: tuple[str, ...] = ()
    params: tuple[Any, ...] = ()


@dataclass(frozen=True, eq=False)
class ControlType(Nominal):
    """A control type (declared or defined)."""

    type_params: tuple[str, ...] = ()
    params: tuple[Any, ...] = ()


@dataclass(frozen=True, eq=False)
class PackageType(Nominal):
    """A package type such as `V1Switch`."""

    type_params: tuple[str, ...] = ()
    params: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Specialized(P4Type):
    """A generic type with its type arguments bound: `register<bit<32>>`."""

    base: Nominal
    args: tuple[P4Type, ...]

    def __str__(self) -> str:
        return f"{self.base}<{', '.join(map(str, self.args))}>"

    def bindings(self) -> dict[str, P4Type]:
        """Type parameter name -> bound type."""
        params = getattr(self.base, "type_params", ())
        return dict(zip(params, self.args, strict=False))


@dataclass(frozen=True)
class Tuple(P4Type):
    """`tuple<T1, ...>`."""

    elements: tuple[P4Type, ...]

    def __str__(self) -> str:
        return f"tuple<{', '.join(map(str, self.elements))}>"


@dataclass(frozen=True)
class ListOf(P4Type):
    """`list<T>`."""

    element: P4Type

    def __str__(self) -> str:
        return f"list<{self.element}>"


@dataclass(frozen=True)
class Stack(P4Type):
    """A header stack `H[size]` (or a stack of header unions)."""

    element: P4Type
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True)
class Callable(P4Type):
    """An action, function or method: its parameters (AST nodes) and return type."""

    params: tuple[Any, ...] = field(default=(), compare=False)
    return_type: P4Type = Void()


@dataclass(frozen=True, eq=False)
class Table(Nominal):
    """A table instance's type."""


@dataclass(frozen=True)
class ApplyResult(P4Type):
    """The result of `t.apply()`: fields `hit`, `miss`, `action_run`."""

    table: Table

    def __str__(self) -> str:
        return f"{self.table.name}.apply_result"


@dataclass(frozen=True)
class ActionEnum(P4Type):
    """The type of `t.apply().action_run`: one member per action of the table."""

    table: Table

    def __str__(self) -> str:
        return f"{self.table.name}.action_run"


@dataclass(frozen=True)
class ParserStateType(P4Type):
    """A parser state name used as a transition target."""

    def __str__(self) -> str:
        return "state"


@dataclass(frozen=True)
class Set(P4Type):
    """A keyset over `element` (select cases, table entries, value_set)."""

    element: P4Type

    def __str__(self) -> str:
        return f"set<{self.element}>"


@dataclass(frozen=True)
class TypeOf(P4Type):
    """The type of an expression that names a type (`E` in `E.A`, `error`)."""

    type: P4Type

    def __str__(self) -> str:
        return f"type {self.type}"


@dataclass(frozen=True)
class ListLiteral(P4Type):
    """The type of `{e1, e2}` before it meets its target type."""

    elements: tuple[P4Type, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


@dataclass(frozen=True)
class StructLiteral(P4Type):
    """The type of `{a = e1}` before it meets its target type."""

    fields: tuple[tuple[str, P4Type], ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{n} = {t}" for n, t in self.fields) + "}"


@dataclass(frozen=True)
class EnumValue:
    """The compile-time value of an enum member (serializable: `value` is its number)."""

    enum: P4Type
    member: str
    value: int | None = None


@dataclass(frozen=True)
class ErrorValue:
    """The compile-time value of `error.member`."""

    member: str


def bit_width(t: P4Type) -> int:
    """Width in bits of a fixed-size type (varbit counts at its maximum)."""
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, Varbit):
        return t.max_width
    if isinstance(t, Bool):
        return 1
    if isinstance(t, SerEnum):
        return t.underlying.width
    if isinstance(t, NewType) and t.underlying is not None:
        return bit_width(t.underlying)
    if isinstance(t, StructLike):
        return sum(bit_width(ft) for _, ft in t.fields)
    if isinstance(t, Stack):
        return t.size * bit_width(t.element)
    if isinstance(t, Tuple):
        return sum(bit_width(e) for e in t.elements)
    return 0


def is_header_like(t: P4Type) -> bool:
    """Header or header union (both have validity)."""
    return isinstance(t, Header | HeaderUnion)
