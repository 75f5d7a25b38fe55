"""Declarations: the program, annotations, parameters, type and extern declarations,
constants, functions, variables and instances."""

from __future__ import annotations

from .. import ast
from ..diagnostics import SourcePos
from ..lexer import Token
from .statements import StatementParser
from .stream import describe

# Annotations whose parenthesised body is an expression list (p4c parses them).
EXPRESSION_ANNOTATIONS = frozenset(
    {"name", "id", "priority", "field_list", "alias", "match", "deprecated", "brief", "description"}
)


class DeclarationParser(StatementParser):
    """Top-level and local declarations other than parser/control bodies."""

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
                f"syntax error: expected an annotation name, found {describe(name_tok)}", name_tok
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
                ann.args = _parse_annotation_args(type(self), ann)
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


def _parse_annotation_args(
    parser_class: type[DeclarationParser], ann: ast.Annotation
) -> list[ast.Expression]:
    """Parse a well-known annotation's token body as a comma-separated expression list."""
    last = ann.body[-1]
    eof = Token(
        "EOF", "", SourcePos(last.pos.file, last.pos.line, last.pos.column + len(last.text))
    )
    sub = parser_class([*ann.body, eof])
    args = [sub.expression()]
    while sub.accept(","):
        args.append(sub.expression())
    if not sub.at("EOF"):
        raise sub.error(f"syntax error in @{ann.name}: unexpected {describe(sub.peek())}")
    return args
