"""The `pipelines` section: a control's apply body as a graph of tables and conditionals.

Runs of plain statements become synthesized actions applied by one-action hidden tables,
direct action calls become `tbl_<action>` tables, `if` becomes `node_N` conditionals,
`t.apply().hit/miss` and `switch (t.apply().action_run)` become `next_tables` choices, and
sub-controls are inlined with their parameters bound to the caller's arguments
(formats.md §1.16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .actions import Actions, DeclaredIn
from .aliasing import copied_parameters, syntax_children
from .context import (
    Context,
    strip_type,
    unsupported,
)
from .expressions import ExpressionLowering, to_bool
from .hexstr import hexstr
from .stateful import Stateful, cp_name
from .statements import StatementLowering, has_call, statement_name
from .storage import Env, ExprRef, FieldRef, InstanceRef, applied_instance
from .tables import DEFAULT_TABLE_SIZE, TableBuilder, TableRef

Setter = Callable[[str | None], None]


def table_apply_test(cond: ast.Expression) -> tuple[ast.MethodCallExpression, bool] | None:
    """(apply call, True when the condition means "hit") for `[!]t.apply().hit|miss`."""
    negate = False
    while isinstance(cond, ast.UnaryExpression) and cond.op == "!":
        negate = not negate
        cond = cond.operand
    if isinstance(cond, ast.MemberExpression) and cond.member in ("hit", "miss"):
        inner = cond.expr
        if isinstance(inner, ast.MethodCallExpression) and inner.call is not None and \
                inner.call.kind == ast.CallKind.TABLE_APPLY:
            hit = cond.member == "hit"
            return inner, hit != negate
    return None


def descendants(node: Any) -> list[Any]:
    """Every syntactic node under `node` (itself included)."""
    out: list[Any] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(syntax_children(n))
    return out


def table_test(e: Any) -> bool:
    """Whether `e` is `t.apply().hit` or `t.apply().miss`."""
    return isinstance(e, ast.MemberExpression) and e.member in ("hit", "miss") and isinstance(
        e.expr, ast.MethodCallExpression
    ) and e.expr.call is not None and e.expr.call.kind == ast.CallKind.TABLE_APPLY


def tests_in(node: Any) -> bool:
    """Whether `node` holds a `t.apply().hit|miss` term."""
    return any(table_test(n) for n in descendants(node))


def call_kind(s: Any) -> ast.CallKind | None:
    """The kind of call a method-call statement makes."""
    if isinstance(s, ast.MethodCallStatement) and s.call.call is not None:
        return s.call.call.kind
    return None


class ControlLowering:
    """Builds one pipeline object (`ingress` or `egress`)."""

    def __init__(self, ctx: Context, actions: Actions, stateful: Stateful, externs: Any) -> None:
        self.ctx = ctx
        self.actions = actions
        self.stateful = stateful
        self.externs = externs
        self.exprs = ExpressionLowering(ctx)
        self.tables: list[dict] = []
        self.conditionals: list[dict] = []
        self.action_profiles: list[dict] = []
        self.pending: list[Setter] = []
        self.init_table: str | None = None
        # Second and later applications of a table: (its node, this site's edges, the call).
        self.reapplied: list[tuple[dict, dict, ast.MethodCallExpression]] = []

    # ---------------------------------------------------------------- graph plumbing

    def link(self, name: str | None) -> None:
        """Point every dangling edge at node `name`."""
        for setter in self.pending:
            setter(name)
        self.pending = []

    def lower(self, name: str, decl: ast.ControlDeclaration, env: Env,
              epilogue: list[tuple[FieldRef, ast.Expression, Env]] = ()) -> dict:
        """The pipeline JSON object called `name` for control `decl`; `epilogue` values are
        stored into their temporaries after everything else (the checksum update's data)."""
        self.pending = [self._set_init]
        self.control_body(decl, env)
        if epilogue:
            writer = StatementLowering(self.ctx, self.externs)
            for target, expr, data_env in epilogue:
                writer.store(target, writer.exprs.value(expr, data_env), expr)
            self.primitives_node(writer.out.resolve(), epilogue[0][1])
        self.link(None)
        self.check_reapplied()
        pipeline: dict = {"name": name, "id": self.ctx.next_id("control")}
        info = self.ctx.source_info(decl)
        if info is not None:
            pipeline["source_info"] = info
        pipeline.update(
            {
                "init_table": self.init_table,
                "tables": self.tables,
                "action_profiles": self.action_profiles,
                "conditionals": self.conditionals,
            }
        )
        return pipeline

    def _set_init(self, name: str | None) -> None:
        """Setter for the pipeline's first node."""
        self.init_table = name

    # ---------------------------------------------------------------- controls

    def control_body(self, decl: ast.ControlDeclaration, env: Env) -> None:
        """Locals and apply body of a control (top level or inlined)."""
        init: list[Any] = []
        for local in decl.locals:
            if isinstance(local, ast.ActionDeclaration):
                env.bind(local, DeclaredIn(env))
            elif isinstance(local, ast.TableDeclaration):
                env.bind(local, TableRef(local, cp_name(local, env), env))
            elif isinstance(local, ast.Instantiation):
                self.stateful.instantiate(local, env)
            elif isinstance(local, ast.VariableDeclaration):
                storage = self.ctx.local_storage(self.ctx.local_name(local.name), local.p4type or local.type_node.resolved)
                env.bind(local, storage)
                if local.init is not None:
                    left = ast.PathExpression(pos=local.pos, name=local.name)
                    left.ref = local
                    left.type = local.p4type
                    init.append(ast.AssignmentStatement(pos=local.pos, left=left, right=local.init))
            elif isinstance(local, ast.ConstantDeclaration):
                continue
            else:
                raise unsupported(local, f"the control local {type(local).__name__}")
        returns: list[Setter] = []
        self.block(init + list(decl.body.components), env, returns)
        self.pending += returns

    def block(self, statements: list[Any], env: Env, returns: list[Setter]) -> bool:
        """Lower a statement list; True if it ended with `return`."""
        run: list[Any] = []
        for s in statements:
            if self.is_simple(s):
                if tests_in(s):
                    # `b = t.apply().hit;`: apply the table first, as p4c lifts the result
                    # into a temporary; the statement then reads the temporary.
                    self.flush(run, env)
                    run = []
                    overrides: dict[int, Any] = {}
                    self.lift_tests(s, env, overrides)
                    self.flush([s], env, overrides)
                    continue
                run.append(s)
                continue
            self.flush(run, env)
            run = []
            if self.compound(s, env, returns):
                return True
        self.flush(run, env)
        return False

    def is_simple(self, s: Any) -> bool:
        """Statements that go into synthesized actions."""
        if isinstance(s, ast.AssignmentStatement | ast.VariableDeclaration | ast.ConstantDeclaration
                      | ast.EmptyStatement | ast.ExitStatement):
            return True
        if isinstance(s, ast.ForStatement | ast.ForInStatement):
            # A loop that applies nothing runs inside a synthesized action (jumps, §1.15);
            # `return` would leave that action, not the control, so such loops stay out.
            return not any(
                isinstance(n, ast.ReturnStatement | ast.SwitchStatement) or (
                    isinstance(n, ast.MethodCallExpression) and n.call is not None
                    and n.call.kind in (ast.CallKind.TABLE_APPLY, ast.CallKind.CONTROL_APPLY))
                for n in descendants(s)
            )
        kind = call_kind(s)
        return kind is not None and kind not in (
            ast.CallKind.TABLE_APPLY, ast.CallKind.CONTROL_APPLY, ast.CallKind.ACTION)

    def flush(self, run: list[Any], env: Env, overrides: dict[int, Any] | None = None) -> None:
        """Turn a run of simple statements into a hidden action and table."""
        meaningful = [s for s in run if not isinstance(s, ast.EmptyStatement | ast.ConstantDeclaration)]
        if not meaningful:
            return
        name, action_id = self.actions.hidden(
            meaningful, env, self.ctx.hidden_action_base(meaningful[0]), overrides)
        self.hidden_table(f"tbl_{name}", name, action_id, [], meaningful[0])

    def compound(self, s: Any, env: Env, returns: list[Setter]) -> bool:
        """Statements that shape the graph; True for `return`."""
        if isinstance(s, ast.BlockStatement):
            return self.block(s.components, env.child(), returns)
        if isinstance(s, ast.ReturnStatement):
            returns.extend(self.pending)
            self.pending = []
            return True
        if isinstance(s, ast.IfStatement):
            self.if_statement(s, env, returns)
            return False
        if isinstance(s, ast.SwitchStatement):
            self.switch_statement(s, env, returns)
            return False
        kind = call_kind(s)
        if kind == ast.CallKind.TABLE_APPLY:
            table = self.apply_table(s.call, env)
            self.pending = [self._next_setter(table, a) for a in table["actions"]]
            self.pending.append(self._base_setter(table))
            return False
        if kind == ast.CallKind.ACTION:
            self.direct_action_call(s, env)
            return False
        if kind == ast.CallKind.CONTROL_APPLY:
            self.inline_control(s.call, env)
            return False
        if isinstance(s, ast.ForStatement | ast.ForInStatement):
            raise CompileError(
                s.pos,
                "a for loop that applies a table or a control, or returns, is not supported in a "
                "control's apply block by the BMv2 back end (a BMv2 table is applied once per pass)",
            )
        raise unsupported(s, statement_name(s).replace(" here", " in a control's apply block"))

    # ---------------------------------------------------------------- nodes

    def _next_setter(self, table: dict, action: str) -> Setter:
        """Setter filling `next_tables[action]`."""
        def setter(name: str | None) -> None:
            table["next_tables"][action] = name
        return setter

    def _base_setter(self, table: dict) -> Setter:
        """Setter filling `base_default_next`."""
        def setter(name: str | None) -> None:
            table["base_default_next"] = name
        return setter

    def add_node(self, name: str | None = None) -> str:
        """Consume one number of the shared CFG node counter; link pending edges to the node."""
        number = self.ctx.next_id("cfg_nodes")
        node = name or f"node_{number}"
        self.link(node)
        return node

    def hidden_table(self, base: str, action: str, action_id: int, data: list[str], node: Any) -> dict:
        """A keyless one-action table applying `action` as its constant default."""
        name = self.ctx.unique(base)
        self.add_node(name)
        table: dict = {"name": name, "id": self.ctx.next_id("tables")}
        info = self.ctx.source_info(node)
        if info is not None:
            table["source_info"] = info
        table.update(
            {
                "key": [],
                "match_type": "exact",
                "type": "simple",
                "max_size": DEFAULT_TABLE_SIZE,
                "with_counters": False,
                "support_timeout": False,
                "direct_meters": None,
                "action_ids": [action_id],
                "actions": [action],
                "base_default_next": None,
                "next_tables": {action: None},
                "default_entry": {
                    "action_id": action_id,
                    "action_const": True,
                    "action_data": data,
                    "action_entry_const": True,
                },
            }
        )
        self.tables.append(table)
        self.pending = [self._next_setter(table, action), self._base_setter(table)]
        return table

    def direct_action_call(self, s: ast.MethodCallStatement, env: Env) -> None:
        """`a(args);` in a control: `tbl_a` when the arguments are constants, else inlined."""
        call = s.call.call
        decl: ast.ActionDeclaration = call.target
        constant = all(
            p.direction == ast.Direction.NONE and a is not None and a.const_value is not None
            for p, a in zip(decl.params, call.args, strict=False)
        )
        if not constant:
            self.flush([s], env)
            return
        name, action_id = self.actions.get(decl, env)
        data = [hexstr(int(a.const_value)) for a in call.args]
        short = name.rsplit(".", 1)[-1]
        self.hidden_table(f"tbl_{short}", name, action_id, data, s)

    def if_statement(self, s: ast.IfStatement, env: Env, returns: list[Setter]) -> None:
        """A conditional node, or a table's hit/miss branches."""
        test = table_apply_test(s.cond)
        if test is not None:
            call, hit_is_true = test
            table = self.apply_table(call, env)
            table["base_default_next"] = None
            table["next_tables"] = {"__HIT__": None, "__MISS__": None}
            then_key, else_key = ("__HIT__", "__MISS__") if hit_is_true else ("__MISS__", "__HIT__")
            self.branches(s, env, returns, self._next_setter(table, then_key), self._next_setter(table, else_key))
            return
        set_true, set_false = self.conditional(self.condition(s.cond, env), s.cond)
        self.branches(s, env, returns, set_true, set_false)

    def condition(self, cond: ast.Expression, env: Env) -> dict:
        """A conditional node's expression for `cond`, after what it needs computed first."""
        # `t.apply().hit` inside a larger condition: apply the table first and record the
        # result in a temporary, as p4c does; the condition then reads the temporary.
        reader = StatementLowering(self.ctx, self.externs)
        self.lift_tests(cond, env, reader.exprs.overrides)
        # Value-returning calls in the condition (`r.read(i) == 0`, functions) run in a
        # synthesized action first; the conditional reads their temporaries.
        value = to_bool(reader.exprs.value(cond, env))
        if reader.out.prims:
            self.primitives_node(reader.out.resolve(), cond)
        return value

    def lift_tests(self, node: Any, env: Env, overrides: dict[int, Any]) -> None:
        """Apply the tables of the `t.apply().hit|miss` terms under `node`, in evaluation
        order, and map each term in `overrides` to the temporary that then holds its value.

        A term that evaluation may skip (right of `&&`/`||`, in a branch of `?:`) makes its
        whole `&&`, `||` or `?:` a branch of the graph computing that subexpression into a
        temporary, so the table is applied only when the program evaluates the term.
        """
        if table_test(node):
            overrides[id(node)] = self.table_result(node, env)
        elif isinstance(node, ast.BinaryExpression) and node.op in ("&&", "||") and tests_in(node.right):
            overrides[id(node)] = self.short_circuit(node, env)
        elif isinstance(node, ast.TernaryExpression) and (tests_in(node.then) or tests_in(node.otherwise)):
            overrides[id(node)] = self.choice(node, env)
        else:
            for child in syntax_children(node):
                self.lift_tests(child, env, overrides)

    def table_result(self, member: ast.MemberExpression, env: Env) -> FieldRef:
        """Apply the table of `t.apply().hit|miss`; a bool temporary says whether that held."""
        result = self.ctx.temporary(t.Bool())
        table = self.apply_table(member.expr, env)
        table["base_default_next"] = None
        table["next_tables"] = {"__HIT__": None, "__MISS__": None}
        exits: list[Setter] = []
        for key in ("__HIT__", "__MISS__"):
            self.pending = [self._next_setter(table, key)]
            self.store_node(result, {"type": "bool", "value": (key == "__HIT__") == (member.member == "hit")},
                            member)
            exits += self.pending
        self.pending = exits
        return result

    def short_circuit(self, e: ast.BinaryExpression, env: Env) -> FieldRef:
        """`a && b` / `a || b` whose `b` applies a table: a bool temporary set on two branches."""
        result = self.ctx.temporary(t.Bool())
        set_true, set_false = self.conditional(self.condition(e.left, env), e.left)
        evaluate, decided = (set_true, set_false) if e.op == "&&" else (set_false, set_true)
        self.pending = [evaluate]
        self.value_node(result, e.right, env)
        exits = self.pending
        self.pending = [decided]
        self.store_node(result, {"type": "bool", "value": e.op == "||"}, e)
        self.pending += exits
        return result

    def choice(self, e: ast.TernaryExpression, env: Env) -> FieldRef:
        """`c ? x : y` whose `x` or `y` applies a table: a temporary set on two branches."""
        if not isinstance(strip_type(e.type), t.Bits | t.Bool):
            raise unsupported(e, "?: of this type with t.apply().hit in a branch")
        result = self.ctx.temporary(e.type)
        set_true, set_false = self.conditional(self.condition(e.cond, env), e.cond)
        self.pending = [set_true]
        self.value_node(result, e.then, env)
        exits = self.pending
        self.pending = [set_false]
        self.value_node(result, e.otherwise, env)
        self.pending += exits
        return result

    def value_node(self, target: FieldRef, e: ast.Expression, env: Env) -> None:
        """Store the value of `e` into `target` in a synthesized action (its tables first)."""
        writer = StatementLowering(self.ctx, self.externs)
        self.lift_tests(e, env, writer.exprs.overrides)
        writer.store(target, writer.exprs.value(e, env), e)
        self.primitives_node(writer.out.resolve(), e)

    def store_node(self, target: FieldRef, value: dict, node: Any) -> None:
        """Store an operand into `target` in a synthesized action."""
        writer = StatementLowering(self.ctx, self.externs)
        writer.store(target, value, node)
        self.primitives_node(writer.out.resolve(), node)

    def primitives_node(self, primitives: list[dict], node: Any) -> None:
        """Already lowered primitives as a synthesized action, applied here by its hidden table."""
        name, action_id = self.actions.hidden_primitives(primitives, self.ctx.hidden_action_base(node))
        self.hidden_table(f"tbl_{name}", name, action_id, [], node)

    def conditional(self, cond: dict, node: Any) -> tuple[Setter, Setter]:
        """A `node_N` conditional on `cond`; returns setters for its true and false edges."""
        name = self.add_node()
        conditional: dict = {"name": name, "id": self.ctx.next_id("conditionals")}
        info = self.ctx.source_info(node)
        if info is not None:
            conditional["source_info"] = info
        conditional.update({"expression": cond, "true_next": None, "false_next": None})
        self.conditionals.append(conditional)

        def set_true(target: str | None) -> None:
            conditional["true_next"] = target

        def set_false(target: str | None) -> None:
            conditional["false_next"] = target

        return set_true, set_false

    def value_switch(self, s: ast.SwitchStatement, env: Env, returns: list[Setter]) -> None:
        """`switch (expr)` on a value: a chain of conditionals, one per case with a body."""
        if has_call(s.expr):
            # Every case tests the value: compute it once, in a synthesized action.
            value = self.ctx.temporary(s.expr.type)
            name, action_id = self.actions.hidden_assignments([(value, s.expr)], env,
                                                              self.ctx.hidden_action_base(s.expr))
            self.hidden_table(f"tbl_{name}", name, action_id, [], s.expr)
            self.exprs.overrides[id(s.expr)] = value
        exits: list[Setter] = []
        labels: list[ast.Expression] = []
        default_body: ast.BlockStatement | None = None
        for case in s.cases:
            if isinstance(case.label, ast.DefaultExpression):
                default_body = case.body if case.body is not None else ast.BlockStatement(pos=case.pos)
                continue
            labels.append(case.label)
            if case.body is None:
                continue
            cond = self.exprs.switch_condition(s.expr, labels, env)
            set_true, set_false = self.conditional(cond, case)
            self.pending = [set_true]
            self.block(case.body.components, env.child(), returns)
            exits += self.pending
            self.pending = [set_false]
            labels = []
        if default_body is not None:
            self.block(default_body.components, env.child(), returns)
        self.pending = exits + self.pending

    def branches(self, s: ast.IfStatement, env: Env, returns: list[Setter], then_in: Setter, else_in: Setter) -> None:
        """Lower both branches of an `if`; their exits join after it."""
        self.pending = [then_in]
        self.branch(s.then, env, returns)
        exits = self.pending
        self.pending = [else_in]
        if s.otherwise is not None:
            self.branch(s.otherwise, env, returns)
        self.pending = exits + self.pending

    def branch(self, s: Any, env: Env, returns: list[Setter]) -> None:
        """One branch of an `if` or a switch case."""
        statements = s.components if isinstance(s, ast.BlockStatement) else [s]
        self.block(statements, env.child(), returns)

    def switch_statement(self, s: ast.SwitchStatement, env: Env, returns: list[Setter]) -> None:
        """`switch (t.apply().action_run)`: one successor per action."""
        expr = s.expr
        if not (isinstance(expr, ast.MemberExpression) and expr.member == "action_run"
                and isinstance(expr.expr, ast.MethodCallExpression)):
            self.value_switch(s, env, returns)
            return
        table = self.apply_table(expr.expr, env)
        after: list[Setter] = [self._base_setter(table)]
        labelled: set[str] = set()
        exits: list[Setter] = []
        waiting: list[str] = []
        default_waiting = False
        for case in s.cases:
            if isinstance(case.label, ast.DefaultExpression):
                default_waiting = True
            else:
                action = self.case_action(case.label, table, env)
                labelled.add(action)
                waiting.append(action)
            if case.body is None:
                continue
            setters = [self._next_setter(table, a) for a in waiting]
            if default_waiting:
                setters += [self._deferred_default(table, labelled, waiting)]
            self.pending = setters
            self.block(case.body.components, env.child(), returns)
            exits += self.pending
            waiting = []
            default_waiting = False
        unlabelled = [a for a in table["actions"] if a not in labelled]
        if not any(isinstance(c.label, ast.DefaultExpression) for c in s.cases):
            after += [self._next_setter(table, a) for a in unlabelled]
        self.pending = exits + after

    def _deferred_default(self, table: dict, labelled: set[str], waiting: list[str]) -> Setter:
        """Setter for the `default:` case: every action no case names."""
        def setter(name: str | None) -> None:
            for action in table["actions"]:
                if action not in labelled:
                    table["next_tables"][action] = name
        return setter

    def case_action(self, label: ast.Expression, table: dict, env: Env) -> str:
        """JSON action name a switch label names."""
        ref = getattr(label, "ref", None)
        if isinstance(ref, ast.ActionDeclaration):
            return self.actions.name_of(ref, env)
        raise CompileError(label.pos, "switch labels must name actions of the table")

    def inline_control(self, e: ast.MethodCallExpression, env: Env) -> None:
        """Inline a sub-control instance's locals and body."""
        inst = applied_instance(e.call.target, env)
        if not isinstance(inst, InstanceRef) or not isinstance(inst.p4type, ast.ControlDeclaration):
            raise unsupported(e, "applying this control")
        sub = inst.p4type
        pos = inst.decl.pos
        sub_env = Env(parent=env, prefix=inst.name, anchor=(*env.anchor, (pos.line, pos.column)))
        for param, bound in inst.constructor:
            sub_env.bind(param, bound)
        copies = {id(p) for p in copied_parameters(sub.params, e.call.args, [sub.body, sub.locals])}
        # An argument computed by a call is evaluated once, at the call, into a local (copy-in).
        copies |= {
            id(p) for p, a in zip(sub.params, e.call.args, strict=False)
            if a is not None and p.direction not in (ast.Direction.OUT, ast.Direction.INOUT) and has_call(a)
        }
        # Copy-in and l-values whose indices call something are evaluated once, left to
        # right, in a synthesized action before the body (`c.apply(hdr.s[f()])` calls f once).
        writer = StatementLowering(self.ctx, self.externs)
        for param, arg in zip(sub.params, e.call.args, strict=False):
            if arg is None:
                continue
            if id(param) in copies:
                storage = self.ctx.local_storage(self.ctx.local_name(param.name), param.p4type or arg.type)
                writer.assign(storage, arg, env, arg)
                sub_env.bind(param, storage)
            elif isinstance(arg, ast.DontCareExpression):
                sub_env.bind(param, self.exprs.resolve(arg, env))
            elif param.direction in (ast.Direction.OUT, ast.Direction.INOUT) and has_call(arg):
                sub_env.bind(param, writer.exprs.resolve(arg, env))
            else:
                sub_env.bind(param, ExprRef(arg, env))
        if writer.out.prims:
            self.primitives_node(writer.out.resolve(), e)
        self.control_body(sub, sub_env)

    # ---------------------------------------------------------------- tables

    def apply_table(self, call: ast.MethodCallExpression, env: Env) -> dict:
        """Create the table node a `t.apply()` call applies."""
        decl = call.call.target
        tref = env.lookup(decl)
        if not isinstance(tref, TableRef):
            raise unsupported(call, "applying this table")
        first = next((t_ for t_ in self.tables if t_["name"] == tref.name), None)
        builder = TableBuilder(self, tref)
        computed = builder.computed_keys()
        if first is not None:
            return self.reapply(first, call, bool(computed))
        if computed:
            # A key that applies another table (`t1.apply().hit`) applies it first, here.
            overrides: dict[int, Any] = {}
            for _, expr in computed:
                self.lift_tests(expr, tref.env, overrides)
            base = self.ctx.hidden_action_base(computed[0][1])
            name, action_id = self.actions.hidden_assignments(computed, tref.env, base, overrides)
            self.hidden_table(f"tbl_{name}", name, action_id, [], computed[0][1])
        self.add_node(tref.name)
        table = builder.build()
        self.tables.append(table)
        return table


    def reapply(self, table: dict, call: ast.MethodCallExpression, computed_keys: bool) -> dict:
        """A second `t.apply()` of one table: the same JSON node, reached from here too.

        BMv2 has one node per table, so, as p4c-bm2-ss checks, every application must
        continue to the same successors; the returned copy collects this site's edges for
        `check_reapplied` to compare once the pipeline is linked.
        """
        if computed_keys:
            raise unsupported(call, "applying a table with computed keys more than once")
        self.add_node(table["name"])
        shadow = {
            "name": table["name"],
            "actions": table["actions"],
            "base_default_next": None,
            "next_tables": dict.fromkeys(table["actions"]),
        }
        self.reapplied.append((table, shadow, call))
        return shadow

    def check_reapplied(self) -> None:
        """Each table applied from several places has one set of successors and no cycle."""
        for table, shadow, call in self.reapplied:
            if (table["next_tables"], table["base_default_next"]) != (
                shadow["next_tables"], shadow["base_default_next"]
            ):
                raise CompileError(
                    call.pos,
                    f"table {table['name']} is applied in places that continue differently; "
                    "BMv2 has one node per table (p4c-bm2-ss: the table has multiple successors)",
                )
        if self.reapplied:
            self._check_acyclic()

    def _check_acyclic(self) -> None:
        """No path leads from a table back to itself (a BMv2 pipeline is a DAG)."""
        edges: dict[str, list[str]] = {}
        for table in self.tables:
            edges[table["name"]] = [n for n in [*table["next_tables"].values(), table["base_default_next"]] if n]
        for cond in self.conditionals:
            edges[cond["name"]] = [n for n in (cond["true_next"], cond["false_next"]) if n]
        done: set[str] = set()

        def visit(node: str, path: set[str]) -> None:
            if node in path:
                pos = next((c.pos for tb, _, c in self.reapplied if tb["name"] == node), None)
                raise CompileError(pos, f"table {node} is reached again after it is applied")
            if node in done:
                return
            path.add(node)
            for nxt in edges.get(node, []):
                visit(nxt, path)
            path.discard(node)
            done.add(node)

        for node in edges:
            visit(node, set())
