"""Statements: blocks, assignments and calls, if, switch, for, return/exit."""

from __future__ import annotations

from .. import ast
from .expressions import ExpressionParser
from .stream import Backtrack, describe
from .types import BASE_TYPE_KEYWORDS

COMPOUND_ASSIGN = {
    "+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "<<=": "<<",
    "&=": "&", "|=": "|", "^=": "^", "|+|=": "|+|", "|-|=": "|-|",
}  # fmt: skip


class StatementParser(ExpressionParser):
    """Statements; local declarations among them come from the declaration parser."""

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
            raise self.error(f"syntax error: unexpected {describe(tok)} here")
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
            raise Backtrack()
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
            f"syntax error: expected '=' or a method call, found {describe(self.peek())}"
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
