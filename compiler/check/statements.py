"""Statements: assignments, calls, control flow, local declarations."""

from __future__ import annotations

from .. import ast
from ..types import (
    ActionEnum,
    Bits,
    Enum,
    Error,
    Extern,
    InfInt,
    ListLiteral,
    ListOf,
    P4Type,
    PackageType,
    SerEnum,
    Specialized,
    Stack,
    String,
    Void,
)
from .calls import CallChecker
from .lvalues import lvalue_problem
from .members import Method


class StatementChecker(CallChecker):
    """Checks statements in actions, functions, control apply blocks and parser states."""

    def check_statement(self, s: ast.Node) -> None:
        """Check one statement (or local declaration) in the current scope."""
        handler = getattr(self, f"_s_{type(s).__name__}", None)
        if handler is None:
            raise self.fail(s.pos, f"a {_describe(s)} is not allowed here")
        handler(s)

    def check_block(self, block: ast.BlockStatement, new_scope: bool = True) -> None:
        """Check a block's components in order, in a scope of its own."""
        if not new_scope:
            for c in block.components:
                self.check_statement(c)
            return
        with self.scoped():
            for c in block.components:
                self.check_statement(c)

    def _s_BlockStatement(self, s: ast.BlockStatement) -> None:
        self.check_block(s)

    def _s_EmptyStatement(self, s: ast.EmptyStatement) -> None:
        return

    def _s_AssignmentStatement(self, s: ast.AssignmentStatement) -> None:
        left_t = self.check_expr(s.left)
        problem = lvalue_problem(s.left)
        if problem:
            raise self.fail(s.left.pos, f"cannot assign: {problem}")
        if s.op is not None:
            combined = ast.BinaryExpression(pos=s.pos, op=s.op, left=s.left, right=s.right)
            self.check_expr(combined)
            if combined.type != left_t:
                raise self.fail(s.pos, f"'{s.op}=' would change the type of {left_t}")
            return
        self.check_expr(s.right)
        self.value_type(s.right.type, s.right, "the right-hand side")
        self.coerce(s.right, left_t, "assignment")

    def _s_MethodCallStatement(self, s: ast.MethodCallStatement) -> None:
        self.check_expr(s.call)

    def _s_IfStatement(self, s: ast.IfStatement) -> None:
        self.expect_bool(s.cond, "an if condition")
        with self.scoped():
            self.check_statement(s.then)
        if s.otherwise is not None:
            with self.scoped():
                self.check_statement(s.otherwise)

    def _s_ReturnStatement(self, s: ast.ReturnStatement) -> None:
        if self.where.kind == "parser" or self.where.kind == "state":
            raise self.fail(s.pos, "return is not allowed in a parser")
        want = self.where.return_type
        if s.value is None:
            if want is not None and not isinstance(want, Void):
                raise self.fail(s.pos, f"return needs a value of type {want}")
            return
        if want is None or isinstance(want, Void):
            raise self.fail(
                s.value.pos, "return with a value is only allowed in a function with a result"
            )
        self.check_expr(s.value)
        self.coerce(s.value, want, "return value")

    def _s_ExitStatement(self, s: ast.ExitStatement) -> None:
        if self.where.kind in ("parser", "state", "function"):
            raise self.fail(s.pos, f"exit is not allowed in a {self.where.kind}")

    def _s_BreakStatement(self, s: ast.BreakStatement) -> None:
        if self.where.loop_depth == 0:
            raise self.fail(s.pos, "break outside a for loop")

    def _s_ContinueStatement(self, s: ast.ContinueStatement) -> None:
        if self.where.loop_depth == 0:
            raise self.fail(s.pos, "continue outside a for loop")

    def _s_VariableDeclaration(self, s: ast.VariableDeclaration) -> None:
        t = self.resolve_type(s.type_node)
        if isinstance(t, Extern | Specialized | PackageType | Void | InfInt | String | Method):
            raise self.fail(s.type_node.pos, f"a variable cannot have type {t}")
        if s.init is not None:
            self.check_expr(s.init)
            self.value_type(s.init.type, s.init, "the initialiser")
            self.coerce(s.init, t, f"initialiser of '{s.name}'")
        s.p4type = t
        self.declare_local(s)

    def declare_local(self, s: ast.Declaration) -> None:
        """Declare a local; shadowing an outer variable, constant or parameter is legal but warned."""
        outer = self.scope.lookup(s.name)
        if (
            outer is not None
            and s.name not in self.scope.names
            and isinstance(outer, ast.VariableDeclaration | ast.ConstantDeclaration | ast.Parameter)
        ):
            self.warn(s.pos, f"'{s.name}' shadows the declaration at {outer.pos}")
        self.scope.declare(s.name, s, s.pos)

    def _s_ConstantDeclaration(self, s: ast.ConstantDeclaration) -> None:
        self.check_constant(s)

    def check_constant(self, s: ast.ConstantDeclaration) -> None:
        """`const T name = value;`: the value must fold to a constant of type T."""
        t = self.resolve_type(s.type_node)
        self.check_expr(s.value)
        self.coerce(s.value, t, f"constant '{s.name}'")
        if s.value.const_value is None:
            raise self.fail(
                s.value.pos, f"the value of constant '{s.name}' is not a compile-time constant"
            )
        s.p4type = t
        self.declare_local(s)

    def _s_Instantiation(self, s: ast.Instantiation) -> None:
        raise self.fail(
            s.pos, f"instance '{s.name}' must be declared in a control or parser, not in a block"
        )

    def _s_SwitchStatement(self, s: ast.SwitchStatement) -> None:
        t = self.check_expr(s.expr)
        if isinstance(t, ActionEnum):
            self._switch_on_actions(s, t)
        elif isinstance(t, Bits | Enum | SerEnum | Error):
            self._switch_on_values(s, t)
        else:
            raise self.fail(s.expr.pos, f"cannot switch on a value of type {t}")
        for i, case in enumerate(s.cases):
            if isinstance(case.label, ast.DefaultExpression):
                if i != len(s.cases) - 1:
                    raise self.fail(case.pos, "default must be the last switch label")
                case.label.type = t
            if case.body is not None:
                self.check_block(case.body)
        if s.cases and s.cases[-1].body is None:
            raise self.fail(
                s.cases[-1].pos,
                "the last switch label needs a block (no fall-through out of a switch)",
            )

    def _switch_on_actions(self, s: ast.SwitchStatement, t: ActionEnum) -> None:
        table = t.table.decl
        actions_prop = table.property("actions")
        names = {
            a.ref.name: a.ref
            for a in (actions_prop.actions if isinstance(actions_prop, ast.ActionsProperty) else [])
        }
        seen: set[str] = set()
        for case in s.cases:
            label = case.label
            if isinstance(label, ast.DefaultExpression):
                continue
            if not isinstance(label, ast.PathExpression) or label.name not in names:
                shown = label.name if isinstance(label, ast.PathExpression) else "this label"
                raise self.fail(label.pos, f"'{shown}' is not an action of table {table.name}")
            if label.name in seen:
                raise self.fail(label.pos, f"duplicate switch label '{label.name}'")
            seen.add(label.name)
            label.ref = names[label.name]
            label.type = t

    def _switch_on_values(self, s: ast.SwitchStatement, t: P4Type) -> None:
        seen: set[object] = set()
        for case in s.cases:
            label = case.label
            if isinstance(label, ast.DefaultExpression):
                continue
            self.check_expr(label)
            self.coerce(label, t, "switch label")
            if label.const_value is None:
                raise self.fail(label.pos, "a switch label must be a compile-time constant")
            if label.const_value in seen:
                raise self.fail(label.pos, "duplicate switch label")
            seen.add(label.const_value)

    def _s_ForStatement(self, s: ast.ForStatement) -> None:
        with self.scoped():
            for c in s.init:
                self.check_statement(c)
            if s.cond is not None:
                self.expect_bool(s.cond, "a for condition")
            self.where.loop_depth += 1
            try:
                for c in s.updates:
                    self.check_statement(c)
                with self.scoped():
                    self.check_statement(s.body)
            finally:
                self.where.loop_depth -= 1

    def _s_ForInStatement(self, s: ast.ForInStatement) -> None:
        with self.scoped():
            element = self._collection_element(s.collection)
            if s.decl is not None:
                t = self.resolve_type(s.decl.type_node)
                if element != t and not isinstance(element, InfInt):
                    raise self.fail(
                        s.decl.pos, f"loop variable of type {t} cannot range over {element}"
                    )
                s.decl.p4type = t
                self._fit_collection(s.collection, t)
                self.scope.declare(s.decl.name, s.decl, s.decl.pos)
            else:
                var_t = self.check_expr(s.var)
                problem = lvalue_problem(s.var)
                if problem:
                    raise self.fail(s.var.pos, f"loop variable: {problem}")
                self._fit_collection(s.collection, var_t)
            self.where.loop_depth += 1
            try:
                self.check_statement(s.body)
            finally:
                self.where.loop_depth -= 1

    def _collection_element(self, c: ast.Expression) -> P4Type:
        if isinstance(c, ast.RangeExpression):
            lt = self.check_expr(c.low)
            ht = self.check_expr(c.high)
            if isinstance(lt, InfInt):
                return ht
            return lt
        t = self.check_expr(c)
        if isinstance(t, Stack):
            return t.element
        if isinstance(t, ListOf):
            return t.element
        if isinstance(t, ListLiteral):
            sized = [e for e in t.elements if not isinstance(e, InfInt)]
            return sized[0] if sized else InfInt()
        raise self.fail(c.pos, f"cannot iterate over a value of type {t}")

    def _fit_collection(self, c: ast.Expression, t: P4Type) -> None:
        """Give a range's bounds or a list's elements the loop variable's type."""
        if isinstance(c, ast.RangeExpression):
            self.coerce(c.low, t, "loop range")
            self.coerce(c.high, t, "loop range")
        elif isinstance(c, ast.ListExpression):
            self.coerce(c, ListOf(t), "loop list")


def _describe(node: ast.Node) -> str:
    return (
        type(node)
        .__name__.replace("Declaration", " declaration")
        .replace("Statement", " statement")
        .lower()
    )
