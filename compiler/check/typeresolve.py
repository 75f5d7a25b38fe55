"""Types as written -> `types.P4Type`, and the types declarations introduce."""

from __future__ import annotations

from .. import ast
from ..types import (
    Bits,
    Bool,
    ControlType,
    Enum,
    Error,
    Extern,
    Header,
    HeaderUnion,
    InfInt,
    ListOf,
    MatchKind,
    NewType,
    P4Type,
    PackageType,
    ParserType,
    SerEnum,
    Specialized,
    Stack,
    String,
    Struct,
    StructLike,
    Tuple,
    TypeVar,
    Varbit,
    Void,
)
from ..types import DontCare as DontCareType
from .coerce import substitute
from .context import CheckerBase

_TYPE_DECLS = (
    ast.TypeParameter,
    ast.TypedefDeclaration,
    ast.HeaderDeclaration,
    ast.HeaderUnionDeclaration,
    ast.StructDeclaration,
    ast.EnumDeclaration,
    ast.SerEnumDeclaration,
    ast.ExternDeclaration,
    ast.ParserTypeDeclaration,
    ast.ControlTypeDeclaration,
    ast.PackageTypeDeclaration,
    ast.ParserDeclaration,
    ast.ControlDeclaration,
)

# What a header field may be (specification, "Header types").
_HEADER_FIELD_TYPES = (Bits, Varbit, Bool, SerEnum)


def _fixed_width_struct(t: P4Type) -> bool:
    """A struct of fixed-width fields (nested such structs too): a header field since P4_16 1.2.2."""
    if not isinstance(t, Struct):
        return False
    for _, ft in t.fields:
        base = ft.underlying if isinstance(ft, NewType) else ft
        if not (isinstance(base, Bits | Bool | SerEnum) or _fixed_width_struct(base)):
            return False
    return True


class TypeResolver(CheckerBase):
    """Resolves `TypeNode`s and builds the types of type declarations."""

    def resolve_type(self, node: ast.TypeNode) -> P4Type:
        """The P4 type `node` denotes; also stored in `node.resolved`."""
        t = self._resolve(node)
        node.resolved = t
        return t

    def _resolve(self, node: ast.TypeNode) -> P4Type:
        if isinstance(node, ast.BaseTypeNode):
            return self._base(node)
        if isinstance(node, ast.NamedType):
            return self._named(node)
        if isinstance(node, ast.SpecializedTypeNode):
            return self._specialized(node)
        if isinstance(node, ast.HeaderStackTypeNode):
            element = self.resolve_type(node.element)
            if not isinstance(element, Header | HeaderUnion):
                raise self.fail(node.pos, f"a stack holds headers or header unions, not {element}")
            size = self.const_int(node.size, "header stack size")
            if size <= 0:
                raise self.fail(node.size.pos, f"header stack size must be positive, not {size}")
            return Stack(element, size)
        if isinstance(node, ast.TupleTypeNode):
            return Tuple(tuple(self.resolve_type(e) for e in node.elements))
        if isinstance(node, ast.ListTypeNode):
            return ListOf(self.resolve_type(node.element))
        if isinstance(node, ast.DontCareTypeNode):
            return DontCareType()
        raise self.fail(node.pos, f"unsupported type construct {type(node).__name__}")

    def _base(self, node: ast.BaseTypeNode) -> P4Type:
        simple = {
            "bool": Bool,
            "error": Error,
            "match_kind": MatchKind,
            "string": String,
            "void": Void,
        }
        if node.kind in simple:
            return simple[node.kind]()
        if node.width is None:
            return InfInt() if node.kind == "int" else Bits(1)
        width = self.const_int(node.width, f"width of {node.kind}")
        if width < 0 or (width == 0 and node.kind == "int"):
            raise self.fail(node.width.pos, f"invalid width {width} for {node.kind}")
        if node.kind == "varbit":
            return Varbit(width)
        return Bits(width, node.kind == "int")

    def _named(self, node: ast.NamedType) -> P4Type:
        scope = self.scope.root() if node.is_global else self.scope
        decl = scope.lookup(node.name)
        if decl is None:
            raise self.fail(node.pos, f"unknown type '{node.name}'")
        if not isinstance(decl, _TYPE_DECLS):
            raise self.fail(node.pos, f"'{node.name}' is not a type")
        node.ref = decl
        if decl.p4type is None:
            raise self.fail(node.pos, f"type '{node.name}' is used inside its own declaration")
        return decl.p4type

    def _specialized(self, node: ast.SpecializedTypeNode) -> P4Type:
        base = self._named(node.base)
        node.base.resolved = base
        args = tuple(self.resolve_type(a) for a in node.args)
        params = getattr(base, "type_params", ())
        if isinstance(base, StructLike):
            params = tuple(p.name for p in getattr(node.base.ref, "type_params", []))
        if len(params) != len(args):
            raise self.fail(
                node.pos, f"{base} takes {len(params)} type arguments, {len(args)} given"
            )
        if isinstance(base, StructLike):
            bindings = dict(zip(params, args, strict=True))
            fields = tuple((n, substitute(t, bindings)) for n, t in base.fields)
            name = f"{base.name}<{', '.join(map(str, args))}>"
            return type(base)(name, base.decl, fields)
        return Specialized(base, args)

    # ------------------------------------------------------------ declarations

    def declare_type_params(
        self, params: list[ast.TypeParameter], owner: object
    ) -> tuple[str, ...]:
        """Put a generic declaration's type variables in the current scope."""
        for p in params:
            p.p4type = TypeVar(p.name, owner)
            self.scope.declare(p.name, p, p.pos)
        return tuple(p.name for p in params)

    def struct_type(self, decl: ast.Declaration) -> StructLike:
        """The type of a header, header union or struct declaration."""
        cls = {
            ast.HeaderDeclaration: Header,
            ast.HeaderUnionDeclaration: HeaderUnion,
            ast.StructDeclaration: Struct,
        }[type(decl)]
        with self.scoped():
            self.declare_type_params(decl.type_params, decl)
            seen: dict[str, ast.StructField] = {}
            fields = []
            varbits = 0
            for f in decl.fields:
                if f.name in seen:
                    raise self.fail(f.pos, f"duplicate field '{f.name}' in {decl.name}")
                seen[f.name] = f
                ft = self.resolve_type(f.type_node)
                self._check_field(cls, decl, f, ft)
                varbits += isinstance(ft, Varbit)
                if varbits > 1:
                    raise self.fail(f.pos, f"header {decl.name} has more than one varbit field")
                f.p4type = ft
                fields.append((f.name, ft))
        return cls(decl.name, decl, tuple(fields))

    def _check_field(
        self, cls: type, decl: ast.Declaration, f: ast.StructField, ft: P4Type
    ) -> None:
        base = ft.underlying if isinstance(ft, NewType) else ft
        if cls is Header and not isinstance(base, (*_HEADER_FIELD_TYPES, TypeVar)) \
                and not _fixed_width_struct(base):
            raise self.fail(f.type_node.pos, f"header field '{f.name}' cannot have type {ft}")
        if cls is HeaderUnion and not isinstance(ft, Header):
            raise self.fail(
                f.type_node.pos, f"header_union member '{f.name}' must be a header, not {ft}"
            )
        if cls is Struct and isinstance(
            ft, Extern | ParserType | ControlType | PackageType | Void | InfInt | String
        ):
            raise self.fail(f.type_node.pos, f"struct field '{f.name}' cannot have type {ft}")

    def enum_type(self, decl: ast.EnumDeclaration) -> Enum:
        """The type of a plain enum; its members are declared within it."""
        names: list[str] = []
        for m in decl.members:
            if m.name in names:
                raise self.fail(m.pos, f"duplicate member '{m.name}' in enum {decl.name}")
            names.append(m.name)
        t = Enum(decl.name, decl, tuple(names))
        for m in decl.members:
            m.p4type = t
        return t

    def ser_enum_type(self, decl: ast.SerEnumDeclaration) -> SerEnum:
        """The type of a serializable enum with its member values folded."""
        underlying = self.resolve_type(decl.underlying)
        if isinstance(underlying, NewType):
            underlying = underlying.underlying
        if not isinstance(underlying, Bits):
            raise self.fail(
                decl.underlying.pos, f"a serializable enum needs bit<W> or int<W>, not {underlying}"
            )
        members: list[tuple[str, int]] = []
        for m in decl.members:
            if any(n == m.name for n, _ in members):
                raise self.fail(m.pos, f"duplicate member '{m.name}' in enum {decl.name}")
            value = self.const_int(m.value, f"value of {decl.name}.{m.name}")
            if not underlying.fits(value):
                raise self.fail(
                    m.value.pos,
                    f"value {value} of {decl.name}.{m.name} does not fit in {underlying}",
                )
            m.value.type = underlying
            members.append((m.name, value))
        t = SerEnum(decl.name, decl, underlying, tuple(members))
        for m in decl.members:
            m.p4type = t
        return t
