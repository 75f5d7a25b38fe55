"""Types: base types, named and specialised types, tuples, stacks, type parameters."""

from __future__ import annotations

from .. import ast
from ..lexer import Token
from .stream import TokenStream, describe

BASE_TYPE_KEYWORDS = frozenset({"bool", "error", "match_kind", "string", "int", "bit", "varbit"})


class TypeParser(TokenStream):
    """Type references; `type_names` settles `(T) e` casts."""

    def _type_starts(self, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind in BASE_TYPE_KEYWORDS or tok.kind in ("tuple", "IDENT", ".", "_")

    def type_ref(self) -> ast.TypeNode:
        """typeRef: base type, (specialised) type name, tuple/list, header stack."""
        tok = self.peek()
        if tok.kind in BASE_TYPE_KEYWORDS:
            t: ast.TypeNode = self.base_type()
        elif tok.kind == "tuple" or (tok.text == "list" and self.peek(1).kind == "<"):
            self.advance()
            self.expect("<")
            args = self.type_args_rest()
            t = (
                ast.TupleTypeNode(pos=tok.pos, elements=args)
                if tok.kind == "tuple"
                else ast.ListTypeNode(pos=tok.pos, element=_single(self, args, tok))
            )
        elif tok.kind == "_":
            self.advance()
            return ast.DontCareTypeNode(pos=tok.pos)
        elif tok.kind in ("IDENT", "."):
            is_global = bool(self.accept("."))
            name = self.name("a type name")
            t = ast.NamedType(pos=tok.pos, name=name.text, is_global=is_global)
            if self.accept("<"):
                t = ast.SpecializedTypeNode(pos=tok.pos, base=t, args=self.type_args_rest())
        else:
            raise self.error(f"syntax error: expected a type, found {describe(tok)}")
        while self.at("[") and not (self.peek(1).kind == "]"):
            self.advance()
            size = self.expression()
            self.expect("]")
            t = ast.HeaderStackTypeNode(pos=tok.pos, element=t, size=size)
        return t

    def base_type(self) -> ast.BaseTypeNode:
        """bool | error | match_kind | string | int[<W>] | bit[<W>] | varbit<W>."""
        tok = self.advance()
        width = None
        if tok.kind in ("int", "bit", "varbit") and self.at("<"):
            self.advance()
            width = self.width_expression()
            self.expect(">", "'>' closing the width")
        elif tok.kind == "varbit":
            raise self.error("syntax error: varbit needs a maximum width: varbit<W>", tok)
        return ast.BaseTypeNode(pos=tok.pos, kind=tok.kind, width=width)

    def width_expression(self) -> ast.Expression:
        """The width of `bit<...>`: an integer, a name, or a parenthesised expression."""
        if self.at("("):
            self.advance()
            e = self.expression()
            self.expect(")")
            return e
        if self.at("INT"):
            return self.primary()
        if self.at("IDENT", "."):
            return self.primary()
        raise self.error(f"syntax error: expected a width, found {describe(self.peek())}")

    def type_args_rest(self) -> list[ast.TypeNode]:
        """`T1, T2 >` after the `<`."""
        args = [self.type_arg()]
        while self.accept(","):
            args.append(self.type_arg())
        self.expect(">", "'>' closing the type arguments")
        return args

    def type_arg(self) -> ast.TypeNode:
        """A type argument: a type, `void`, or `_`."""
        if self.at("void"):
            tok = self.advance()
            return ast.BaseTypeNode(pos=tok.pos, kind="void")
        return self.type_ref()

    def type_or_void(self) -> ast.TypeNode:
        """typeOrVoid: typeRef | void."""
        if self.at("void"):
            tok = self.advance()
            return ast.BaseTypeNode(pos=tok.pos, kind="void")
        return self.type_ref()

    def type_params(self) -> list[ast.TypeParameter]:
        """Optional `<T1, T2>` of a generic declaration."""
        if not self.accept("<"):
            return []
        params = []
        while True:
            tok = self.name("a type parameter name")
            self.type_names.add(tok.text)
            params.append(ast.TypeParameter(pos=tok.pos, name=tok.text))
            if not self.accept(","):
                break
        self.expect(">", "'>' closing the type parameters")
        return params


def _single(parser: TokenStream, args: list[ast.TypeNode], tok: Token) -> ast.TypeNode:
    if len(args) != 1:
        raise parser.error("syntax error: list<T> takes exactly one type argument", tok)
    return args[0]
