"""Hand-written recursive-descent parser for the P4_16 grammar (spec appendix).

`parse(tokens)` returns an `ast.Program`; a syntax error raises `CompileError`
at the offending token. Two grammar ambiguities are settled the way p4c
settles them:

- `<` after a name starts type arguments only when `<types>` is followed by
  `(` (a generic call); otherwise it is the comparison;
- `(T) e` is a cast when `T` is a base type or a name declared as a type
  earlier in the source (P4 requires declaration before use).

A statement that starts with a name is a declaration when a type followed by
a name (or `T(args) name` for an instantiation) can be read there.
"""

from __future__ import annotations

from . import ast
from .diagnostics import CompileError, SourcePos
from .lexer import Token

BASE_TYPE_KEYWORDS = frozenset({"bool", "error", "match_kind", "string", "int", "bit", "varbit"})

# Binary operators by precedence level, loosest first (p4c's grammar: the
# comparisons bind looser than the bitwise operators, unlike C).
BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",),
    ("&&",),
    ("==", "!="),
    ("<", ">", "<=", ">="),
    ("|",),
    ("^",),
    ("&",),
    ("<<", ">>"),
    ("++", "+", "-", "|+|", "|-|"),
    ("*", "/", "%"),
)

COMPOUND_ASSIGN = {
    "+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "<<=": "<<",
    "&=": "&", "|=": "|", "^=": "^", "|+|=": "|+|", "|-|=": "|-|",
}  # fmt: skip

# Annotations whose parenthesised body is an expression list (p4c parses them).
EXPRESSION_ANNOTATIONS = frozenset(
    {"name", "id", "priority", "field_list", "alias", "match", "deprecated", "brief", "description"}
)


class _Backtrack(Exception):
    """Raised inside a speculative parse to give up and rewind."""


class Parser:
    """Parses one token list into an `ast.Program`."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.type_names: set[str] = set()
        self.speculating = 0
        # Declarations a typedef declared inline, emitted just before it.
        self.pending: list[ast.Declaration] = []

    # ------------------------------------------------------------ token helpers

    def peek(self, k: int = 0) -> Token:
        """The token `k` ahead of the cursor."""
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """Consume and return the current token."""
        tok = self.peek()
        if self.i < len(self.tokens) - 1:
            self.i += 1
        return tok

    def at(self, *kinds: str) -> bool:
        """Whether the current token is one of `kinds` (soft keywords by text)."""
        tok = self.peek()
        return tok.kind in kinds or (tok.kind == "IDENT" and tok.text in kinds)

    def accept(self, kind: str) -> Token | None:
        """Consume the current token if it is `kind`."""
        if self.at(kind):
            return self.advance()
        return None

    def error(self, message: str, tok: Token | None = None) -> CompileError:
        """A syntax error at `tok` (default: the current token)."""
        if self.speculating:
            raise _Backtrack()
        tok = tok or self.peek()
        return CompileError(tok.pos, message)

    def expect(self, kind: str, what: str | None = None) -> Token:
        """Consume a `kind` token or raise a located syntax error."""
        if self.at(kind):
            return self.advance()
        raise self.error(
            f"syntax error: expected {what or repr(kind)}, found {_describe(self.peek())}"
        )

    def name(self, what: str = "a name") -> Token:
        """Consume an identifier (soft keywords included)."""
        if self.peek().kind == "IDENT":
            return self.advance()
        raise self.error(f"syntax error: expected {what}, found {_describe(self.peek())}")

    def speculate(self, fn, *args):  # noqa: ANN001, ANN201
        """Run `fn`; on a syntax error rewind and return None."""
        saved = self.i
        self.speculating += 1
        try:
            return fn(*args)
        except (_Backtrack, CompileError):
            self.i = saved
            return None
        finally:
            self.speculating -= 1

    # ------------------------------------------------------------ program

    def program(self) -> ast.Program:
        """program: declaration* EOF."""
        pos = self.peek().pos
        decls: list[ast.Node] = []
        while not self.at("EOF"):
            if self.accept(";"):
                continue
            decl = self.declaration()
            decls.extend(self.pending)
            self.pending.clear()
            decls.append(decl)
        return ast.Program(pos=pos, declarations=decls)

    def declaration(self) -> ast.Node:
        """A top-level declaration."""
        annotations = self.annotations()
        tok = self.peek()
        if tok.kind == "const":
            return self.constant(annotations)
        if tok.kind == "typedef" or (
            tok.text == "type" and tok.kind == "IDENT" and self._type_starts(1)
        ):
            return self.typedef(annotations)
        if tok.kind in ("header", "header_union", "struct"):
            return self.struct_like(annotations)
        if tok.kind == "enum":
            return self.enum(annotations)
        if tok.kind == "error":
            return self.error_decl()
        if tok.kind == "match_kind":
            return self.match_kind_decl()
        if tok.kind == "extern":
            return self.extern(annotations)
        if tok.kind == "parser":
            return self.parser_decl(annotations)
        if tok.kind == "control":
            return self.control_decl(annotations)
        if tok.kind == "package":
            return self.package_decl(annotations)
        if tok.kind == "action":
            return self.action(annotations)
        if tok.kind in ("table", "value_set"):
            raise self.error(f"a {tok.kind} may only be declared inside a control or parser")
        return self.typed_declaration(annotations, top_level=True)

    def typed_declaration(self, annotations: list[ast.Annotation], top_level: bool) -> ast.Node:
        """A declaration that starts with a type: instantiation, function, variable or constant."""
        type_node = self.type_or_void()
        if self.at("("):
            return self.instantiation_rest(annotations, type_node)
        name = self.name("a declaration name")
        if top_level and (self.at("(") or self.at("<")):
            return self.function_rest(annotations, type_node, name)
        return self.variable_rest(annotations, type_node, name)

    # ------------------------------------------------------------ annotations

    def annotations(self) -> list[ast.Annotation]:
        """annotation*."""
        out = []
        while self.at("@"):
            out.append(self.annotation())
        return out

    def annotation(self) -> ast.Annotation:
        """`@name`, `@name(tokens)`, `@name[structured]` or `@pragma name tokens`."""
        at = self.advance()
        name_tok = self.advance()
        if name_tok.kind not in ("IDENT", "pragma") and not name_tok.text.isidentifier():
            raise self.error(
                f"syntax error: expected an annotation name, found {_describe(name_tok)}", name_tok
            )
        if name_tok.kind == "pragma":
            # `@pragma name body...`: the body runs to the end of the source line.
            inner = self.name("a pragma name")
            body = []
            while (
                not self.at("EOF")
                and self.peek().pos.line == inner.pos.line
                and self.peek().pos.file == inner.pos.file
            ):
                body.append(self.advance())
            return ast.Annotation(pos=at.pos, name=inner.text, body=body)
        ann = ast.Annotation(pos=at.pos, name=name_tok.text)
        if self.peek().kind == "(":
            ann.body = self.balanced("(", ")")
            if name_tok.text in EXPRESSION_ANNOTATIONS and ann.body:
                ann.args = _parse_annotation_args(ann)
        elif self.peek().kind == "[":
            self.advance()
            ann.structured = True
            if self.peek().kind == "IDENT" and self.peek(1).kind == "=":
                ann.kv = []
                while not self.at("]"):
                    key = self.name("a key")
                    self.expect("=")
                    ann.kv.append(ast.KeyValue(pos=key.pos, key=key.text, value=self.expression()))
                    if not self.accept(","):
                        break
            else:
                ann.args = []
                while not self.at("]"):
                    ann.args.append(self.expression())
                    if not self.accept(","):
                        break
            self.expect("]")
        return ann

    def balanced(self, opener: str, closer: str) -> list[Token]:
        """Consume `opener tokens closer`, nesting included; return the inner tokens."""
        open_tok = self.expect(opener)
        depth, body = 1, []
        while True:
            tok = self.advance()
            if tok.kind == "EOF":
                raise self.error(f"syntax error: {opener!r} is never closed", open_tok)
            if tok.kind == opener:
                depth += 1
            elif tok.kind == closer:
                depth -= 1
                if depth == 0:
                    return body
            body.append(tok)

    # ------------------------------------------------------------ types

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
            raise self.error(f"syntax error: expected a type, found {_describe(tok)}")
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
        raise self.error(f"syntax error: expected a width, found {_describe(self.peek())}")

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

    # ------------------------------------------------------------ parameters, arguments

    def parameters(self) -> list[ast.Parameter]:
        """`( parameter, ... )`."""
        self.expect("(")
        params: list[ast.Parameter] = []
        while not self.at(")"):
            annotations = self.annotations()
            pos = self.peek().pos
            direction = ast.Direction.NONE
            if self.at("in", "out", "inout"):
                direction = ast.Direction(self.advance().kind)
            type_node = self.type_ref()
            name = self.name("a parameter name")
            default = self.expression() if self.accept("=") else None
            params.append(
                ast.Parameter(
                    pos=pos, name=name.text, annotations=annotations, direction=direction,
                    type_node=type_node, default=default,
                )
            )  # fmt: skip
            if not self.accept(","):
                break
        self.expect(")", "')' or ','")
        return params

    def arguments(self) -> list[ast.Argument]:
        """`( argument, ... )`: positional, `name = value`, or `_`."""
        self.expect("(")
        args: list[ast.Argument] = []
        while not self.at(")"):
            tok = self.peek()
            if tok.kind == "IDENT" and self.peek(1).kind == "=":
                self.advance()
                self.advance()
                args.append(ast.Argument(pos=tok.pos, name=tok.text, value=self.expression()))
            else:
                args.append(ast.Argument(pos=tok.pos, name=None, value=self.expression()))
            if not self.accept(","):
                break
        self.expect(")", "')' or ','")
        return args

    # ------------------------------------------------------------ type declarations

    def constant(self, annotations: list[ast.Annotation]) -> ast.ConstantDeclaration:
        """`const T name = value;`."""
        tok = self.expect("const")
        type_node = self.type_ref()
        name = self.name("a constant name")
        self.expect("=", "'=' (a constant needs a value)")
        value = self.expression()
        self.expect(";")
        return ast.ConstantDeclaration(
            pos=tok.pos, name=name.text, annotations=annotations, type_node=type_node, value=value
        )

    def typedef(self, annotations: list[ast.Annotation]) -> ast.TypedefDeclaration:
        """`typedef T name;` or `type T name;`."""
        tok = self.advance()
        if self.at("header", "header_union", "struct", "enum"):
            # `typedef struct S {...} N;`: the inline declaration comes out first, then the alias.
            inner = self.enum([]) if self.at("enum") else self.struct_like([])
            self.pending.append(inner)
            type_node: ast.TypeNode = ast.NamedType(pos=inner.pos, name=inner.name)
        else:
            type_node = self.type_ref()
        name = self.name("a type name")
        self.expect(";")
        self.type_names.add(name.text)
        return ast.TypedefDeclaration(
            pos=tok.pos, name=name.text, annotations=annotations, type_node=type_node,
            is_newtype=tok.text == "type",
        )  # fmt: skip

    def struct_like(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """`header|header_union|struct Name<T...> { fields }`."""
        kw = self.advance()
        name = self.name(f"a {kw.kind} name")
        self.type_names.add(name.text)
        type_params = self.type_params()
        self.expect("{")
        fields = []
        while not self.accept("}"):
            f_annotations = self.annotations()
            pos = self.peek().pos
            f_type = self.type_ref()
            f_name = self.name("a field name")
            self.expect(";")
            fields.append(
                ast.StructField(
                    pos=pos, name=f_name.text, annotations=f_annotations, type_node=f_type
                )
            )
        cls = {
            "header": ast.HeaderDeclaration,
            "header_union": ast.HeaderUnionDeclaration,
            "struct": ast.StructDeclaration,
        }[kw.kind]
        return cls(
            pos=kw.pos,
            name=name.text,
            annotations=annotations,
            type_params=type_params,
            fields=fields,
        )

    def enum(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """`enum E { A, B }` or `enum bit<W> E { A = v, ... }`."""
        kw = self.expect("enum")
        underlying = None if self.peek(1).kind == "{" else self.type_ref()
        name = self.name("an enum name")
        self.type_names.add(name.text)
        self.expect("{")
        if underlying is None:
            members = []
            while not self.at("}"):
                m_annotations = self.annotations()
                tok = self.name("an enum member")
                members.append(
                    ast.EnumMember(pos=tok.pos, name=tok.text, annotations=m_annotations)
                )
                if not self.accept(","):
                    break
            self.expect("}", "'}' or ','")
            return ast.EnumDeclaration(
                pos=kw.pos, name=name.text, annotations=annotations, members=members
            )
        ser_members = []
        while not self.at("}"):
            m_annotations = self.annotations()
            tok = self.name("an enum member")
            self.expect("=", "'=' and a value (members of a serializable enum need values)")
            ser_members.append(
                ast.SerEnumMember(
                    pos=tok.pos, name=tok.text, annotations=m_annotations, value=self.expression()
                )
            )
            if not self.accept(","):
                break
        self.expect("}", "'}' or ','")
        return ast.SerEnumDeclaration(
            pos=kw.pos,
            name=name.text,
            annotations=annotations,
            underlying=underlying,
            members=ser_members,
        )

    def _member_list(self) -> list[Token]:
        self.expect("{")
        members = []
        while not self.at("}"):
            members.append(self.name("a member name"))
            if not self.accept(","):
                break
        self.expect("}", "'}' or ','")
        return members

    def error_decl(self) -> ast.ErrorDeclaration:
        """`error { A, B }`."""
        kw = self.advance()
        members = [ast.ErrorMember(pos=t.pos, name=t.text) for t in self._member_list()]
        return ast.ErrorDeclaration(pos=kw.pos, members=members)

    def match_kind_decl(self) -> ast.MatchKindDeclaration:
        """`match_kind { exact, lpm }`."""
        kw = self.advance()
        members = [ast.MatchKindMember(pos=t.pos, name=t.text) for t in self._member_list()]
        return ast.MatchKindDeclaration(pos=kw.pos, members=members)

    def extern(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """`extern E<T> { methods }` or `extern R f<T>(params);`."""
        kw = self.expect("extern")
        annotations = annotations + self.annotations()
        saved = self.i
        if self.peek().kind == "IDENT":
            name = self.advance()
            self.type_names.add(name.text)
            type_params = self.type_params()
            if self.at("{"):
                return self.extern_object_rest(kw, annotations, name, type_params)
            self.type_names.discard(name.text)
            self.i = saved
        proto = self.function_prototype(annotations)
        self.expect(";")
        return ast.ExternFunctionDeclaration(
            pos=kw.pos, name=proto.name, annotations=annotations, prototype=proto
        )

    def extern_object_rest(
        self,
        kw: Token,
        annotations: list[ast.Annotation],
        name: Token,
        type_params: list[ast.TypeParameter],
    ) -> ast.ExternDeclaration:
        """The `{ methods }` of an extern object declaration."""
        self.expect("{")
        methods = []
        while not self.accept("}"):
            m_annotations = self.annotations()
            pos = self.peek().pos
            if self.accept("abstract"):
                proto = self.function_prototype(m_annotations)
                proto.is_abstract = True
                proto.pos = pos
            elif self.peek().kind == "IDENT" and self.peek(1).kind == "(":
                ctor = self.advance()
                if ctor.text != name.text:
                    raise self.error(
                        f"constructor {ctor.text} of extern {name.text} must be named {name.text}",
                        ctor,
                    )
                proto = ast.MethodPrototype(
                    pos=ctor.pos, name=ctor.text, annotations=m_annotations,
                    params=self.parameters(), is_constructor=True,
                )  # fmt: skip
            else:
                proto = self.function_prototype(m_annotations)
            self.expect(";")
            methods.append(proto)
        return ast.ExternDeclaration(
            pos=kw.pos,
            name=name.text,
            annotations=annotations,
            type_params=type_params,
            methods=methods,
        )

    def function_prototype(self, annotations: list[ast.Annotation]) -> ast.MethodPrototype:
        """`R name<T>(params)` (return type may name a type parameter declared after it)."""
        pos = self.peek().pos
        return_type = self.type_or_void()
        name = self.name("a function name")
        type_params = self.type_params()
        params = self.parameters()
        return ast.MethodPrototype(
            pos=pos, name=name.text, annotations=annotations, return_type=return_type,
            type_params=type_params, params=params,
        )  # fmt: skip

    def _type_decl_head(
        self, kind: str
    ) -> tuple[Token, Token, list[ast.TypeParameter], list[ast.Parameter]]:
        kw = self.expect(kind)
        name = self.name(f"a {kind} name")
        self.type_names.add(name.text)
        type_params = self.type_params()
        params = self.parameters()
        return kw, name, type_params, params

    def package_decl(self, annotations: list[ast.Annotation]) -> ast.PackageTypeDeclaration:
        """`package P<T>(params);`."""
        kw, name, type_params, params = self._type_decl_head("package")
        self.expect(";")
        return ast.PackageTypeDeclaration(
            pos=kw.pos,
            name=name.text,
            annotations=annotations,
            type_params=type_params,
            params=params,
        )

    def _constructor_params(self) -> list[ast.Parameter]:
        return self.parameters() if self.at("(") else []

    def parser_decl(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """A parser type declaration or a parser definition."""
        kw, name, type_params, params = self._type_decl_head("parser")
        if self.accept(";"):
            return ast.ParserTypeDeclaration(
                pos=kw.pos,
                name=name.text,
                annotations=annotations,
                type_params=type_params,
                params=params,
            )
        ctor = self._constructor_params()
        self.expect("{", "'{' or ';'")
        locals_: list[ast.Declaration] = []
        states: list[ast.ParserState] = []
        while not self.accept("}"):
            l_annotations = self.annotations()
            if self.at("state"):
                states.append(self.parser_state(l_annotations))
            elif states:
                raise self.error(f"syntax error: expected a state, found {_describe(self.peek())}")
            else:
                locals_.append(self.local_declaration(l_annotations, in_parser=True))
        return ast.ParserDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, type_params=type_params, params=params,
            constructor_params=ctor, locals=locals_, states=states,
        )  # fmt: skip

    def parser_state(self, annotations: list[ast.Annotation]) -> ast.ParserState:
        """`state name { statements [transition ...] }`."""
        kw = self.advance()
        name = self.name("a state name")
        self.expect("{")
        components: list[ast.Node] = []
        transition = None
        while not self.accept("}"):
            if self.at("transition"):
                self.advance()
                transition = self.transition_target()
                self.expect("}", "'}' (the transition ends the state)")
                break
            components.append(self.statement())
        return ast.ParserState(
            pos=kw.pos,
            name=name.text,
            annotations=annotations,
            components=components,
            transition=transition,
        )

    def transition_target(self) -> ast.Expression:
        """`name;` or `select(...) { cases }`."""
        if self.at("select"):
            return self.select()
        tok = self.peek()
        target = self.expression()
        if not isinstance(target, ast.PathExpression):
            raise self.error("syntax error: a transition goes to a state name or a select", tok)
        self.expect(";")
        return target

    def select(self) -> ast.SelectExpression:
        """`select(e1, e2) { keyset: state; ... }`."""
        kw = self.expect("select")
        self.expect("(")
        exprs = [self.expression()]
        while self.accept(","):
            exprs.append(self.expression())
        self.expect(")", "')' or ','")
        self.expect("{")
        cases = []
        while not self.accept("}"):
            pos = self.peek().pos
            keyset = self.keyset()
            self.expect(":")
            state = self.name("a state name")
            self.expect(";")
            cases.append(
                ast.SelectCase(
                    pos=pos, keyset=keyset, state=ast.PathExpression(pos=state.pos, name=state.text)
                )
            )
        return ast.SelectExpression(pos=kw.pos, exprs=exprs, cases=cases)

    def keyset(self) -> ast.Expression:
        """A keyset: `(k1, k2)` tuple or one simple keyset."""
        if self.at("("):
            tup = self.speculate(self._tuple_keyset)
            if tup is not None:
                return tup
        return self.simple_keyset()

    def _tuple_keyset(self) -> ast.Expression:
        open_tok = self.expect("(")
        items = [self.simple_keyset()]
        while self.accept(","):
            items.append(self.simple_keyset())
        self.expect(")")
        if not self.at(":"):
            raise self.error("not a tuple keyset")
        if len(items) == 1:
            return items[0]
        return ast.ListExpression(pos=open_tok.pos, components=items)

    def simple_keyset(self) -> ast.Expression:
        """`default`, `_`, `e`, `e &&& m`, `lo .. hi`."""
        tok = self.peek()
        if self.accept("default"):
            return ast.DefaultExpression(pos=tok.pos)
        if self.at("_") and self.peek(1).kind in (",", ")", ":"):
            self.advance()
            return ast.DontCareExpression(pos=tok.pos)
        value = self.expression()
        if self.accept("&&&"):
            return ast.MaskExpression(pos=tok.pos, value=value, mask=self.expression())
        if self.accept(".."):
            return ast.RangeExpression(pos=tok.pos, low=value, high=self.expression())
        return value

    def control_decl(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """A control type declaration or a control definition."""
        kw, name, type_params, params = self._type_decl_head("control")
        if self.accept(";"):
            return ast.ControlTypeDeclaration(
                pos=kw.pos,
                name=name.text,
                annotations=annotations,
                type_params=type_params,
                params=params,
            )
        ctor = self._constructor_params()
        self.expect("{", "'{' or ';'")
        locals_: list[ast.Declaration] = []
        while not self.at("apply"):
            if self.at("}", "EOF"):
                raise self.error(f"syntax error: control {name.text} has no apply block")
            locals_.append(self.local_declaration(self.annotations(), in_parser=False))
        self.advance()
        body = self.block([])
        self.expect("}", "'}' ending the control (nothing may follow the apply block)")
        return ast.ControlDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, type_params=type_params, params=params,
            constructor_params=ctor, locals=locals_, body=body,
        )  # fmt: skip

    def local_declaration(
        self, annotations: list[ast.Annotation], in_parser: bool
    ) -> ast.Declaration:
        """A parser or control local: constant, variable, instantiation, action, table, value_set."""
        tok = self.peek()
        if tok.kind == "const":
            return self.constant(annotations)
        if tok.kind == "action" and not in_parser:
            return self.action(annotations)
        if tok.kind == "table" and not in_parser:
            return self.table(annotations)
        if tok.kind == "value_set" and in_parser:
            return self.value_set(annotations)
        if tok.kind in ("action", "table", "value_set"):
            where = "parser" if in_parser else "control"
            raise self.error(f"a {tok.kind} may not be declared in a {where}")
        decl = self.typed_declaration(annotations, top_level=False)
        assert isinstance(decl, ast.Declaration)
        return decl

    def instantiation_rest(
        self, annotations: list[ast.Annotation], type_node: ast.TypeNode
    ) -> ast.Instantiation:
        """`(args) name [= { initialiser }];` after the type."""
        args = self.arguments()
        name = self.name("an instance name")
        initializer = None
        if self.accept("="):
            self.expect("{", "'{' (an instance initialiser is a block of declarations)")
            initializer = []
            while not self.accept("}"):
                d_annotations = self.annotations()
                if self.at("const"):
                    initializer.append(self.constant(d_annotations))
                    continue
                initializer.append(self.typed_declaration(d_annotations, top_level=True))
        self.expect(";")
        return ast.Instantiation(
            pos=type_node.pos, name=name.text, annotations=annotations, type_node=type_node, args=args,
            initializer=initializer,
        )  # fmt: skip

    def function_rest(
        self, annotations: list[ast.Annotation], return_type: ast.TypeNode, name: Token
    ) -> ast.FunctionDeclaration:
        """`<T>(params) { body }` after a function's return type and name."""
        type_params = self.type_params()
        params = self.parameters()
        body = self.block([])
        return ast.FunctionDeclaration(
            pos=return_type.pos, name=name.text, annotations=annotations, return_type=return_type,
            type_params=type_params, params=params, body=body,
        )  # fmt: skip

    def variable_rest(
        self, annotations: list[ast.Annotation], type_node: ast.TypeNode, name: Token
    ) -> ast.VariableDeclaration:
        """`[= init];` after a variable's type and name."""
        init = self.expression() if self.accept("=") else None
        self.expect(";")
        return ast.VariableDeclaration(
            pos=type_node.pos,
            name=name.text,
            annotations=annotations,
            type_node=type_node,
            init=init,
        )

    def value_set(self, annotations: list[ast.Annotation]) -> ast.ValueSetDeclaration:
        """`value_set<T>(size) name;`."""
        kw = self.expect("value_set")
        self.expect("<")
        element = self.type_ref()
        self.expect(">")
        self.expect("(")
        size = self.expression()
        self.expect(")")
        name = self.name("a value_set name")
        self.expect(";")
        return ast.ValueSetDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, element_type=element, size=size
        )

    # ------------------------------------------------------------ actions and tables

    def action(self, annotations: list[ast.Annotation]) -> ast.ActionDeclaration:
        """`action name(params) { body }`."""
        kw = self.expect("action")
        name = self.name("an action name")
        params = self.parameters()
        body = self.block([])
        return ast.ActionDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, params=params, body=body
        )

    def table(self, annotations: list[ast.Annotation]) -> ast.TableDeclaration:
        """`table name { properties }`."""
        kw = self.expect("table")
        name = self.name("a table name")
        self.expect("{")
        properties: list[ast.TableProperty] = []
        while not self.accept("}"):
            properties.append(self.table_property())
        return ast.TableDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, properties=properties
        )

    def table_property(self) -> ast.TableProperty:
        """One table property."""
        annotations = self.annotations()
        pos = self.peek().pos
        is_const = bool(self.accept("const"))
        prop = self.name("a table property name")
        self.expect("=", f"'=' after the table property {prop.text}")
        if prop.text == "key":
            return ast.KeyProperty(
                pos=pos,
                name="key",
                is_const=is_const,
                annotations=annotations,
                elements=self.key_elements(),
            )
        if prop.text == "actions":
            return ast.ActionsProperty(
                pos=pos,
                name="actions",
                is_const=is_const,
                annotations=annotations,
                actions=self.action_list(),
            )
        if prop.text == "entries":
            return ast.EntriesProperty(
                pos=pos, name="entries", is_const=is_const, annotations=annotations,
                entries=self.entries(is_const),
            )  # fmt: skip
        if prop.text == "default_action":
            action = self.action_ref([])
            self.expect(";")
            return ast.DefaultActionProperty(
                pos=pos,
                name="default_action",
                is_const=is_const,
                annotations=annotations,
                action=action,
            )
        value = self.expression()
        self.expect(";")
        return ast.ValueProperty(
            pos=pos, name=prop.text, is_const=is_const, annotations=annotations, value=value
        )

    def key_elements(self) -> list[ast.KeyElement]:
        """`{ expr : match_kind @annotations; ... }`."""
        self.expect("{")
        elements = []
        while not self.accept("}"):
            pos = self.peek().pos
            expr = self.expression()
            self.expect(":", "':' and a match kind")
            kind = self.name("a match kind")
            annotations = self.annotations()
            self.expect(";")
            elements.append(
                ast.KeyElement(
                    pos=pos, expr=expr, match_kind=ast.PathExpression(pos=kind.pos, name=kind.text),
                    annotations=annotations,
                )
            )  # fmt: skip
        return elements

    def action_list(self) -> list[ast.ActionRef]:
        """`{ @annotations action_ref; ... }`."""
        self.expect("{")
        actions = []
        while not self.accept("}"):
            actions.append(self.action_ref(self.annotations()))
            self.expect(";")
        return actions

    def action_ref(self, annotations: list[ast.Annotation]) -> ast.ActionRef:
        """`name` or `name(args)` (args may bind only some parameters)."""
        tok = self.peek()
        is_global = bool(self.accept("."))
        name = self.name("an action name")
        expr: ast.Expression = ast.PathExpression(pos=tok.pos, name=name.text, is_global=is_global)
        args: list[ast.Argument] = []
        if self.at("("):
            args = self.arguments()
            expr = ast.MethodCallExpression(pos=tok.pos, callee=expr, args=args)
        return ast.ActionRef(pos=tok.pos, expr=expr, annotations=annotations, args=args)

    def entries(self, table_const: bool) -> list[ast.Entry]:
        """`{ [@annotations] [const] [priority = N :] keyset : action @annotations; ... }`."""
        self.expect("{")
        entries = []
        while not self.accept("}"):
            pos = self.peek().pos
            # Annotations may lead the entry (`@priority(3) k : a();`) as well as follow it.
            leading = self.annotations()
            is_const = bool(self.accept("const")) or table_const
            leading += self.annotations()
            priority = None
            if self.at("priority") and self.peek(1).kind == "=":
                self.advance()
                self.advance()
                priority = self.primary() if self.at("INT") else self._parenthesised()
                self.expect(":", "':' after the entry priority")
            keyset_expr = self.keyset()
            keyset = (
                keyset_expr.components
                if isinstance(keyset_expr, ast.ListExpression)
                else [keyset_expr]
            )
            self.expect(":", "':' and an action")
            action = self.action_ref([])
            annotations = leading + self.annotations()
            self.expect(";")
            entries.append(
                ast.Entry(
                    pos=pos, keyset=keyset, action=action, priority=priority, is_const=is_const,
                    annotations=annotations,
                )
            )  # fmt: skip
        return entries

    def _parenthesised(self) -> ast.Expression:
        self.expect("(")
        e = self.expression()
        self.expect(")")
        return e

    # ------------------------------------------------------------ statements

    def block(self, annotations: list[ast.Annotation]) -> ast.BlockStatement:
        """`{ statements and declarations }`."""
        open_tok = self.expect("{")
        components: list[ast.Node] = []
        while not self.accept("}"):
            if self.at("EOF"):
                raise self.error("syntax error: '{' is never closed", open_tok)
            components.append(self.statement())
        return ast.BlockStatement(pos=open_tok.pos, annotations=annotations, components=components)

    def statement(self) -> ast.Node:
        """A statement or a local constant/variable/instance declaration."""
        annotations = self.annotations()
        tok = self.peek()
        kind = tok.kind
        if kind == "{":
            return self.block(annotations)
        if kind == ";":
            self.advance()
            return ast.EmptyStatement(pos=tok.pos)
        if kind == "const":
            return self.constant(annotations)
        if kind == "if":
            return self.if_statement()
        if kind == "switch":
            return self.switch_statement()
        if kind == "return":
            self.advance()
            value = None if self.at(";") else self.expression()
            self.expect(";")
            return ast.ReturnStatement(pos=tok.pos, value=value)
        if kind in ("exit", "break", "continue"):
            self.advance()
            self.expect(";")
            cls = {
                "exit": ast.ExitStatement,
                "break": ast.BreakStatement,
                "continue": ast.ContinueStatement,
            }
            return cls[kind](pos=tok.pos)
        if kind == "for":
            return self.for_statement()
        if kind in ("transition", "state"):
            raise self.error(f"syntax error: {tok.text} is only allowed in a parser state")
        if kind in ("action", "table", "apply"):
            raise self.error(f"syntax error: unexpected {_describe(tok)} here")
        if self._declaration_follows():
            decl = self.typed_declaration(annotations, top_level=False)
            return decl
        stmt = self.simple_statement()
        self.expect(";", "';' after the statement")
        return stmt

    def _declaration_follows(self) -> bool:
        """Whether the tokens ahead read as `Type name ...` or `Type(args) name`."""
        kind = self.peek().kind
        if kind in BASE_TYPE_KEYWORDS or kind in ("tuple",):
            return True
        if kind not in ("IDENT", "."):
            return False
        return self.speculate(self._declaration_head) is not None

    def _declaration_head(self) -> bool:
        saved = self.i
        self.type_ref()
        if self.at("("):
            self.balanced("(", ")")
        ok = self.peek().kind == "IDENT"
        self.i = saved
        if not ok:
            raise _Backtrack()
        return True

    def simple_statement(self) -> ast.Statement:
        """An assignment, compound assignment or method call (without `;`)."""
        tok = self.peek()
        target = self.expression()
        if self.accept("="):
            return ast.AssignmentStatement(pos=tok.pos, left=target, right=self.expression())
        op = self._compound_operator()
        if op is not None:
            return ast.AssignmentStatement(pos=tok.pos, left=target, right=self.expression(), op=op)
        if isinstance(target, ast.MethodCallExpression):
            return ast.MethodCallStatement(pos=tok.pos, call=target)
        raise self.error(
            f"syntax error: expected '=' or a method call, found {_describe(self.peek())}"
        )

    def _compound_operator(self) -> str | None:
        tok = self.peek()
        if tok.kind in COMPOUND_ASSIGN:
            self.advance()
            return COMPOUND_ASSIGN[tok.kind]
        nxt = self.peek(1)
        if tok.kind == ">" and nxt.kind == ">=" and nxt.start == tok.end:
            self.advance()
            self.advance()
            return ">>"
        return None

    def if_statement(self) -> ast.IfStatement:
        """`if (cond) stmt [else stmt]`."""
        kw = self.expect("if")
        cond = self._parenthesised()
        then = self.statement()
        otherwise = self.statement() if self.accept("else") else None
        return ast.IfStatement(pos=kw.pos, cond=cond, then=then, otherwise=otherwise)

    def switch_statement(self) -> ast.SwitchStatement:
        """`switch (expr) { label: [block] ... }`."""
        kw = self.expect("switch")
        expr = self._parenthesised()
        self.expect("{")
        cases = []
        while not self.accept("}"):
            tok = self.peek()
            label = (
                ast.DefaultExpression(pos=tok.pos) if self.accept("default") else self.expression()
            )
            self.expect(":", "':' after the switch label")
            body = self.block([]) if self.at("{") else None
            cases.append(ast.SwitchCase(pos=tok.pos, label=label, body=body))
        return ast.SwitchStatement(pos=kw.pos, expr=expr, cases=cases)

    def for_statement(self) -> ast.Statement:
        """`for (init; cond; updates) stmt` or `for ([T] x in collection) stmt`."""
        kw = self.expect("for")
        self.expect("(")
        for_in = self.speculate(self._for_in_head)
        if for_in is not None:
            decl, var, collection = for_in
            body = self.statement()
            return ast.ForInStatement(
                pos=kw.pos, decl=decl, var=var, collection=collection, body=body
            )
        init: list[ast.Node] = []
        while not self.at(";"):
            init.append(self._for_clause())
            if not self.accept(","):
                break
        self.expect(";")
        cond = None if self.at(";") else self.expression()
        self.expect(";")
        updates: list[ast.Node] = []
        while not self.at(")"):
            updates.append(self._for_clause())
            if not self.accept(","):
                break
        self.expect(")")
        return ast.ForStatement(
            pos=kw.pos, init=init, cond=cond, updates=updates, body=self.statement()
        )

    def _for_clause(self) -> ast.Node:
        annotations = self.annotations()
        if self._declaration_follows():
            type_node = self.type_ref()
            name = self.name("a variable name")
            init = self.expression() if self.accept("=") else None
            return ast.VariableDeclaration(
                pos=type_node.pos,
                name=name.text,
                annotations=annotations,
                type_node=type_node,
                init=init,
            )
        return self.simple_statement()

    def _for_in_head(self) -> tuple:
        annotations = self.annotations()
        decl = var = None
        if self.peek().kind == "IDENT" and self.peek(1).kind == "in":
            tok = self.advance()
            var = ast.PathExpression(pos=tok.pos, name=tok.text)
        else:
            type_node = self.type_ref()
            name = self.name()
            decl = ast.VariableDeclaration(
                pos=type_node.pos, name=name.text, annotations=annotations, type_node=type_node
            )
        self.expect("in")
        start = self.peek()
        collection = self.expression()
        if self.accept(".."):
            collection = ast.RangeExpression(pos=start.pos, low=collection, high=self.expression())
        self.expect(")")
        return decl, var, collection

    # ------------------------------------------------------------ expressions

    def expression(self) -> ast.Expression:
        """expression: ternary level."""
        cond = self.binary(0)
        if self.at("?"):
            self.advance()
            then = self.expression()
            self.expect(":", "':' in the conditional expression")
            otherwise = self.expression()
            return ast.TernaryExpression(pos=cond.pos, cond=cond, then=then, otherwise=otherwise)
        return cond

    def _binary_operator(self, level: int) -> str | None:
        tok = self.peek()
        ops = BINARY_LEVELS[level]
        if tok.kind == ">":
            nxt = self.peek(1)
            if nxt.start == tok.end and nxt.kind in (">", ">="):
                # `>>` is two adjacent `>` tokens; `>>=` belongs to the assignment.
                return ">>" if nxt.kind == ">" and ">>" in ops else None
        if tok.kind in ops and tok.kind != ">>":
            return tok.kind
        return None

    def binary(self, level: int) -> ast.Expression:
        """Left-associative binary operators at precedence `level` and tighter."""
        if level == len(BINARY_LEVELS):
            return self.prefix()
        left = self.binary(level + 1)
        while True:
            op = self._binary_operator(level)
            if op is None:
                return left
            self.advance()
            if op == ">>":
                self.advance()
            right = self.binary(level + 1)
            left = ast.BinaryExpression(pos=left.pos, op=op, left=left, right=right)

    def prefix(self) -> ast.Expression:
        """Prefix operators and casts."""
        tok = self.peek()
        if tok.kind in ("!", "~", "-", "+"):
            self.advance()
            return ast.UnaryExpression(pos=tok.pos, op=tok.kind, operand=self.prefix())
        if tok.kind == "(" and self._cast_follows():
            self.advance()
            type_node = self.type_ref()
            self.expect(")")
            return ast.CastExpression(pos=tok.pos, type_node=type_node, expr=self.prefix())
        return self.postfix(self.primary())

    def _cast_follows(self) -> bool:
        nxt = self.peek(1)
        if nxt.kind in BASE_TYPE_KEYWORDS or nxt.kind == "tuple":
            return nxt.kind != "error" or self.peek(2).kind == ")"
        if nxt.kind == "IDENT" and nxt.text in self.type_names:
            after = self.peek(2).kind
            return after in (")", "<", "[")
        return False

    def postfix(self, expr: ast.Expression) -> ast.Expression:
        """Member access, indexing, slicing and calls."""
        while True:
            tok = self.peek()
            if tok.kind == ".":
                self.advance()
                member = self.name("a member name")
                expr = ast.MemberExpression(pos=expr.pos, expr=expr, member=member.text)
            elif tok.kind == "[":
                self.advance()
                index = self.expression()
                if self.accept(":"):
                    lo = self.expression()
                    self.expect("]")
                    expr = ast.SliceExpression(pos=expr.pos, expr=expr, hi=index, lo=lo)
                else:
                    self.expect("]")
                    expr = ast.IndexExpression(pos=expr.pos, expr=expr, index=index)
            elif tok.kind == "(":
                expr = ast.MethodCallExpression(pos=expr.pos, callee=expr, args=self.arguments())
            elif tok.kind == "<" and isinstance(expr, ast.PathExpression | ast.MemberExpression):
                type_args = self.speculate(self._call_type_args)
                if type_args is None:
                    return expr
                expr = ast.MethodCallExpression(
                    pos=expr.pos, callee=expr, type_args=type_args, args=self.arguments()
                )
            else:
                return expr

    def _call_type_args(self) -> list[ast.TypeNode]:
        self.expect("<")
        args = self.type_args_rest()
        if not self.at("("):
            raise _Backtrack()
        return args

    def primary(self) -> ast.Expression:
        """Literals, names, parenthesised expressions, `{...}` lists and struct expressions."""
        tok = self.peek()
        kind = tok.kind
        if kind == "INT":
            self.advance()
            v = tok.value
            return ast.IntLiteral(
                pos=tok.pos, value=v.value, width=v.width, signed=v.signed, text=tok.text
            )
        if kind in ("true", "false"):
            self.advance()
            return ast.BoolLiteral(pos=tok.pos, value=kind == "true")
        if kind == "STRING":
            self.advance()
            return ast.StringLiteral(pos=tok.pos, value=tok.value)
        if kind == "this":
            self.advance()
            return ast.ThisExpression(pos=tok.pos)
        if kind == "_":
            self.advance()
            return ast.DontCareExpression(pos=tok.pos)
        if kind == "IDENT" or kind == ".":
            is_global = bool(self.accept("."))
            name = self.name()
            return ast.PathExpression(pos=tok.pos, name=name.text, is_global=is_global)
        if kind == "error":
            self.advance()
            return ast.PathExpression(pos=tok.pos, name="error")
        if kind in ("bit", "int", "varbit", "bool", "tuple"):
            return ast.TypeExpression(pos=tok.pos, type_node=self.type_ref())
        if kind == "(":
            return self._parenthesised()
        if kind == "{":
            return self.brace_expression()
        raise self.error(f"syntax error: expected an expression, found {_describe(tok)}")

    def brace_expression(self) -> ast.Expression:
        """`{}`, `{#}`, `{e, ...}`, `{a = e, ...}`, with an optional trailing `...`."""
        open_tok = self.expect("{")
        if self.accept("#"):
            self.expect("}")
            return ast.InvalidExpression(pos=open_tok.pos)
        if self.peek().kind == "IDENT" and self.peek(1).kind == "=":
            fields = []
            has_rest = False
            while not self.at("}"):
                if self.accept("..."):
                    has_rest = True
                    break
                name = self.name("a field name")
                self.expect("=")
                fields.append(
                    ast.NamedExpression(pos=name.pos, name=name.text, value=self.expression())
                )
                if not self.accept(","):
                    break
            self.expect("}", "'}' or ','")
            return ast.StructExpression(pos=open_tok.pos, fields=fields, has_rest=has_rest)
        components = []
        has_rest = False
        while not self.at("}"):
            if self.accept("..."):
                has_rest = True
                break
            components.append(self.expression())
            if not self.accept(","):
                break
        self.expect("}", "'}' or ','")
        return ast.ListExpression(pos=open_tok.pos, components=components, has_rest=has_rest)


def _describe(tok: Token) -> str:
    """How a token is named in a syntax error."""
    if tok.kind == "EOF":
        return "end of file"
    return repr(tok.text)


def _single(parser: Parser, args: list[ast.TypeNode], tok: Token) -> ast.TypeNode:
    if len(args) != 1:
        raise parser.error("syntax error: list<T> takes exactly one type argument", tok)
    return args[0]


def _parse_annotation_args(ann: ast.Annotation) -> list[ast.Expression]:
    """Parse a well-known annotation's token body as a comma-separated expression list."""
    last = ann.body[-1]
    eof = Token(
        "EOF", "", SourcePos(last.pos.file, last.pos.line, last.pos.column + len(last.text))
    )
    sub = Parser([*ann.body, eof])
    args = [sub.expression()]
    while sub.accept(","):
        args.append(sub.expression())
    if not sub.at("EOF"):
        raise sub.error(f"syntax error in @{ann.name}: unexpected {_describe(sub.peek())}")
    return args


def parse(tokens: list[Token]) -> ast.Program:
    """Parse a token list (from `lexer.tokenize`) into a program."""
    return Parser(tokens).program()
