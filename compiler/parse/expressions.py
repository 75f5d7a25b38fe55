"""Expressions: operators by precedence, casts, postfix access and calls, literals."""

from __future__ import annotations

from .. import ast
from .stream import Backtrack, describe
from .types import BASE_TYPE_KEYWORDS, TypeParser

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


class ExpressionParser(TypeParser):
    """Expressions and call arguments."""

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

    def _parenthesised(self) -> ast.Expression:
        self.expect("(")
        e = self.expression()
        self.expect(")")
        return e

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
            raise Backtrack()
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
        raise self.error(f"syntax error: expected an expression, found {describe(tok)}")

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
