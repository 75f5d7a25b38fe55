"""The `pipelines` section: a control's apply body as a graph of tables and conditionals.

Runs of plain statements become synthesized actions applied by one-action hidden tables,
direct action calls become `tbl_<action>` tables, `if` becomes `node_N` conditionals,
`t.apply().hit/miss` and `switch (t.apply().action_run)` become `next_tables` choices, and
sub-controls are inlined with their parameters bound to the caller's arguments
(formats.md §1.16).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .actions import Actions, DeclaredIn
from .aliasing import copied_parameters, syntax_children
from .context import (
    Context,
    annotation_int,
    annotation_string,
    annotation_text,
    field_width,
    strip_type,
    unsupported,
)
from .expressions import ExpressionLowering, to_bool
from .hexstr import hexstr
from .model import CpActionProfile, CpActionRef, CpEntry, CpParam, CpTable
from .stateful import Stateful, cp_name, int_arg
from .statements import StatementLowering, has_call, statement_name
from .storage import Env, ExprRef, FieldRef, HeaderRef, InstanceRef

DEFAULT_TABLE_SIZE = 1024

Setter = Callable[[str | None], None]


@dataclass(frozen=True)
class TableRef:
    """A table declaration bound in the environment of the control instance declaring it."""

    decl: ast.TableDeclaration
    name: str
    env: Env


def key_text(e: ast.Expression) -> str:
    """p4c's default key name: the key expression as written (`hdr.ipv4.dstAddr`)."""
    if isinstance(e, ast.PathExpression):
        return e.name
    if isinstance(e, ast.MemberExpression):
        return f"{key_text(e.expr)}.{e.member}"
    if isinstance(e, ast.IndexExpression):
        return f"{key_text(e.expr)}[{key_text(e.index)}]"
    if isinstance(e, ast.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, ast.SliceExpression):
        return f"{key_text(e.expr)}[{key_text(e.hi)}:{key_text(e.lo)}]"
    if isinstance(e, ast.BinaryExpression):
        return f"{key_text(e.left)} {e.op} {key_text(e.right)}"
    if isinstance(e, ast.MethodCallExpression):
        callee = key_text(e.callee)
        if callee.endswith(".isValid"):
            return callee[: -len(".isValid")] + ".$valid$"
        return callee + "()"
    return "key"


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


def applied_first(cond: ast.Expression) -> list[ast.MemberExpression]:
    """The `t.apply().hit|miss` terms of a condition, in evaluation order.

    Each must sit where the condition always evaluates it (not right of `&&`/`||`, not in a
    branch of `?:`): the table is applied before the condition is computed.
    """
    found: list[ast.MemberExpression] = []

    def walk(e: Any, always: bool) -> None:
        if isinstance(e, ast.MemberExpression) and e.member in ("hit", "miss") and isinstance(
            e.expr, ast.MethodCallExpression
        ) and e.expr.call is not None and e.expr.call.kind == ast.CallKind.TABLE_APPLY:
            if not always:
                raise CompileError(
                    e.pos,
                    f"t.apply().{e.member} where evaluation may skip it (right of && or ||, or in "
                    "a branch of ?:) is not supported by the BMv2 back end",
                )
            found.append(e)
            return
        if isinstance(e, ast.BinaryExpression) and e.op in ("&&", "||"):
            walk(e.left, always)
            walk(e.right, False)
        elif isinstance(e, ast.TernaryExpression):
            walk(e.cond, always)
            walk(e.then, False)
            walk(e.otherwise, False)
        else:
            for child in syntax_children(e):
                walk(child, always)

    walk(cond, True)
    return found


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

    # ---------------------------------------------------------------- graph plumbing

    def link(self, name: str | None) -> None:
        """Point every dangling edge at node `name`."""
        for setter in self.pending:
            setter(name)
        self.pending = []

    def lower(self, name: str, decl: ast.ControlDeclaration, env: Env) -> dict:
        """The pipeline JSON object called `name` for control `decl`."""
        self.pending = [self._set_init]
        self.control_body(decl, env)
        self.link(None)
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
                members = applied_first(s)
                if members:
                    # `b = t.apply().hit;`: apply the table first, as p4c lifts the result
                    # into a temporary; the statement then reads the temporary.
                    self.flush(run, env)
                    run = []
                    overrides = {id(m): self.table_result(m, env) for m in members}
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
        # `t.apply().hit` inside a larger condition: apply the table first and record the
        # result in a temporary, as p4c does; the condition then reads the temporary.
        reader = StatementLowering(self.ctx, self.externs)
        for member in applied_first(s.cond):
            reader.exprs.overrides[id(member)] = self.table_result(member, env)
        # Value-returning calls in the condition (`r.read(i) == 0`, functions) run in a
        # synthesized action first; the conditional reads their temporaries.
        cond = to_bool(reader.exprs.value(s.cond, env))
        if reader.out.prims:
            name, action_id = self.actions.hidden_primitives(
                reader.out.resolve(), self.ctx.hidden_action_base(s.cond))
            self.hidden_table(f"tbl_{name}", name, action_id, [], s.cond)
        set_true, set_false = self.conditional(cond, s.cond)
        self.branches(s, env, returns, set_true, set_false)

    def table_result(self, member: ast.MemberExpression, env: Env) -> FieldRef:
        """Apply the table of `t.apply().hit|miss`; a bool temporary says whether that held."""
        result = self.ctx.temporary(t.Bool())
        table = self.apply_table(member.expr, env)
        table["base_default_next"] = None
        table["next_tables"] = {"__HIT__": None, "__MISS__": None}
        exits: list[Setter] = []
        for key in ("__HIT__", "__MISS__"):
            writer = StatementLowering(self.ctx, self.externs)
            writer.store(result, {"type": "bool", "value": (key == "__HIT__") == (member.member == "hit")}, member)
            name, action_id = self.actions.hidden_primitives(
                writer.out.resolve(), self.ctx.hidden_action_base(member))
            self.pending = [self._next_setter(table, key)]
            self.hidden_table(f"tbl_{name}", name, action_id, [], member)
            exits += self.pending
        self.pending = exits
        return result

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
            name, _ = self.actions.get(ref, env)
            return name
        raise CompileError(label.pos, "switch labels must name actions of the table")

    def inline_control(self, e: ast.MethodCallExpression, env: Env) -> None:
        """Inline a sub-control instance's locals and body."""
        inst = env.lookup(e.call.target)
        if not isinstance(inst, InstanceRef) or not isinstance(inst.p4type, ast.ControlDeclaration):
            raise unsupported(e, "applying this control")
        sub = inst.p4type
        pos = inst.decl.pos
        sub_env = Env(parent=env, prefix=inst.name, anchor=(*env.anchor, (pos.line, pos.column)))
        copies = {id(p) for p in copied_parameters(sub.params, e.call.args, [sub.body, sub.locals])}
        pairs = []
        for param, arg in zip(sub.params, e.call.args, strict=False):
            if arg is None:
                continue
            if id(param) in copies:
                storage = self.ctx.local_storage(self.ctx.local_name(param.name), param.p4type or arg.type)
                pairs.append((storage, arg))
                sub_env.bind(param, storage)
            elif isinstance(arg, ast.DontCareExpression):
                sub_env.bind(param, self.exprs.resolve(arg, env))
            else:
                sub_env.bind(param, ExprRef(arg, env))
        if pairs:
            name, action_id = self.actions.hidden_copies(pairs, env, self.ctx.hidden_action_base(e))
            self.hidden_table(f"tbl_{name}", name, action_id, [], e)
        self.control_body(sub, sub_env)

    # ---------------------------------------------------------------- tables

    def apply_table(self, call: ast.MethodCallExpression, env: Env) -> dict:
        """Create the table node a `t.apply()` call applies."""
        decl = call.call.target
        tref = env.lookup(decl)
        if not isinstance(tref, TableRef):
            raise unsupported(call, "applying this table")
        if any(t_["name"] == tref.name for t_ in self.tables):
            raise CompileError(call.pos, f"table {tref.name} is applied more than once")
        builder = TableBuilder(self, tref)
        computed = builder.computed_keys()
        if computed:
            base = self.ctx.hidden_action_base(computed[0][1])
            name, action_id = self.actions.hidden_assignments(computed, tref.env, base)
            self.hidden_table(f"tbl_{name}", name, action_id, [], computed[0][1])
        self.add_node(tref.name)
        table = builder.build()
        self.tables.append(table)
        return table


class TableBuilder:
    """One user table: JSON object and P4Info entry."""

    def __init__(self, control: ControlLowering, tref: TableRef) -> None:
        self.control = control
        self.ctx = control.ctx
        self.tref = tref
        self.decl = tref.decl
        self.env = tref.env
        self.exprs = control.exprs
        self.key_overrides: dict[int, FieldRef] = {}
        self.cp_entries: list[CpEntry] = []

    def computed_keys(self) -> list[tuple[FieldRef, ast.Expression]]:
        """Key expressions BMv2 cannot match directly, each given a `key_N` scalar to compute."""
        prop = self.prop("key")
        pairs: list[tuple[FieldRef, ast.Expression]] = []
        for element in prop.elements if prop is not None else []:
            try:
                self.key_target(element.expr)
            except CompileError:
                p4type = element.expr.type
                if not isinstance(strip_type(p4type), t.Bits | t.Bool):
                    raise
                temp = self.ctx.scalar(self.ctx.unique_scalar("key"), p4type)
                self.key_overrides[id(element.expr)] = temp
                pairs.append((temp, element.expr))
        return pairs

    def prop(self, name: str) -> Any:
        """A table property or None."""
        return self.decl.property(name)

    def value_prop(self, name: str) -> ast.Expression | None:
        """The expression of a `name = value` property, or None."""
        p = self.prop(name)
        return p.value if isinstance(p, ast.ValueProperty) else None

    def build(self) -> dict:
        """The table JSON (also records the table in the control-plane model)."""
        name = self.tref.name
        keys, cp_keys, selector_inputs, key_widths = self.keys()
        kinds = {k["match_type"] for k in keys}
        lpm_count = sum(1 for k in keys if k["match_type"] == "lpm")
        if lpm_count > 1:
            raise CompileError(self.decl.pos, f"table {name} has more than one lpm key")
        match_type = "range" if "range" in kinds else "ternary" if "ternary" in kinds else \
            "lpm" if "lpm" in kinds else "exact"
        action_names, action_ids, cp_refs = self.action_list()
        default_name, default_id, default_args, default_const, cp_default = self.default_action(
            action_names, action_ids, cp_refs)
        entries = self.entries(key_widths)
        size_expr = self.value_prop("size")
        size = int_arg(size_expr) if size_expr is not None else None
        max_size = size if size is not None else len(entries) if entries else DEFAULT_TABLE_SIZE
        implementation = self.implementation(selector_inputs)
        counters = self.value_prop("counters")
        meters = self.value_prop("meters")
        timeout = self.value_prop("support_timeout")
        support_timeout = bool(timeout.const_value) if timeout is not None else False
        direct_resources: list[tuple[str, str]] = []
        if counters is not None:
            counter = self.direct_instance(counters, self.control.stateful.direct_counters, "counters")
            counter["binding"] = name
            direct_resources.append(("counter", counter["name"]))
            for cp_counter in self.ctx.cp.direct_counters:
                if cp_counter.name == counter["name"]:
                    cp_counter.table = name
        meter_name = None
        if meters is not None:
            meter = self.direct_instance(meters, self.control.stateful.direct_meters, "meters")
            meter["binding"] = name
            meter["size"] = max_size
            meter["result_target"] = self.control.externs.direct_meter_targets.get(meter["name"])
            meter_name = meter["name"]
            direct_resources.append(("meter", meter_name))
            for cp_meter in self.ctx.cp.direct_meters:
                if cp_meter.name == meter_name:
                    cp_meter.table = name
                    cp_meter.size = max_size
        table: dict = {"name": name, "id": self.ctx.next_id("tables")}
        info = self.ctx.source_info(self.decl)
        if info is not None:
            table["source_info"] = info
        table["key"] = keys
        table["match_type"] = match_type
        if implementation is None:
            table["type"] = "simple"
        else:
            table["type"] = "indirect_ws" if implementation["selector"] is not None else "indirect"
            table["action_profile"] = implementation["name"]
        table.update(
            {
                "max_size": max_size,
                "with_counters": counters is not None,
                "support_timeout": support_timeout,
                "direct_meters": meter_name,
                "action_ids": action_ids,
                "actions": action_names,
                "base_default_next": None,
                "next_tables": {a: None for a in action_names},
            }
        )
        if implementation is None:
            table["default_entry"] = {
                "action_id": default_id,
                "action_const": default_const,
                "action_data": [hexstr(v) for v in default_args],
                "action_entry_const": default_const,
            }
        elif self.prop("default_action") is not None:
            self.ctx.warn(self.decl.pos, f"{name}: default_action of an indirect table is ignored by BMv2")
        if entries:
            table["entries"] = entries
        entries_prop = self.prop("entries")
        pos = self.decl.pos
        self.ctx.table_order[name] = (self.control.actions.control_rank, (*self.env.anchor, (pos.line, pos.column)))
        cp_tables = self.ctx.cp.tables if ast.find_annotation(self.decl.annotations, "hidden") is None else []
        cp_tables.append(
            CpTable(
                name=name,
                keys=cp_keys,
                actions=cp_refs,
                size=size if size else DEFAULT_TABLE_SIZE,
                explicit_id=annotation_int(self.decl.annotations, "id"),
                const_default=default_const,
                default_action=default_name,
                explicit_default=self.prop("default_action") is not None,
                default_args=cp_default,
                implementation=implementation["name"] if implementation else None,
                direct_resources=direct_resources,
                support_timeout=support_timeout,
                is_const=bool(entries_prop is not None and entries_prop.is_const),
                has_initial_entries=bool(entries),
                entries=self.cp_entries,
            )
        )
        if any(kind in ("ternary", "range", "optional") for kind, _ in key_widths):
            for rank, cp_entry in enumerate(self.cp_entries):
                if not cp_entry.priority:
                    cp_entry.priority = len(self.cp_entries) - rank
        if implementation is not None:
            for profile in self.ctx.cp.action_profiles:
                if profile.name == implementation["name"]:
                    profile.tables.append(name)
        return table

    def keys(self) -> tuple[list[dict], list[CpParam], list[dict], list[tuple[str, int]]]:
        """JSON keys, P4Info match fields, selector inputs and (kind, width) per key."""
        keys: list[dict] = []
        cp_keys: list[CpParam] = []
        selector_inputs: list[dict] = []
        widths: list[tuple[str, int]] = []
        prop = self.prop("key")
        for element in (prop.elements if prop is not None else []):
            kind = element.match_kind.name
            name = annotation_string(element.annotations, "name") or key_text(element.expr)
            target, mask, width = self.key_target(element.expr)
            cp_keys.append(CpParam(name, width, annotation_int(element.annotations, "id"), kind))
            if kind == "selector":
                selector_inputs.append({"type": "field", "value": target})
                continue
            if kind not in ("exact", "lpm", "ternary", "range", "optional"):
                raise CompileError(element.pos, f"match kind {kind} is not supported by BMv2")
            keys.append({"match_type": "ternary" if kind == "optional" else kind, "name": name,
                         "target": target, "mask": mask})
            widths.append((kind, width))
        return keys, cp_keys, selector_inputs, widths

    def key_target(self, e: ast.Expression) -> tuple[list[str], str | None, int]:
        """`[header, field]`, mask and width of one key expression."""
        override = self.key_overrides.get(id(e))
        if override is not None:
            ftype = strip_type(override.p4type)
            return [override.header, override.field], None, 1 if isinstance(ftype, t.Bool) else field_width(ftype)
        if isinstance(e, ast.BinaryExpression) and e.op == "&" and e.right.const_value is not None:
            target, _, width = self.key_target(e.left)
            return target, hexstr(int(e.right.const_value), width), width
        if isinstance(e, ast.SliceExpression):
            target, _, width = self.key_target(e.expr)
            hi = self.exprs.constant_int(e.hi)
            lo = self.exprs.constant_int(e.lo)
            mask = ((1 << (hi - lo + 1)) - 1) << lo
            return target, hexstr(mask, width), hi - lo + 1
        if isinstance(e, ast.MethodCallExpression) and e.call is not None and e.call.builtin == "isValid":
            header = self.exprs.resolve(e.call.receiver, self.env)
            if isinstance(header, HeaderRef):
                return [header.name, "$valid$"], None, 1
        binding = self.exprs.resolve(e, self.env)
        if isinstance(binding, FieldRef):
            ftype = strip_type(binding.p4type)
            width = 1 if isinstance(ftype, t.Bool) else field_width(ftype)
            return [binding.header, binding.field], None, width
        raise unsupported(e, "this table key expression (BMv2 keys must be fields)")

    def action_list(self) -> tuple[list[str], list[int], list[CpActionRef]]:
        """Names, ids and P4Info refs of the table's actions (NoAction added as p4c does)."""
        names: list[str] = []
        ids: list[int] = []
        refs: list[CpActionRef] = []
        prop = self.prop("actions")
        for ref in (prop.actions if prop is not None else []):
            decl = ref.ref if ref.ref is not None else getattr(ref.expr, "ref", None)
            if not isinstance(decl, ast.ActionDeclaration):
                raise CompileError(ref.pos, "table actions must name actions")
            name, action_id = self.get_action(decl, ref)
            names.append(name)
            ids.append(action_id)
            annotations = [annotation_text(a) for a in ref.annotations]
            scope = "DEFAULT_ONLY" if "@defaultonly" in annotations else \
                "TABLE_ONLY" if "@tableonly" in annotations else "TABLE_AND_DEFAULT"
            refs.append(CpActionRef(name, scope, annotations))
        if self.prop("default_action") is None and "NoAction" not in names:
            noaction = self.ctx.noaction
            if noaction is None:
                raise CompileError(self.decl.pos, "NoAction is not declared (include core.p4)")
            name, action_id = self.control.actions.get(noaction, self.env)
            names.append(name)
            ids.append(action_id)
            refs.append(CpActionRef(name, "DEFAULT_ONLY", ["@defaultonly"]))
        return names, ids, refs

    def default_action(self, names: list[str], ids: list[int], refs: list[CpActionRef]) -> tuple:
        """(name, id, args, const, P4Info args) of the default action."""
        prop = self.prop("default_action")
        if prop is None:
            noaction = self.ctx.noaction
            name, action_id = self.control.actions.get(noaction, self.env)
            return name, action_id, [], False, []
        ref = prop.action
        decl = ref.ref if ref.ref is not None else getattr(ref.expr, "ref", None)
        if decl is None and isinstance(ref.expr, ast.MethodCallExpression):
            decl = ref.expr.call.target if ref.expr.call is not None else None
        if not isinstance(decl, ast.ActionDeclaration):
            raise CompileError(prop.pos, "default_action must name an action")
        name, action_id = self.get_action(decl, ref)
        args = self.action_args(ref)
        data_params = [p for p in decl.params if p.direction == ast.Direction.NONE]
        cp_args = []
        for position, (param, value) in enumerate(zip(data_params, args, strict=False), start=1):
            ptype = strip_type(param.p4type or param.type_node.resolved)
            width = 1 if isinstance(ptype, t.Bool) else field_width(ptype)
            cp_args.append((annotation_int(param.annotations, "id") or position, value, width))
        return name, action_id, args, bool(prop.is_const), cp_args

    @staticmethod
    def call_args(ref: ast.ActionRef) -> list[ast.Expression | None]:
        """Arguments of an action reference, one per parameter in declaration order."""
        if isinstance(ref.expr, ast.MethodCallExpression) and ref.expr.call is not None:
            return list(ref.expr.call.args)
        return [a.value for a in ref.args]

    def get_action(self, decl: ast.ActionDeclaration, ref: ast.ActionRef) -> tuple[str, int]:
        """JSON name and id of a referenced action, directional arguments bound."""
        return self.control.actions.get(decl, self.env, self.call_args(ref))

    def action_args(self, ref: ast.ActionRef) -> list[int]:
        """Constant action-data arguments of an action reference."""
        decl = ref.ref if ref.ref is not None else getattr(ref.expr, "ref", None)
        if decl is None and isinstance(ref.expr, ast.MethodCallExpression) and ref.expr.call is not None:
            decl = ref.expr.call.target
        args = self.call_args(ref)
        if isinstance(decl, ast.ActionDeclaration):
            args = [a for p, a in zip(decl.params, args, strict=False) if p.direction == ast.Direction.NONE]
        values = []
        for a in args:
            if a is None:
                continue
            value = a.const_value
            if isinstance(value, t.EnumValue):
                value = value.value
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, int):
                raise CompileError(a.pos, "action arguments here must be compile-time constants")
            values.append(value)
        return values

    def entries(self, widths: list[tuple[str, int]]) -> list[dict]:
        """`entries` from a (const) entries property."""
        prop = self.prop("entries")
        if prop is None:
            return []
        out: list[dict] = []
        for priority, entry in enumerate(prop.entries, start=1):
            keyset = entry.keyset
            if len(keyset) == 1 and isinstance(keyset[0], ast.ListExpression) and len(widths) > 1:
                keyset = keyset[0].components
            if len(keyset) == 1 and isinstance(keyset[0], ast.DefaultExpression | ast.DontCareExpression):
                keyset = keyset * len(widths)
            if len(keyset) != len(widths):
                raise CompileError(entry.pos, f"entry has {len(keyset)} keys, table has {len(widths)}")
            match_key = [self.entry_key(k, kind, width) for k, (kind, width) in zip(keyset, widths, strict=True)]
            decl = entry.action.ref if entry.action.ref is not None else getattr(entry.action.expr, "ref", None)
            if decl is None and isinstance(entry.action.expr, ast.MethodCallExpression):
                decl = entry.action.expr.call.target if entry.action.expr.call is not None else None
            action_name, action_id = self.get_action(decl, entry.action)
            args = self.action_args(entry.action)
            cp_entry = self.cp_entry(match_key, widths, decl, action_name, args)
            self.cp_entries.append(cp_entry)
            item: dict = {}
            info = self.ctx.source_info(entry)
            if info is not None:
                item["source_info"] = info
            explicit = entry.priority.const_value if entry.priority is not None else None
            if explicit is None:
                explicit = annotation_int(entry.annotations, "priority")
            if explicit is not None:
                cp_entry.priority = int(explicit)
            item.update(
                {
                    "match_key": match_key,
                    "action_entry": {"action_id": action_id, "action_data": [hexstr(v) for v in args]},
                    "priority": int(explicit) if explicit is not None else priority,
                }
            )
            out.append(item)
        return out

    def cp_entry(self, match_key: list[dict], widths: list[tuple[str, int]], decl: ast.ActionDeclaration,
                 action: str, args: list[int]) -> CpEntry:
        """The P4Runtime view of one entry: wildcard fields omitted, values as integers."""
        matches = []
        for position, (key, (kind, width)) in enumerate(zip(match_key, widths, strict=True), start=1):
            if kind == "exact":
                matches.append((position, kind, (int(key["key"], 16),), width))
            elif kind in ("ternary", "optional"):
                mask = int(key["mask"], 16)
                if mask:
                    matches.append((position, kind, (int(key["key"], 16), mask), width))
            elif kind == "lpm":
                if key["prefix_length"]:
                    matches.append((position, kind, (int(key["key"], 16), key["prefix_length"]), width))
            elif kind == "range":
                low, high = int(key["start"], 16), int(key["end"], 16)
                if (low, high) != (0, (1 << width) - 1):
                    matches.append((position, kind, (low, high), width))
        data_params = [p for p in decl.params if p.direction == ast.Direction.NONE]
        cp_args = []
        for position, (param, value) in enumerate(zip(data_params, args, strict=False), start=1):
            ptype = strip_type(param.p4type or param.type_node.resolved)
            width = 1 if isinstance(ptype, t.Bool) else field_width(ptype)
            cp_args.append((annotation_int(param.annotations, "id") or position, value, width))
        return CpEntry(matches, action, cp_args, 0)

    def entry_key(self, k: ast.Expression, kind: str, width: int) -> dict:
        """One `match_key` element of a const entry."""
        full = (1 << width) - 1
        wildcard = isinstance(k, ast.DefaultExpression | ast.DontCareExpression)

        def const(e: ast.Expression) -> int:
            value = e.const_value
            if isinstance(value, t.EnumValue):
                value = value.value
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, int):
                raise CompileError(e.pos, "entry keys must be compile-time constants")
            return value & full

        if kind == "exact":
            if wildcard:
                raise CompileError(k.pos, "exact keys cannot be wildcards")
            if isinstance(k, ast.MaskExpression | ast.RangeExpression):
                raise CompileError(k.pos, "an exact key takes a single value, not a mask or a range")
            return {"match_type": "exact", "key": hexstr(const(k), width)}
        if kind in ("ternary", "optional"):
            if wildcard:
                value, mask = 0, 0
            elif isinstance(k, ast.MaskExpression):
                mask = const(k.mask)
                value = const(k.value) & mask
            else:
                value, mask = const(k), full
            return {"match_type": "ternary", "key": hexstr(value, width), "mask": hexstr(mask, width)}
        if kind == "lpm":
            if wildcard:
                return {"match_type": "lpm", "key": hexstr(0, width), "prefix_length": 0}
            if isinstance(k, ast.MaskExpression):
                mask = const(k.mask)
                length = bin(mask).count("1")
                return {"match_type": "lpm", "key": hexstr(const(k.value) & mask, width), "prefix_length": length}
            return {"match_type": "lpm", "key": hexstr(const(k), width), "prefix_length": width}
        if kind == "range":
            if wildcard:
                low, high = 0, full
            elif isinstance(k, ast.RangeExpression):
                low, high = const(k.low), const(k.high)
            else:
                low = high = const(k)
            return {"match_type": "range", "start": hexstr(low, width), "end": hexstr(high, width)}
        raise CompileError(k.pos, f"match kind {kind} in entries is not supported")

    def direct_instance(self, e: ast.Expression, known: dict[str, dict], what: str) -> dict:
        """The direct counter/meter array a `counters`/`meters` property names."""
        binding = self.exprs.resolve(e, self.env)
        if not isinstance(binding, InstanceRef) or binding.name not in known:
            raise CompileError(e.pos, f"{what} must name a direct_{what[:-1]} instance")
        return known[binding.name]

    def implementation(self, selector_inputs: list[dict]) -> dict | None:
        """The action profile/selector of an indirect table (emitted once per pipeline)."""
        e = self.value_prop("implementation")
        if e is None:
            if selector_inputs:
                raise CompileError(self.decl.pos, "selector keys need an action_selector implementation")
            return None
        stateful = self.control.stateful
        if isinstance(e, ast.MethodCallExpression):
            name = f"{self.tref.name}_{'selector' if 'selector' in key_text(e.callee) else 'profile'}"
            fake = ast.Instantiation(pos=e.pos, name=name, type_node=ast.NamedType(pos=e.pos, name=key_text(e.callee)),
                                     args=e.args)
            handler = stateful.new_action_selector if "selector" in key_text(e.callee) else stateful.new_action_profile
            handler(fake, name)
        else:
            binding = self.exprs.resolve(e, self.env)
            if not isinstance(binding, InstanceRef) or binding.name not in stateful.profiles:
                raise CompileError(e.pos, "implementation must be an action_profile or action_selector")
            name = binding.name
        profile = stateful.profiles[name]
        existing = next((p for p in self.control.action_profiles if p["name"] == name), None)
        if existing is None:
            existing = {"name": name, "id": self.ctx.next_id("action_profiles")}
            info = self.ctx.source_info(profile["decl"])
            if info is not None:
                existing["source_info"] = info
            existing["max_size"] = profile["size"]
            if profile["selector"] is not None:
                existing["selector"] = {"algo": profile["selector"], "input": selector_inputs}
            self.control.action_profiles.append(existing)
            self.ctx.cp.action_profiles.append(
                CpActionProfile(name, [], profile["selector"] is not None, profile["size"],
                                annotation_int(getattr(profile["decl"], "annotations", []), "id"))
            )
        return {"name": name, "selector": profile["selector"]}
