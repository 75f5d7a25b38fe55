"""Statements to BMv2 primitives: actions, synthesized control actions and parser ops.

Inside actions, `if`/`return`/`exit` become `_jump`/`_jump_if_zero` with absolute targets
(formats.md §1.15); actions called from actions are inlined with their parameters bound to
the caller's arguments. In parsers the same statements become `set`/`verify`/wrapped
`primitive` parser ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .aliasing import copied_out_parameters, copied_parameters, syntax_children
from .context import Context, strip_type, unsupported
from .expressions import (
    DynamicElement,
    DynamicField,
    ExpressionLowering,
    StackLastField,
    StackMember,
    const_operand,
    expr_op,
    is_bool,
    primitive_arg,
    to_bool,
    to_data,
)
from .hexstr import hexstr
from .storage import (
    Env,
    ExprRef,
    FieldRef,
    HeaderRef,
    RuntimeDataRef,
    StackRef,
    StructRef,
    UnionRef,
    header_leaves,
)


def has_call(e: Any) -> bool:
    """Whether expression `e` contains a function or extern call (evaluated where it is read)."""
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.MethodCallExpression) and node.call is not None and node.call.kind in (
            ast.CallKind.FUNCTION, ast.CallKind.EXTERN_METHOD, ast.CallKind.EXTERN_FUNCTION
        ):
            return True
        stack.extend(syntax_children(node))
    return False


def is_struct_instance(binding: Any) -> bool:
    """A struct-typed local kept as a metadata header instance."""
    return isinstance(binding, HeaderRef) and isinstance(binding.p4type, t.Struct)


def struct_fields(binding: Any) -> dict[str, Any]:
    """Field name -> binding of a struct value, however it is stored."""
    if isinstance(binding, HeaderRef):
        return {name: binding.member(name) for name, _ in binding.p4type.fields}
    if isinstance(binding, StructRef):
        return binding.fields
    raise CompileError(None, "a struct value is required here")


# Passes a for-in loop may unroll into: BMv2 actions hold every pass's primitives.
MAX_UNROLLED = 256

STATEMENT_NAMES = {
    "ForStatement": "a for loop",
    "ForInStatement": "a for-in loop",
    "BreakStatement": "break outside a loop",
    "ContinueStatement": "continue outside a loop",
    "SwitchStatement": "a switch statement",
    "ReturnStatement": "return",
    "ExitStatement": "exit",
}


def statement_name(s: Any) -> str:
    """How error messages name a statement kind."""
    kind = type(s).__name__
    return STATEMENT_NAMES.get(kind, f"the statement {kind}") + " here"


@dataclass
class Label:
    """A jump target inside one action's primitive list."""

    target: int | None = None


@dataclass
class Frame:
    """One action body being lowered (the outermost action or an inlined callee)."""

    end: Label
    outermost: bool
    depth: int = 0
    # Where an inlined function's `return value;` stores the value (None outside functions).
    result: Any = None


@dataclass
class PrimitiveList:
    """Primitives of one action (or ops of one parse state) with pending jump labels."""

    prims: list[dict] = field(default_factory=list)
    jumps: list[tuple[dict, Label, list]] = field(default_factory=list)

    def place(self, label: Label) -> None:
        """Make `label` point at the next primitive."""
        label.target = len(self.prims)

    def resolve(self) -> list[dict]:
        """Append each jump's target as its last parameter and return the primitives."""
        for prim, label, params in self.jumps:
            target = len(self.prims) if label.target is None else label.target
            prim["parameters"] = [*params, {"type": "hexstr", "value": hexstr(target)}]
        self.jumps.clear()
        return self.prims


class StatementLowering:
    """Lowers statement lists into a `PrimitiveList` (action mode) or parser ops."""

    def __init__(self, ctx: Context, externs: Any, in_parser: bool = False) -> None:
        self.ctx = ctx
        self.externs = externs
        self.in_parser = in_parser
        self.exprs = ExpressionLowering(ctx, in_parser)
        self.exprs.inline_call = self.call_result
        self.exprs.save = self.saved
        if not in_parser:
            self.exprs.short_circuit = self.short_circuit
        self.out = PrimitiveList()
        self.loops: list[tuple[Label, Label]] = []
        # Replaced by the action's own end label in lower_action/lower_statements.
        self._outermost_end = Label()

    # ---------------------------------------------------------------- emission

    def emit(self, op: str, params: list[dict], node: Any) -> None:
        """Emit one primitive (wrapped as a parser `primitive` op inside parsers)."""
        if self.in_parser:
            self.out.prims.append(
                {"parameters": [{"op": op, "parameters": params}], "op": "primitive"}
            )
            return
        prim: dict = {"op": op, "parameters": params}
        info = self.ctx.source_info(node)
        if info is not None:
            prim["source_info"] = info
        self.out.prims.append(prim)

    def emit_parser_op(self, op: str, params: list[dict]) -> None:
        """Emit a native parser op (`extract`, `extract_VL`, `set`, `verify`, `advance`).

        Operands take the encodings BMv2's loader reads for each op: `extract_VL`'s length
        is always an `expression` wrapper around the value, and `set`'s source and
        `advance`'s amount wrap an operator node or a `stack_field` the same way (BMv2 reads
        them directly only when they are fields, constants or, for `set`, lookaheads).
        """
        params = [self.hoist_lookaheads(p) if p.get("type") == "expression" else p for p in params]
        if op == "set" and params[0].get("type") != "field":
            # BMv2's parser `set` writes only plain fields; `s.last.f` and `s[i].f` go
            # through the `assign` primitive, which takes those l-values.
            self.out.prims.append(
                {
                    "parameters": [
                        {
                            "op": "assign",
                            "parameters": [
                                primitive_arg(params[0]),
                                primitive_arg(self.hoist_lookaheads(params[1])),
                            ],
                        }
                    ],
                    "op": "primitive",
                }
            )
            return
        if op == "extract_VL":
            params[1] = {"type": "expression", "value": params[1]}
        elif op == "set":
            params[1] = primitive_arg(params[1])
        elif op == "advance":
            params[0] = primitive_arg(params[0])
        self.out.prims.append({"parameters": params, "op": op})

    def hoist_lookaheads(self, operand: dict) -> dict:
        """Move lookaheads out of expressions into `tmp` fields: BMv2 reads them only via `set`."""
        if operand.get("type") == "lookahead":
            width = operand["value"][1]
            temp = self.ctx.temporary(t.Bits(width))
            self.out.prims.append({"parameters": [temp.operand(), operand], "op": "set"})
            return temp.operand()
        if operand.get("type") != "expression":
            return operand
        value = dict(operand["value"])
        for key in ("left", "right", "cond"):
            child = value.get(key)
            if isinstance(child, dict):
                value[key] = self.hoist_lookaheads(child)
        return {"type": "expression", "value": value}

    def jump(self, label: Label, node: Any, cond: dict | None = None) -> None:
        """`_jump` to `label`, or `_jump_if_zero(cond)` when `cond` is given."""
        if self.in_parser:
            raise unsupported(node, "control flow inside a parser state")
        prim: dict = {"op": "_jump" if cond is None else "_jump_if_zero"}
        info = self.ctx.source_info(node)
        if info is not None:
            prim["source_info"] = info
        params = [] if cond is None else [primitive_arg(expr_op("b2d", None, cond))]
        self.out.prims.append(prim)
        self.out.jumps.append((prim, label, params))

    # ---------------------------------------------------------------- statements

    def block(self, statements: list[Any], env: Env, frame: Frame) -> bool:
        """Lower statements in order; True when a top-level `return`/`exit` ended the body."""
        scope = env.child()
        for stmt in statements:
            if self.statement(stmt, scope, frame):
                return True
        return False

    def statement(self, s: Any, env: Env, frame: Frame) -> bool:
        """Lower one statement; True when control never falls through it at top level."""
        if isinstance(s, ast.BlockStatement):
            return self.block(s.components, env, frame)
        if isinstance(s, ast.EmptyStatement):
            return False
        if isinstance(s, ast.VariableDeclaration):
            storage = self.ctx.local_storage(self.ctx.local_name(s.name), s.p4type or s.type_node.resolved)
            env.bind(s, storage)
            if s.init is not None:
                self.assign(storage, s.init, env, s)
            return False
        if isinstance(s, ast.ConstantDeclaration):
            return False
        if isinstance(s, ast.AssignmentStatement):
            self.assignment(s, env)
            return False
        if isinstance(s, ast.MethodCallStatement):
            self.call(s.call, env, frame, s)
            return False
        if isinstance(s, ast.IfStatement):
            return self.if_statement(s, env, frame)
        if isinstance(s, ast.ReturnStatement):
            if s.value is not None:
                if frame.result is None:
                    raise unsupported(s, "return with a value")
                self.assign(frame.result, s.value, env, s)
            if frame.depth == 0 and (frame.outermost or self.in_parser):
                return True
            self.jump(frame.end, s)
            return frame.depth == 0
        if isinstance(s, ast.ExitStatement):
            if self.in_parser:
                raise unsupported(s, "exit inside a parser")
            # Egress stops at `exit`: the checksum update's computed data is computed first.
            for target, expr, data_env in self.ctx.checksum_data:
                self.store(target, self.exprs.value(expr, data_env), expr)
            self.emit("exit", [], s)
            if frame.outermost and frame.depth == 0:
                return True
            self.jump(self.outermost_end, s)
            return frame.depth == 0
        if isinstance(s, ast.SwitchStatement):
            self.switch_statement(s, env, frame)
            return False
        if isinstance(s, ast.ForStatement):
            self.for_statement(s, env, frame)
            return False
        if isinstance(s, ast.ForInStatement):
            self.for_in_statement(s, env, frame)
            return False
        if isinstance(s, ast.BreakStatement | ast.ContinueStatement) and self.loops:
            end, update = self.loops[-1]
            self.jump(end if isinstance(s, ast.BreakStatement) else update, s)
            return False
        raise unsupported(s, statement_name(s))

    def if_statement(self, s: ast.IfStatement, env: Env, frame: Frame) -> bool:
        """`if` inside an action: `_jump_if_zero` over the then-branch."""
        cond = to_bool(self.exprs.value(s.cond, env))
        else_label = Label()
        self.jump(else_label, s, cond)
        frame.depth += 1
        self.statement(s.then, env.child(), frame)
        if s.otherwise is not None:
            end_label = Label()
            self.jump(end_label, s)
            self.out.place(else_label)
            self.statement(s.otherwise, env.child(), frame)
            self.out.place(end_label)
        else:
            self.out.place(else_label)
        frame.depth -= 1
        return False

    def for_statement(self, s: ast.ForStatement, env: Env, frame: Frame) -> None:
        """`for (init; cond; updates) body` inside an action, as p4c lowers it with jumps."""
        scope = env.child()
        for init in s.init:
            self.statement(init, scope, frame)
        cond_label, update, end = Label(), Label(), Label()
        self.out.place(cond_label)
        if s.cond is not None:
            self.jump(end, s, to_bool(self.exprs.value(s.cond, scope)))
        frame.depth += 1
        self.loops.append((end, update))
        self.statement(s.body, scope.child(), frame)
        self.loops.pop()
        self.out.place(update)
        for step in s.updates:
            self.statement(step, scope, frame)
        frame.depth -= 1
        self.jump(cond_label, s)
        self.out.place(end)

    def for_in_statement(self, s: ast.ForInStatement, env: Env, frame: Frame) -> None:
        """`for (x in a .. b)` / `for (x in {...})` over constants: unrolled, one pass per value.

        Unrolling keeps the loop variable's type exact (a counting loop up to the type's
        largest value would never end); `continue` jumps to the next pass, `break` past all.
        """
        collection = s.collection
        if isinstance(collection, ast.RangeExpression):
            low, high = self.exprs.constant_int(collection.low), self.exprs.constant_int(collection.high)
            values: list[Any] = list(range(low, high + 1))
        elif isinstance(collection, ast.ListExpression):
            values = [c.const_value for c in collection.components]
            if any(v is None for v in values):
                raise unsupported(s, "a for-in loop over values that are not compile-time constants")
        else:
            raise unsupported(s, "a for-in loop over anything but a constant range or list")
        if len(values) > MAX_UNROLLED:
            raise CompileError(s.pos, f"a for-in loop of {len(values)} passes is more than the "
                                      f"{MAX_UNROLLED} the BMv2 back end unrolls")
        scope = env.child()
        if s.decl is not None:
            variable = self.ctx.local_storage(self.ctx.local_name(s.decl.name), s.decl.p4type or s.decl.type_node.resolved)
            scope.bind(s.decl, variable)
            p4type = s.decl.p4type or s.decl.type_node.resolved
        else:
            variable = self.exprs.resolve(s.var, env)
            p4type = s.var.type
        end = Label()
        frame.depth += 1
        for value in values:
            self.store(variable, const_operand(value, p4type, self.ctx), s)
            following = Label()
            self.loops.append((end, following))
            self.statement(s.body, scope.child(), frame)
            self.loops.pop()
            self.out.place(following)
        frame.depth -= 1
        self.out.place(end)

    def switch_statement(self, s: ast.SwitchStatement, env: Env, frame: Frame) -> None:
        """`switch (expr)` inside an action: one `_jump_if_zero` per case with a body."""
        if isinstance(s.expr, ast.MemberExpression) and s.expr.member == "action_run":
            raise unsupported(s, "applying a table inside an action")
        end = Label()
        labels: list[ast.Expression] = []
        default_body = None
        frame.depth += 1
        for case in s.cases:
            if isinstance(case.label, ast.DefaultExpression):
                default_body = case.body
                continue
            labels.append(case.label)
            if case.body is None:
                continue
            skip = Label()
            self.jump(skip, case, self.exprs.switch_condition(s.expr, labels, env))
            self.block(case.body.components, env, frame)
            self.jump(end, case)
            self.out.place(skip)
            labels = []
        if default_body is not None:
            self.block(default_body.components, env, frame)
        self.out.place(end)
        frame.depth -= 1

    @property
    def outermost_end(self) -> Label:
        """The end label of the outermost action (target of `exit` in inlined code)."""
        return self._outermost_end

    def lower_action(self, decl: ast.ActionDeclaration, env: Env) -> list[dict]:
        """Primitives of an action whose parameters are already bound in `env`."""
        frame = Frame(end=Label(), outermost=True)
        self._outermost_end = frame.end
        self.block(decl.body.components, env, frame)
        self.out.place(frame.end)
        return self.out.resolve()

    def lower_statements(self, statements: list[Any], env: Env) -> list[dict]:
        """Primitives of a synthesized action made of control statements."""
        frame = Frame(end=Label(), outermost=True)
        self._outermost_end = frame.end
        for stmt in statements:
            if self.statement(stmt, env, frame):
                break
        self.out.place(frame.end)
        return self.out.resolve()

    def inline_action(
        self, decl: ast.ActionDeclaration | ast.FunctionDeclaration, args: list[Any], env: Env,
        frame: Frame, result: Any = None,
    ) -> None:
        """Inline an action or function body, binding its parameters to the arguments.

        `in` arguments the body could observe changing are copied in first; `out`/`inout`
        parameters write the caller's storage; a function's `return value;` stores into
        `result`.
        """
        # Callee bodies see the caller's scope, which encloses the callee's declaration.
        callee_env = Env(parent=env, prefix=env.prefix)
        copies = {id(p) for p in copied_parameters(decl.params, args, [decl.body])}
        # An argument computed by a call is evaluated once, into a local, as copy-in says.
        copies |= {
            id(p) for p, a in zip(decl.params, args, strict=False)
            if a is not None and p.direction not in (ast.Direction.OUT, ast.Direction.INOUT) and has_call(a)
        }
        copy_out = {id(p) for p in copied_out_parameters(decl.params, args, [decl.body])}
        # A slice has no storage of its own: its parameter is a local written back at the end.
        copy_out |= {
            id(p) for p, a in zip(decl.params, args, strict=False)
            if p.direction in (ast.Direction.OUT, ast.Direction.INOUT) and isinstance(a, ast.SliceExpression)
        }
        outputs: list[tuple[ast.Expression, Any]] = []
        pins: list[tuple[int, Any]] = []
        for param, arg in zip(decl.params, args, strict=False):
            if arg is None:
                raise CompileError(decl.pos, f"missing argument for parameter {param.name}")
            if param.direction in (ast.Direction.OUT, ast.Direction.INOUT):
                # `f(s[g()].x)`: the l-value is evaluated once, in argument order; copy-in,
                # the body and copy-out all use that element (spec 6.8).
                pins.extend(self.pin_lvalue(arg, env))
            if id(param) in copies or id(param) in copy_out:
                storage = self.ctx.local_storage(self.ctx.local_name(param.name), param.p4type or arg.type)
                if param.direction is not ast.Direction.OUT and not isinstance(arg, ast.DontCareExpression):
                    self.assign(storage, arg, env, arg)
                callee_env.bind(param, storage)
                if id(param) in copy_out and not isinstance(arg, ast.DontCareExpression):
                    outputs.append((arg, storage))
            else:
                callee_env.bind(param, ExprRef(arg, env))
        inner = Frame(end=Label(), outermost=False, depth=0, result=result)
        self.block(decl.body.components, callee_env, inner)
        self.out.place(inner.end)
        # Copy-out, left to right (spec 6.8): with `a(x, x)` the last parameter's value wins.
        for arg, storage in outputs:
            if isinstance(arg, ast.SliceExpression):
                self.store_slice(arg, storage.operand(), env, arg)
            else:
                self.copy_binding(self.exprs.resolve(arg, env), storage, arg)
        self.unpin(pins)

    def pin_lvalue(self, lvalue: ast.Expression, env: Env) -> list[tuple[int, Any]]:
        """Resolve l-value `lvalue` (slices: their base) now when its indices call something,
        so every later read or write of that expression reuses the element chosen here; the
        pin to hand to `unpin` (none when nothing is called)."""
        base = lvalue
        while isinstance(base, ast.SliceExpression):
            base = base.expr
        if isinstance(base, ast.DontCareExpression) or not self.exprs.calls_in(base):
            return []
        pin = (id(base), self.exprs.overrides.get(id(base)))
        self.exprs.overrides[id(base)] = self.exprs.resolve(base, env)
        return [pin]

    def unpin(self, pins: list[tuple[int, Any]]) -> None:
        """Undo `pin_lvalue`, latest first."""
        for key, previous in reversed(pins):
            if previous is None:
                del self.exprs.overrides[key]
            else:
                self.exprs.overrides[key] = previous

    def short_circuit(self, e: ast.BinaryExpression | ast.TernaryExpression, env: Env) -> FieldRef:
        """`a && b`, `a || b` or `c ? x : y` into a temporary, computing only what P4 evaluates."""
        if isinstance(e, ast.TernaryExpression):
            result = self.ctx.temporary(e.type)
            otherwise, end = Label(), Label()
            self.jump(otherwise, e, to_bool(self.exprs.value(e.cond, env)))
            self.store(result, self.exprs.value(e.then, env), e)
            self.jump(end, e)
            self.out.place(otherwise)
            self.store(result, self.exprs.value(e.otherwise, env), e)
            self.out.place(end)
            return result
        result = self.ctx.temporary(t.Bool())
        self.store(result, to_bool(self.exprs.value(e.left, env)), e)
        decided = Label()
        left = expr_op("d2b", None, result.operand())
        self.jump(decided, e, left if e.op == "&&" else expr_op("not", None, left))
        self.store(result, to_bool(self.exprs.value(e.right, env)), e)
        self.out.place(decided)
        return result

    def call_result(self, e: ast.MethodCallExpression, env: Env) -> Any:
        """The binding holding the value of call `e` used in an expression, computed first.

        Functions are inlined with their `return` storing into a new local; value-returning
        extern methods (`r.read(i)`) run into a temporary, as p4c lowers them.
        """
        p4type = e.type
        if isinstance(strip_type(p4type), t.Bits | t.Bool | t.Error | t.Enum):
            result = self.ctx.temporary(p4type)
        else:
            result = self.ctx.local_storage(self.ctx.local_name("retval"), p4type)
        call = e.call
        if call.kind == ast.CallKind.FUNCTION:
            self.inline_action(call.target, call.args, env, Frame(end=Label(), outermost=False), result)
        else:
            self.externs.value_call(self, e, env, result, e)
        return result

    # ---------------------------------------------------------------- assignment

    def assignment(self, s: ast.AssignmentStatement, env: Env) -> None:
        """`l = r` and compound assignments."""
        if s.op is not None:
            right = ast.BinaryExpression(pos=s.pos, op=s.op, left=s.left, right=s.right)
            right.type = s.left.type
            # `a[f()] op= b` evaluates its l-value once (p4c's SideEffectOrdering): the
            # element `f()` selects is both read and written.
            pins = self.pin_lvalue(s.left, env)
            self.assign_to(s.left, right, env, s)
            self.unpin(pins)
            return
        self.assign_to(s.left, s.right, env, s)

    def assign_to(self, left: ast.Expression, right: ast.Expression, env: Env, node: Any) -> None:
        """Assign to an l-value expression (slices become read-modify-write)."""
        if isinstance(left, ast.SliceExpression):
            self.store_slice(left, right, env, node)
            return
        target = self.index_before_right(self.exprs.resolve(left, env), left, right, env, node)
        self.assign(target, right, env, node)

    def store_slice(self, left: ast.SliceExpression, right: ast.Expression | dict, env: Env, node: Any) -> None:
        """`x[hi:lo] = right` (an expression, or an operand already computed) as a
        read-modify-write of `x`."""
        hi = self.exprs.constant_int(left.hi)
        lo = self.exprs.constant_int(left.lo)
        base = left.expr
        while isinstance(base, ast.SliceExpression):
            # `x[7:4][1:0]` is `x[5:4]`: bits of an inner slice count from its low end.
            offset = self.exprs.constant_int(base.lo)
            hi, lo, base = hi + offset, lo + offset, base.expr
        target = self.exprs.resolve(base, env)
        if not isinstance(right, dict):
            target = self.index_before_right(target, base, right, env, node)
        width = t.bit_width(strip_type(base.type))
        field_mask = ((1 << (hi - lo + 1)) - 1) << lo
        keep = ((1 << width) - 1) & ~field_mask
        current = self.exprs.binding_operand(target)
        value = to_data(right if isinstance(right, dict) else self.exprs.value(right, env))
        if lo:
            value = expr_op("<<", value, {"type": "hexstr", "value": hexstr(lo)})
        combined = expr_op(
            "|",
            expr_op("&", current, {"type": "hexstr", "value": hexstr(keep, width)}),
            expr_op("&", value, {"type": "hexstr", "value": hexstr(field_mask, width)}),
        )
        self.store(target, combined, node)

    def saved(self, value: dict, p4type: t.P4Type, node: Any) -> FieldRef:
        """A temporary holding `value` as it is now."""
        temp = self.ctx.temporary(p4type)
        self.store(temp, value, node)
        return temp

    def index_before_right(self, target: Any, left: ast.Expression, right: ast.Expression, env: Env,
                           node: Any) -> Any:
        """`s[i].f = g(i)`: the l-value, its run-time index included, is evaluated before the
        right side (spec §8.1), whose call may change `i`, so the index is copied first."""
        if not isinstance(target, DynamicElement | DynamicField) or not self.exprs.calls_in(right):
            return target
        # The index's type, from the syntax (a parameter bound to `s[i]` shows none: 32 bits).
        index_type: t.P4Type = t.Bits(32)
        node_ = left
        while node_ is not None:
            if isinstance(node_, ast.IndexExpression) and node_.index.const_value is None:
                index_type = node_.index.type
                break
            node_ = getattr(node_, "expr", None)
        frozen = self.saved(target.index, index_type, node)
        return replace(target, index=self.exprs.binding_operand(frozen))

    def assign(self, target: Any, right: ast.Expression, env: Env, node: Any) -> None:
        """Assign expression `right` to binding `target`."""
        if isinstance(target, HeaderRef | UnionRef | StackRef | StructRef | DynamicElement):
            call = right.call if isinstance(right, ast.MethodCallExpression) else None
            if call is not None and call.kind in (ast.CallKind.EXTERN_METHOD, ast.CallKind.EXTERN_FUNCTION):
                # `md.port = port_metadata_unpack<T>(pkt)`: the extern fills the composite.
                self.externs.value_call(self, right, env, target, node)
                return
            self.assign_composite(target, right, env, node)
            return
        if isinstance(strip_type(right.type), t.Varbit):
            # A varbit is copied with its length (assign_VL, as p4c writes it outside
            # parsers; in a parser state too, as a parser `primitive`).
            source = self.exprs.resolve(right, env)
            if not isinstance(target, FieldRef) or not isinstance(source, FieldRef):
                raise unsupported(node, "assigning a varbit value to or from this value")
            self.emit("assign_VL", [target.operand(), source.operand()], node)
            return
        call = right.call if isinstance(right, ast.MethodCallExpression) else None
        if call is not None and call.kind == ast.CallKind.EXTERN_METHOD and isinstance(target, FieldRef) \
                and self.exprs.computed_call(right):
            # `x = r.read(i)`: the extern writes x itself, no temporary.
            self.externs.value_call(self, right, env, target, node)
            return
        self.store(target, self.exprs.value(right, env), node)

    def store(self, target: Any, value: dict, node: Any) -> None:
        """Store a scalar operand into a field-like binding."""
        if isinstance(target, RuntimeDataRef | ExprRef) or target is None:
            raise unsupported(node, "assigning to an action parameter")
        if isinstance(target, FieldRef | StackLastField | DynamicField):
            lvalue = self.exprs.binding_operand(target)
        else:
            raise unsupported(node, "assigning to this value")
        value = to_data(value)
        if self.in_parser:
            self.emit_parser_op("set", [lvalue, value])
            return
        self.emit("assign", [primitive_arg(lvalue), primitive_arg(value)], node)

    def assign_composite(self, target: Any, right: ast.Expression, env: Env, node: Any) -> None:
        """Header, union, stack and struct assignment."""
        if isinstance(right, ast.CastExpression) and isinstance(
            right.expr, ast.InvalidExpression | ast.ListExpression | ast.StructExpression
        ):
            right = right.expr  # `(h_t){#}`, `(s_t){...}`: the type is the target's
        if isinstance(right, ast.InvalidExpression):
            if isinstance(target, HeaderRef | DynamicElement):
                self.emit("remove_header", [self.header_operand(target)], node)
                return
            if isinstance(target, UnionRef):
                for member in target.members.values():
                    self.emit("remove_header", [self.exprs.binding_operand(member)], node)
                return
        if isinstance(right, ast.ListExpression | ast.StructExpression):
            if isinstance(right, ast.ListExpression):
                composite = target.stack.p4type.element if isinstance(target, DynamicElement) else target.p4type
                names = [n for n, _ in composite.fields]
                pairs = list(zip(names, right.components, strict=False))
            else:
                pairs = [(f.name, f.value) for f in right.fields]
            if isinstance(target, DynamicElement):
                element = target.stack.p4type.element
                if target.stack.is_union_stack or len(header_leaves(element)) != len(element.fields):
                    raise unsupported(node, "a list or struct expression assigned to this run-time stack element")
                self.emit("add_header", [self.header_operand(target)], node)
                offsets = {fname: i for i, (fname, _) in enumerate(element.fields)}
                for name, value in pairs:
                    field_ref = DynamicField(target.stack, target.index, offsets[name], element.field_type(name))
                    self.store(field_ref, self.exprs.value(value, env), node)
                return
            if isinstance(target, HeaderRef):
                if not is_struct_instance(target):
                    self.emit("add_header", [self.exprs.binding_operand(target)], node)
                for name, value in pairs:
                    self.store(target.member(name), self.exprs.value(value, env), node)
                return
            if isinstance(target, StructRef):
                for name, value in pairs:
                    self.assign(target.fields[name], value, env, node)
                return
        source = self.exprs.resolve(right, env)
        if isinstance(source, ExprRef):
            source = self.exprs.resolve(source.expr, source.env)
        if isinstance(target, StructRef) and isinstance(source, StructRef):
            for name in target.fields:
                self.copy_binding(target.fields[name], source.fields[name], node)
            return
        self.copy_binding(target, source, node)

    def copy_binding(self, target: Any, source: Any, node: Any) -> None:
        """Copy one bound value into another of the same type."""
        if is_struct_instance(target) or is_struct_instance(source):
            source_fields = struct_fields(source)
            for name, field_binding in struct_fields(target).items():
                self.copy_binding(field_binding, source_fields[name], node)
            return
        if isinstance(target, HeaderRef | DynamicElement) and isinstance(source, HeaderRef | DynamicElement):
            self.emit("assign_header", [self.header_operand(target), self.header_operand(source)], node)
            return
        ops = {UnionRef: "assign_union"}
        for kind, op in ops.items():
            if isinstance(target, kind) and isinstance(source, kind):
                self.emit(
                    op,
                    [self.exprs.binding_operand(target), self.exprs.binding_operand(source)],
                    node,
                )
                return
        if isinstance(target, StackRef) and isinstance(source, StackRef):
            op = "assign_union_stack" if target.is_union_stack else "assign_header_stack"
            self.emit(
                op, [self.exprs.binding_operand(target), self.exprs.binding_operand(source)], node
            )
            return
        if isinstance(target, StructRef) and isinstance(source, StructRef):
            for name in target.fields:
                self.copy_binding(target.fields[name], source.fields[name], node)
            return
        value = self.exprs.binding_operand(source)
        if is_bool(strip_type(getattr(source, "p4type", None))) and not self.in_parser:
            value = to_data(value)
        self.store(target, value, node)

    def header_operand(self, binding: HeaderRef | DynamicElement) -> dict:
        """A header primitive's argument: the header, or a run-time stack element."""
        operand = self.exprs.binding_operand(binding)
        return {"type": "expression", "value": operand} if isinstance(binding, DynamicElement) else operand

    # ---------------------------------------------------------------- calls

    def call(self, e: ast.MethodCallExpression, env: Env, frame: Frame, node: Any) -> None:
        """A call statement: built-in methods, inlined actions, extern functions and methods."""
        call = e.call
        if call is None:
            raise unsupported(e, "an unresolved call")
        if call.kind == ast.CallKind.BUILTIN:
            self.builtin(call, env, node)
            return
        if call.kind == ast.CallKind.ACTION:
            if self.in_parser:
                raise unsupported(e, "calling an action from a parser")
            self.inline_action(call.target, call.args, env, frame)
            return
        if call.kind == ast.CallKind.FUNCTION:
            if e.type is not None and not isinstance(e.type, t.Void):
                # A function called for its effects: its result goes to an unread local.
                self.call_result(e, env)
                return
            self.inline_action(call.target, call.args, env, frame)
            return
        if call.kind in (ast.CallKind.EXTERN_FUNCTION, ast.CallKind.EXTERN_METHOD):
            self.externs.call(self, e, env, node)
            return
        raise unsupported(e, f"this kind of call ({call.kind.value}) here")

    def builtin(self, call: ast.CallInfo, env: Env, node: Any) -> None:
        """`setValid`, `setInvalid`, `push_front`, `pop_front` (a bare `isValid()` is dropped)."""
        name = call.builtin
        if name == "isValid":
            return
        target = self.exprs.resolve(call.receiver, env)
        if name in ("setValid", "setInvalid"):
            op = "add_header" if name == "setValid" else "remove_header"
            if isinstance(target, DynamicElement | HeaderRef):
                operand = self.header_operand(target)
            elif isinstance(target, StackMember) and target.member == "last":
                raise unsupported(node, f"{name}() on a stack's last element")
            else:
                raise unsupported(node, f"{name}() on this value")
            self.emit(op, [operand], node)
            return
        if name in ("push_front", "pop_front"):
            count = self.exprs.constant_int(call.args[0])
            self.emit(
                "push" if name == "push_front" else "pop",
                [self.exprs.binding_operand(target), {"type": "hexstr", "value": hexstr(count)}],
                node,
            )
            return
        raise unsupported(node, f"the method {name}()")

