"""P4_16 source from the AST: the inverse of `parse`, for source-to-source tools.

`print_program(program)` gives text that parses back to the same tree (positions
aside); the differential check (`compiler/mutate/`) prints each rewritten program with
it. Only the syntactic fields are read, so a tree a tool edited prints as well as one
the parser made. Parentheses are printed where precedence needs them, never kept from
the source (the tree has none). With `source` and `target`, top-level declarations
from other files (`core.p4`, `v1model.p4`, a program's own includes) are preceded by a
`# line "file"` marker, so the front end still sees them where they came from (the
back end knows the architecture's declarations by their file).
"""

from __future__ import annotations

from . import ast
from .lexer import Token
from .parse.declarations import EXPRESSION_ANNOTATIONS
from .parse.expressions import BINARY_LEVELS

INDENT = "    "

# Precedence as the parser reads it: ternary, the binary levels, prefix, postfix.
_TERNARY = 0
_BINARY = {op: level + 1 for level, ops in enumerate(BINARY_LEVELS) for op in ops}
_PREFIX = len(BINARY_LEVELS) + 1
_POSTFIX = _PREFIX + 1

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def print_program(program: ast.Program, source: str | None = None, target: str | None = None) -> str:
    """P4 text of `program`. With `source`, declarations from any other file get a line
    marker naming their file; those from `source` are the text's own lines (`target` is
    the name the text will have)."""
    return _Printer(source, target).program(program)


def print_expression(expr: ast.Expression) -> str:
    """P4 text of one expression."""
    return _Printer(None, None).expr(expr)


def print_statement(stmt: ast.Node) -> str:
    """P4 text of one statement or local declaration (lines without a trailing newline)."""
    printer = _Printer(None, None)
    printer.statement(stmt, 0)
    return "\n".join(printer.lines)


def print_type(node: ast.TypeNode) -> str:
    """P4 text of a type as written."""
    return _Printer(None, None).type(node)


def literal_text(value: int, width: int | None, signed: bool = False) -> str:
    """An integer literal: `8w5`, `4s3`, or `5` without a width."""
    if width is None:
        return str(value)
    return f"{width}{'s' if signed else 'w'}{value}"


class _Printer:
    """Accumulates the lines of one printed program."""

    def __init__(self, source: str | None, target: str | None) -> None:
        self.source = source
        self.target = target
        self.lines: list[str] = []
        self.current_file: str | None = source

    def emit(self, depth: int, text: str) -> None:
        """One output line at `depth` levels of indentation."""
        self.lines.append(INDENT * depth + text)

    # ------------------------------------------------------------ program

    def program(self, program: ast.Program) -> str:
        """The whole program, one blank line between top-level declarations."""
        for decl in program.declarations:
            self.mark_file(decl)
            self.declaration(decl, 0)
        return "\n".join(self.lines) + "\n"

    def mark_file(self, decl: ast.Node) -> None:
        """A line marker where the declarations' file changes (when tracking files)."""
        if self.source is None:
            return
        file = decl.pos.file
        if file == self.source:
            if self.current_file != self.source:
                # Back to the text's own lines: the line after the marker is line n + 2.
                self.lines.append(f'# {len(self.lines) + 2} "{_escape(self.target or self.source)}"')
                self.current_file = self.source
            return
        self.lines.append(f'# {decl.pos.line} "{_escape(file)}"')
        self.current_file = file

    # ------------------------------------------------------------ annotations

    def annotations(self, annotations: list[ast.Annotation]) -> str:
        """Annotations followed by a space (empty when there are none)."""
        return "".join(self.annotation(a) + " " for a in annotations)

    def annotation(self, ann: ast.Annotation) -> str:
        """One annotation in the form it was parsed from."""
        if ann.structured:
            if ann.kv is not None:
                body = ", ".join(f"{kv.key} = {self.expr(kv.value)}" for kv in ann.kv)
            else:
                body = ", ".join(self.expr(a) for a in ann.args or [])
            return f"@{ann.name}[{body}]"
        if not ann.body:
            return f"@{ann.name}"
        if ann.args is None and ann.name in EXPRESSION_ANNOTATIONS:
            # Only the `@pragma name body` form leaves such an annotation unparsed.
            return f"@pragma {ann.name} {_tokens(ann.body)}\n"
        return f"@{ann.name}({_tokens(ann.body)})"

    # ------------------------------------------------------------ types

    def type(self, node: ast.TypeNode) -> str:
        """A type as written."""
        if isinstance(node, ast.BaseTypeNode):
            if node.width is None:
                return node.kind
            width = node.width
            text = self.expr(width)
            if not isinstance(width, ast.IntLiteral | ast.PathExpression):
                text = f"({text})"
            return f"{node.kind}<{text}>"
        if isinstance(node, ast.NamedType):
            return ("." if node.is_global else "") + node.name
        if isinstance(node, ast.SpecializedTypeNode):
            return f"{self.type(node.base)}<{', '.join(self.type(a) for a in node.args)}>"
        if isinstance(node, ast.HeaderStackTypeNode):
            return f"{self.type(node.element)}[{self.expr(node.size)}]"
        if isinstance(node, ast.TupleTypeNode):
            return f"tuple<{', '.join(self.type(e) for e in node.elements)}>"
        if isinstance(node, ast.ListTypeNode):
            return f"list<{self.type(node.element)}>"
        if isinstance(node, ast.DontCareTypeNode):
            return "_"
        raise TypeError(f"cannot print type node {type(node).__name__}")

    def type_params(self, params: list[ast.TypeParameter]) -> str:
        """`<T, U>` or nothing."""
        return f"<{', '.join(p.name for p in params)}>" if params else ""

    def params(self, params: list[ast.Parameter]) -> str:
        """`(in T a, out U b = d)`."""
        out = []
        for p in params:
            direction = f"{p.direction.value} " if p.direction is not ast.Direction.NONE else ""
            default = f" = {self.expr(p.default)}" if p.default is not None else ""
            out.append(f"{self.annotations(p.annotations)}{direction}{self.type(p.type_node)} {p.name}{default}")
        return f"({', '.join(out)})"

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.Expression, min_prec: int = _TERNARY) -> str:
        """An expression, parenthesised when it binds looser than `min_prec`."""
        text, prec = self._expr(e)
        return f"({text})" if prec < min_prec else text

    def _expr(self, e: ast.Expression) -> tuple[str, int]:
        """The text of `e` and the precedence it binds at."""
        if isinstance(e, ast.IntLiteral):
            return e.text or literal_text(e.value, e.width, e.signed), _POSTFIX
        if isinstance(e, ast.BoolLiteral):
            return ("true" if e.value else "false"), _POSTFIX
        if isinstance(e, ast.StringLiteral):
            return '"' + "".join(_ESCAPES.get(c, c) for c in e.value) + '"', _POSTFIX
        if isinstance(e, ast.PathExpression):
            return ("." if e.is_global else "") + e.name, _POSTFIX
        if isinstance(e, ast.TypeExpression):
            return self.type(e.type_node), _POSTFIX
        if isinstance(e, ast.MemberExpression):
            return f"{self.expr(e.expr, _POSTFIX)}.{e.member}", _POSTFIX
        if isinstance(e, ast.IndexExpression):
            return f"{self.expr(e.expr, _POSTFIX)}[{self.expr(e.index)}]", _POSTFIX
        if isinstance(e, ast.SliceExpression):
            return f"{self.expr(e.expr, _POSTFIX)}[{self.expr(e.hi)}:{self.expr(e.lo)}]", _POSTFIX
        if isinstance(e, ast.MethodCallExpression):
            targs = f"<{', '.join(self.type(t) for t in e.type_args)}>" if e.type_args else ""
            return f"{self.expr(e.callee, _POSTFIX)}{targs}({self.arguments(e.args)})", _POSTFIX
        if isinstance(e, ast.UnaryExpression):
            operand = self.expr(e.operand, _PREFIX)
            # `- -x` and `+ +x` must not run together (the lexer has no `--`, but `++` is concatenation).
            sep = " " if operand[:1] in ("-", "+") else ""
            return f"{e.op}{sep}{operand}", _PREFIX
        if isinstance(e, ast.CastExpression):
            return f"({self.type(e.type_node)}) {self.expr(e.expr, _PREFIX)}", _PREFIX
        if isinstance(e, ast.BinaryExpression):
            level = _BINARY[e.op]
            return f"{self.expr(e.left, level)} {e.op} {self.expr(e.right, level + 1)}", level
        if isinstance(e, ast.TernaryExpression):
            return (f"{self.expr(e.cond, _TERNARY + 1)} ? {self.expr(e.then)} : {self.expr(e.otherwise)}",
                    _TERNARY)
        if isinstance(e, ast.MaskExpression):
            return f"{self.expr(e.value, _TERNARY + 1)} &&& {self.expr(e.mask, _TERNARY + 1)}", _TERNARY
        if isinstance(e, ast.RangeExpression):
            return f"{self.expr(e.low, _TERNARY + 1)} .. {self.expr(e.high, _TERNARY + 1)}", _TERNARY
        if isinstance(e, ast.ListExpression):
            items = [self.expr(c) for c in e.components] + (["..."] if e.has_rest else [])
            return "{" + ", ".join(items) + "}", _POSTFIX
        if isinstance(e, ast.StructExpression):
            items = [f"{f.name} = {self.expr(f.value)}" for f in e.fields] + (["..."] if e.has_rest else [])
            return "{" + ", ".join(items) + "}", _POSTFIX
        if isinstance(e, ast.InvalidExpression):
            return "{#}", _POSTFIX
        if isinstance(e, ast.DontCareExpression):
            return "_", _POSTFIX
        if isinstance(e, ast.DefaultExpression):
            return "default", _POSTFIX
        if isinstance(e, ast.ThisExpression):
            return "this", _POSTFIX
        if isinstance(e, ast.SelectExpression):
            raise TypeError("a select expression is printed by its parser state")
        raise TypeError(f"cannot print expression {type(e).__name__}")

    def arguments(self, args: list[ast.Argument]) -> str:
        """Call arguments: positional, `name = value`, `_`."""
        return ", ".join((f"{a.name} = " if a.name is not None else "") + self.expr(a.value) for a in args)

    def keyset(self, e: ast.Expression) -> str:
        """A select case's or entry's keyset: a tuple is `(k1, k2)`."""
        if isinstance(e, ast.ListExpression) and not e.has_rest:
            return "(" + ", ".join(self.simple_keyset(c) for c in e.components) + ")"
        return self.simple_keyset(e)

    def simple_keyset(self, e: ast.Expression) -> str:
        """One element of a keyset: `default`, `_`, `v`, `v &&& m`, `lo .. hi`."""
        if isinstance(e, ast.MaskExpression | ast.RangeExpression):
            return self.expr(e)
        return self.expr(e, _TERNARY + 1)

    # ------------------------------------------------------------ statements

    def statement(self, s: ast.Node, depth: int) -> None:
        """One statement or local declaration on its own lines."""
        if isinstance(s, ast.BlockStatement):
            self.block(s, depth, self.annotations(s.annotations))
        elif isinstance(s, ast.AssignmentStatement):
            self.emit(depth, self.simple(s) + ";")
        elif isinstance(s, ast.MethodCallStatement):
            self.emit(depth, self.expr(s.call) + ";")
        elif isinstance(s, ast.IfStatement):
            self.if_statement(s, depth, "")
        elif isinstance(s, ast.SwitchStatement):
            self.emit(depth, f"switch ({self.expr(s.expr)}) {{")
            for case in s.cases:
                label = "default" if isinstance(case.label, ast.DefaultExpression) else self.expr(case.label)
                if case.body is None:
                    self.emit(depth + 1, f"{label}:")
                else:
                    self.block(case.body, depth + 1, f"{label}: ")
            self.emit(depth, "}")
        elif isinstance(s, ast.ReturnStatement):
            self.emit(depth, "return;" if s.value is None else f"return {self.expr(s.value)};")
        elif isinstance(s, ast.ExitStatement):
            self.emit(depth, "exit;")
        elif isinstance(s, ast.EmptyStatement):
            self.emit(depth, ";")
        elif isinstance(s, ast.BreakStatement):
            self.emit(depth, "break;")
        elif isinstance(s, ast.ContinueStatement):
            self.emit(depth, "continue;")
        elif isinstance(s, ast.ForStatement):
            init = ", ".join(self.for_clause(c) for c in s.init)
            cond = self.expr(s.cond) if s.cond is not None else ""
            updates = ", ".join(self.for_clause(c) for c in s.updates)
            self.nested(f"for ({init}; {cond}; {updates})", s.body, depth)
        elif isinstance(s, ast.ForInStatement):
            if s.decl is not None:
                head = f"{self.annotations(s.decl.annotations)}{self.type(s.decl.type_node)} {s.decl.name}"
            else:
                head = self.expr(s.var)
            self.nested(f"for ({head} in {self.expr(s.collection)})", s.body, depth)
        else:
            self.declaration(s, depth)

    def simple(self, s: ast.Node) -> str:
        """An assignment without its `;`."""
        op = "=" if s.op is None else f"{s.op}="
        return f"{self.expr(s.left)} {op} {self.expr(s.right)}"

    def for_clause(self, c: ast.Node) -> str:
        """An init or update clause of a `for`: a declaration, assignment or call."""
        if isinstance(c, ast.VariableDeclaration):
            init = f" = {self.expr(c.init)}" if c.init is not None else ""
            return f"{self.annotations(c.annotations)}{self.type(c.type_node)} {c.name}{init}"
        if isinstance(c, ast.AssignmentStatement):
            return self.simple(c)
        if isinstance(c, ast.MethodCallStatement):
            return self.expr(c.call)
        raise TypeError(f"cannot print a for clause {type(c).__name__}")

    def block(self, b: ast.BlockStatement, depth: int, head: str) -> None:
        """`head{`, the components one level deeper, `}`."""
        self.emit(depth, head + "{")
        for c in b.components:
            self.statement(c, depth + 1)
        self.emit(depth, "}")

    def nested(self, head: str, body: ast.Node, depth: int) -> None:
        """`head` followed by a statement: a block on the same line, else indented."""
        if isinstance(body, ast.BlockStatement) and not body.annotations:
            self.block(body, depth, head + " ")
        else:
            self.emit(depth, head)
            self.statement(body, depth + 1)

    def if_statement(self, s: ast.IfStatement, depth: int, prefix: str) -> None:
        """`if (c) then [else otherwise]`, an `else if` chain kept flat."""
        then = s.then
        if s.otherwise is not None and _ends_open(then):
            # A dangling else would bind to the inner `if`: brace the inner one.
            then = ast.BlockStatement(pos=then.pos, components=[then])
        self.nested(f"{prefix}if ({self.expr(s.cond)})", then, depth)
        if s.otherwise is None:
            return
        if isinstance(s.otherwise, ast.IfStatement):
            self.if_statement(s.otherwise, depth, "else ")
        else:
            self.nested("else", s.otherwise, depth)

    # ------------------------------------------------------------ declarations

    def declaration(self, d: ast.Node, depth: int) -> None:
        """Any declaration (top level, local, or in an extern/instance body)."""
        ann = self.annotations(getattr(d, "annotations", []))
        if isinstance(d, ast.ConstantDeclaration):
            self.emit(depth, f"{ann}const {self.type(d.type_node)} {d.name} = {self.expr(d.value)};")
        elif isinstance(d, ast.VariableDeclaration):
            init = f" = {self.expr(d.init)}" if d.init is not None else ""
            self.emit(depth, f"{ann}{self.type(d.type_node)} {d.name}{init};")
        elif isinstance(d, ast.Instantiation):
            head = f"{ann}{self.type(d.type_node)}({self.arguments(d.args)}) {d.name}"
            if d.initializer is None:
                self.emit(depth, head + ";")
            else:
                self.emit(depth, head + " = {")
                for inner in d.initializer:
                    self.declaration(inner, depth + 1)
                self.emit(depth, "};")
        elif isinstance(d, ast.TypedefDeclaration):
            kw = "type" if d.is_newtype else "typedef"
            self.emit(depth, f"{ann}{kw} {self.type(d.type_node)} {d.name};")
        elif isinstance(d, ast.HeaderDeclaration | ast.HeaderUnionDeclaration | ast.StructDeclaration):
            kw = {ast.HeaderDeclaration: "header", ast.HeaderUnionDeclaration: "header_union",
                  ast.StructDeclaration: "struct"}[type(d)]
            self.emit(depth, f"{ann}{kw} {d.name}{self.type_params(d.type_params)} {{")
            for f in d.fields:
                self.emit(depth + 1, f"{self.annotations(f.annotations)}{self.type(f.type_node)} {f.name};")
            self.emit(depth, "}")
        elif isinstance(d, ast.EnumDeclaration):
            members = ", ".join(f"{self.annotations(m.annotations)}{m.name}" for m in d.members)
            self.emit(depth, f"{ann}enum {d.name} {{ {members} }}")
        elif isinstance(d, ast.SerEnumDeclaration):
            self.emit(depth, f"{ann}enum {self.type(d.underlying)} {d.name} {{")
            for m in d.members:
                self.emit(depth + 1, f"{self.annotations(m.annotations)}{m.name} = {self.expr(m.value)},")
            self.emit(depth, "}")
        elif isinstance(d, ast.ErrorDeclaration):
            self.emit(depth, f"error {{ {', '.join(m.name for m in d.members)} }}")
        elif isinstance(d, ast.MatchKindDeclaration):
            self.emit(depth, f"match_kind {{ {', '.join(m.name for m in d.members)} }}")
        elif isinstance(d, ast.ExternDeclaration):
            self.emit(depth, f"{ann}extern {d.name}{self.type_params(d.type_params)} {{")
            for m in d.methods:
                self.emit(depth + 1, self.prototype(m) + ";")
            self.emit(depth, "}")
        elif isinstance(d, ast.ExternFunctionDeclaration):
            proto = d.prototype
            rest = self.prototype(proto, with_annotations=proto.annotations is not d.annotations)
            self.emit(depth, f"{ann}extern {rest};")
        elif isinstance(d, ast.MethodPrototype):
            self.emit(depth, self.prototype(d) + ";")
        elif isinstance(d, ast.ParserTypeDeclaration | ast.ControlTypeDeclaration | ast.PackageTypeDeclaration):
            kw = {ast.ParserTypeDeclaration: "parser", ast.ControlTypeDeclaration: "control",
                  ast.PackageTypeDeclaration: "package"}[type(d)]
            self.emit(depth, f"{ann}{kw} {d.name}{self.type_params(d.type_params)}{self.params(d.params)};")
        elif isinstance(d, ast.ParserDeclaration):
            self.emit(depth, f"{ann}parser {d.name}{self.type_params(d.type_params)}{self.params(d.params)}"
                             f"{self.params(d.constructor_params) if d.constructor_params else ''} {{")
            for local in d.locals:
                self.declaration(local, depth + 1)
            for state in d.states:
                self.state(state, depth + 1)
            self.emit(depth, "}")
        elif isinstance(d, ast.ControlDeclaration):
            self.emit(depth, f"{ann}control {d.name}{self.type_params(d.type_params)}{self.params(d.params)}"
                             f"{self.params(d.constructor_params) if d.constructor_params else ''} {{")
            for local in d.locals:
                self.declaration(local, depth + 1)
            self.block(d.body, depth + 1, "apply ")
            self.emit(depth, "}")
        elif isinstance(d, ast.FunctionDeclaration):
            head = (f"{ann}{self.type(d.return_type)} {d.name}{self.type_params(d.type_params)}"
                    f"{self.params(d.params)} ")
            self.block(d.body, depth, head)
        elif isinstance(d, ast.ActionDeclaration):
            self.block(d.body, depth, f"{ann}action {d.name}{self.params(d.params)} ")
        elif isinstance(d, ast.TableDeclaration):
            self.emit(depth, f"{ann}table {d.name} {{")
            for p in d.properties:
                self.table_property(p, depth + 1)
            self.emit(depth, "}")
        elif isinstance(d, ast.ValueSetDeclaration):
            self.emit(depth, f"{ann}value_set<{self.type(d.element_type)}>({self.expr(d.size)}) {d.name};")
        else:
            raise TypeError(f"cannot print declaration {type(d).__name__}")

    def prototype(self, m: ast.MethodPrototype, with_annotations: bool = True) -> str:
        """An extern method, constructor, abstract method or extern function head."""
        ann = self.annotations(m.annotations) if with_annotations else ""
        if m.is_constructor:
            return f"{ann}{m.name}{self.params(m.params)}"
        abstract = "abstract " if m.is_abstract else ""
        ret = self.type(m.return_type) if m.return_type is not None else "void"
        return f"{ann}{abstract}{ret} {m.name}{self.type_params(m.type_params)}{self.params(m.params)}"

    def state(self, s: ast.ParserState, depth: int) -> None:
        """`state name { statements transition ... }`."""
        self.emit(depth, f"{self.annotations(s.annotations)}state {s.name} {{")
        for c in s.components:
            self.statement(c, depth + 1)
        t = s.transition
        if isinstance(t, ast.SelectExpression):
            self.emit(depth + 1, f"transition select({', '.join(self.expr(e) for e in t.exprs)}) {{")
            for case in t.cases:
                self.emit(depth + 2, f"{self.keyset(case.keyset)} : {case.state.name};")
            self.emit(depth + 1, "}")
        elif t is not None:
            self.emit(depth + 1, f"transition {self.expr(t)};")
        self.emit(depth, "}")

    def table_property(self, p: ast.TableProperty, depth: int) -> None:
        """One table property."""
        head = f"{self.annotations(p.annotations)}{'const ' if p.is_const else ''}{p.name} = "
        if isinstance(p, ast.KeyProperty):
            self.emit(depth, head + "{")
            for k in p.elements:
                tail = "".join(" " + self.annotation(a) for a in k.annotations)
                self.emit(depth + 1, f"{self.expr(k.expr)} : {k.match_kind.name}{tail};")
            self.emit(depth, "}")
        elif isinstance(p, ast.ActionsProperty):
            self.emit(depth, head + "{")
            for a in p.actions:
                self.emit(depth + 1, f"{self.annotations(a.annotations)}{self.expr(a.expr)};")
            self.emit(depth, "}")
        elif isinstance(p, ast.EntriesProperty):
            self.emit(depth, head + "{")
            for e in p.entries:
                self.emit(depth + 1, self.entry(e, p.is_const))
            self.emit(depth, "}")
        elif isinstance(p, ast.DefaultActionProperty):
            self.emit(depth, f"{head}{self.expr(p.action.expr)};")
        elif isinstance(p, ast.ValueProperty):
            self.emit(depth, f"{head}{self.expr(p.value)};")
        else:
            raise TypeError(f"cannot print table property {type(p).__name__}")

    def entry(self, e: ast.Entry, table_const: bool) -> str:
        """One entry: `[const] [priority = N :] keyset : action annotations;`."""
        const = "const " if e.is_const and not table_const else ""
        priority = ""
        if e.priority is not None:
            value = self.expr(e.priority)
            priority = f"priority = {value if isinstance(e.priority, ast.IntLiteral) else f'({value})'} : "
        keys = e.keyset
        keyset = self.keyset(keys[0]) if len(keys) == 1 else \
            self.keyset(ast.ListExpression(pos=e.pos, components=keys))
        tail = "".join(" " + self.annotation(a) for a in e.annotations)
        return f"{const}{priority}{keyset} : {self.expr(e.action.expr)}{tail};"


def _ends_open(stmt: ast.Node) -> bool:
    """Whether `stmt` ends in an `if` without `else` (which an `else` after it would join)."""
    if isinstance(stmt, ast.IfStatement):
        return stmt.otherwise is None or _ends_open(stmt.otherwise)
    if isinstance(stmt, ast.ForStatement | ast.ForInStatement):
        return _ends_open(stmt.body)
    return False


def _escape(path: str) -> str:
    """A file name inside a line marker's quotes."""
    return path.replace("\\", "\\\\").replace('"', '\\"')


def _tokens(tokens: list[Token]) -> str:
    """Annotation body tokens, adjacent ones kept adjacent (`>>` stays a shift)."""
    out = []
    prev: Token | None = None
    for tok in tokens:
        if prev is not None and not (tok.start == prev.end and tok.start != 0):
            out.append(" ")
        out.append(tok.text)
        prev = tok
    return "".join(out)
