"""v1model extern functions and extern methods as BMv2 primitives (formats.md §1.13)."""

from __future__ import annotations

from typing import Any

from .. import ast
from .. import types as t
from ..arch import v1model
from ..diagnostics import CompileError
from .calculations import Calculations
from .context import Context, field_width, strip_type, unsupported
from .expressions import StackMember, UnionStackNext, expr_op, primitive_arg, to_bool, to_data
from .hexstr import hexstr
from .lists import FieldLists
from .model import CpDigest, CpParam
from .storage import (
    Env,
    ExprRef,
    FieldRef,
    HeaderRef,
    InstanceRef,
    StackRef,
    StructRef,
    UnionRef,
    header_leaves,
)
from .user_externs import UserExterns, is_user_function, user_extern


def instance_type_name(decl: Any) -> str:
    """The extern type name of an instantiation (`register` for `register<bit<8>>(4) r`)."""
    node = getattr(decl, "type_node", None)
    if isinstance(node, ast.SpecializedTypeNode):
        return node.base.name
    if isinstance(node, ast.NamedType):
        return node.name
    p4type = getattr(decl, "p4type", None)
    if isinstance(p4type, t.Specialized):
        return p4type.base.name
    return getattr(p4type, "name", "")


def enum_member(e: ast.Expression | None) -> str:
    """The member name of a constant enum argument (`HashAlgorithm.crc16` → `crc16`)."""
    value = getattr(e, "const_value", None)
    if isinstance(value, t.EnumValue):
        return value.member
    if isinstance(e, ast.MemberExpression):
        return e.member
    raise CompileError(getattr(e, "pos", None), "a constant enum value is required here")


def type_kind(p4type: t.P4Type) -> str:
    """The P4Info type family of a scalar type (`bit`, `int`, `bool`, `error`)."""
    base = strip_type(p4type)
    if isinstance(base, t.Bool):
        return "bool"
    if isinstance(base, t.Error):
        return "error"
    if isinstance(base, t.Bits) and base.signed:
        return "int"
    return "bit"


class Externs:
    """Dispatches extern calls; owns calculations, field lists and learn lists."""

    def __init__(self, ctx: Context, calcs: Calculations, lists: FieldLists) -> None:
        self.ctx = ctx
        self.calcs = calcs
        self.lists = lists
        self.direct_meter_targets: dict[str, list[str]] = {}
        self.user = UserExterns(ctx)

    def call(self, sl: Any, e: ast.MethodCallExpression, env: Env, node: Any) -> None:
        """Lower one extern call statement through statement lowering `sl`."""
        call = e.call
        name = getattr(call.target, "name", "")
        if call.kind == ast.CallKind.EXTERN_METHOD:
            if sl.in_parser and name in ("extract", "advance", "lookahead"):
                self.packet_in(sl, name, e, env, node)
                return
            receiver = sl.exprs.resolve(call.receiver, env) if call.receiver is not None else None
            if isinstance(receiver, InstanceRef):
                self.method(sl, receiver, name, call, env, node)
                return
            raise unsupported(node, f"the method {name}() here")
        handler = getattr(self, f"fn_{name}", None)
        if handler is None and call.kind == ast.CallKind.EXTERN_FUNCTION and is_user_function(call.target):
            self.user.function(sl, name, call, env, node)
            return
        if handler is None:
            raise unsupported(node, f"the extern function {name}")
        handler(sl, call.args, env, node, call)

    def value_call(self, sl: Any, e: ast.MethodCallExpression, env: Env, result: Any, node: Any) -> None:
        """Lower a value-returning extern call so that its value lands in binding `result`."""
        call = e.call
        name = getattr(call.target, "name", "")
        if sl.in_parser and call.kind == ast.CallKind.EXTERN_METHOD and name == "lookahead":
            self.lookahead_into(sl, result, node)
            return
        receiver = sl.exprs.resolve(call.receiver, env) if call.receiver is not None else None
        kind = instance_type_name(receiver.decl) if isinstance(receiver, InstanceRef) else ""
        if kind == "register" and name == "read" and isinstance(result, FieldRef):
            params = [
                primitive_arg(result.operand()),
                {"type": "register_array", "value": receiver.name},
                self.arg(sl, call.args[0], env),
            ]
            sl.emit("register_read", params, node)
            return
        what = f"{kind}.{name}()" if kind else f"{name}()"
        raise unsupported(node, f"the value of {what}")

    def lookahead_into(self, sl: Any, result: Any, node: Any) -> None:
        """`x = pkt.lookahead<T>()` (or `T x = ...`) for a header or struct `x` in a parser
        state: every header of `x` made valid first, then each field set from the bits
        ahead in declaration order, as p4c's ExpandLookahead orders them. The other order
        would lose the values: BMv2's `add_header` zeroes the header it makes valid."""
        headers: list[dict] = []
        fields: list[tuple[dict, int]] = []

        def walk(binding: Any) -> None:
            if isinstance(binding, HeaderRef):
                if not isinstance(binding.p4type, t.Struct):  # a struct local kept as metadata
                    headers.append({"type": "header", "value": binding.name})
                for fname, ftype, _ in header_leaves(binding.p4type):
                    fields.append(({"type": "field", "value": [binding.name, fname]},
                                   field_width(strip_type(ftype))))
            elif isinstance(binding, StructRef):
                for value in binding.fields.values():
                    walk(value)
            elif isinstance(binding, FieldRef):
                fields.append((binding.operand(), field_width(strip_type(binding.p4type))))
            else:
                raise unsupported(node, "a lookahead into this value (a header, struct or field is needed)")

        walk(result)
        for header in headers:
            sl.emit("add_header", [header], node)
        offset = sl.exprs.lookahead_offset
        for operand, width in fields:
            sl.emit_parser_op("set", [operand, {"type": "lookahead", "value": [offset, width]}])
            offset += width

    # ---------------------------------------------------------------- helpers

    def arg(self, sl: Any, e: ast.Expression, env: Env) -> dict:
        """A primitive argument computing `e` as data."""
        return primitive_arg(to_data(sl.exprs.value(e, env)))

    def lvalue(self, sl: Any, e: ast.Expression, env: Env) -> dict:
        """A primitive argument naming the field `e` designates."""
        target = sl.exprs.resolve(e, env)
        return primitive_arg(sl.exprs.binding_operand(target, e))

    def const32(self, value: int) -> dict:
        """A 32-bit constant as p4c writes list ids and receivers."""
        return {"type": "hexstr", "value": hexstr(value, 32)}

    def flatten(
        self, sl: Any, e: ast.Expression, env: Env, computed: bool = False
    ) -> list[tuple[dict, int]]:
        """Field references and constants (with widths) of a data list or struct value.

        With `computed` (a hash's data, lowered where primitives run first), an element
        that is neither a field nor a constant (`p.h.f ^ 0xFFFF`) is computed into a
        temporary first: BMv2 calculations take only fields, constants, headers and the
        payload.
        """
        if isinstance(e, ast.ListExpression):
            out: list[tuple[dict, int]] = []
            for item in e.components:
                out += self.flatten(sl, item, env, computed)
            return out
        if isinstance(e, ast.StructExpression):
            out = []
            for item in e.fields:
                out += self.flatten(sl, item.value, env, computed)
            return out
        if e.const_value is not None and not isinstance(e.const_value, bool):
            width = field_width(strip_type(e.type))
            return [({"type": "hexstr", "value": hexstr(sl.exprs.constant_int(e), width)}, width)]
        if computed and not isinstance(e, ast.PathExpression | ast.MemberExpression | ast.IndexExpression) \
                and isinstance(strip_type(e.type), t.Bits | t.Bool):
            temp = self.ctx.temporary(e.type)
            sl.store(temp, sl.exprs.value(e, env), e)
            return [(temp.operand(), field_width(strip_type(e.type)))]
        binding = sl.exprs.resolve(e, env)
        if isinstance(binding, ExprRef):
            # A parameter bound to the caller's expression (`h16(hdr.h.a + 1)` using `x`).
            return self.flatten(sl, binding.expr, binding.env, computed)
        return self.flatten_binding(binding, e)

    def flatten_binding(self, binding: Any, node: Any) -> list[tuple[dict, int]]:
        """Fields of a bound value, in declaration order."""
        if isinstance(binding, FieldRef):
            return [(binding.operand(), field_width(strip_type(binding.p4type)))]
        if isinstance(binding, HeaderRef):
            out: list[tuple[dict, int]] = []
            leaves = header_leaves(binding.p4type) if isinstance(binding.p4type, t.Header) else \
                [(fname, ftype, ()) for fname, ftype in binding.p4type.fields]
            for fname, ftype, _ in leaves:
                out.append(
                    (
                        {"type": "field", "value": [binding.name, fname]},
                        field_width(strip_type(ftype)),
                    )
                )
            return out
        if isinstance(binding, StructRef):
            out = []
            for value in binding.fields.values():
                out += self.flatten_binding(value, node)
            return out
        raise unsupported(node, "this value in a field list")

    # ---------------------------------------------------------------- extern objects

    def method(
        self, sl: Any, inst: InstanceRef, name: str, call: ast.CallInfo, env: Env, node: Any
    ) -> None:
        """Methods of register, counter, meter, direct_counter and direct_meter instances."""
        kind = instance_type_name(inst.decl)
        args = call.args
        if user_extern(inst.decl) is not None:
            self.user.method(sl, inst, kind, name, call, env, node)
            return
        if kind == "register" and name == "read":
            params = [
                self.lvalue(sl, args[0], env),
                {"type": "register_array", "value": inst.name},
                self.arg(sl, args[1], env),
            ]
            sl.emit("register_read", params, node)
            return
        if kind == "register" and name == "write":
            params = [
                {"type": "register_array", "value": inst.name},
                self.arg(sl, args[0], env),
                self.arg(sl, args[1], env),
            ]
            sl.emit("register_write", params, node)
            return
        if kind == "counter" and name == "count":
            sl.emit(
                "count",
                [{"type": "counter_array", "value": inst.name}, self.arg(sl, args[0], env)],
                node,
            )
            return
        if kind == "meter" and name == "execute_meter":
            params = [
                {"type": "meter_array", "value": inst.name},
                self.arg(sl, args[0], env),
                self.lvalue(sl, args[1], env),
            ]
            sl.emit("execute_meter", params, node)
            return
        if kind == "direct_counter" and name == "count":
            return
        if kind == "direct_meter" and name == "read":
            target = sl.exprs.resolve(args[0], env)
            if not isinstance(target, FieldRef):
                raise unsupported(node, "direct_meter.read() into this value")
            where = [target.header, target.field]
            known = self.direct_meter_targets.setdefault(inst.name, where)
            if known != where:
                raise CompileError(
                    node.pos, f"all read() calls of {inst.name} must use the same field"
                )
            return
        raise unsupported(node, f"{kind}.{name}()")

    def packet_in(self, sl: Any, name: str, e: ast.MethodCallExpression, env: Env, node: Any) -> None:
        """`extract`, `advance` and a bare `lookahead` inside a parser state."""
        call = e.call
        if name == "lookahead":
            # Its value is dropped, but it still reads the packet: past the end BMv2 raises
            # PacketTooShort. Read into an unused temporary.
            operand = sl.exprs.value(e, env)
            if operand["value"][1]:
                sl.hoist_lookaheads(operand)
            return
        if name == "advance":
            sl.emit_parser_op("advance", [to_data(sl.exprs.value(call.args[0], env))])
            return
        target = sl.exprs.resolve(call.args[0], env)
        if isinstance(target, StackMember) and target.member == "next":
            stack = target.stack
            kind = "union_stack" if stack.is_union_stack else "stack"
            operand = {"type": kind, "value": stack.name}
        elif isinstance(target, UnionStackNext):
            operand = {"type": "union_stack", "value": [target.stack.name, target.member]}
        elif isinstance(target, HeaderRef):
            operand = {"type": "regular", "value": target.name}
        elif isinstance(target, StackRef | UnionRef):
            raise unsupported(node, "extracting a whole stack or union")
        else:
            raise unsupported(node, "extracting into this value")
        params = [operand]
        if len(call.args) > 1 and call.args[1] is not None:
            params.append(to_data(sl.exprs.value(call.args[1], env)))
            sl.emit_parser_op("extract_VL", params)
            return
        sl.emit_parser_op("extract", params)

    # ---------------------------------------------------------------- extern functions

    def fn_verify(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`verify(cond, err)` in a parser."""
        if not sl.in_parser:
            raise unsupported(node, "verify() outside a parser")
        cond = to_bool(sl.exprs.value(args[0], env))
        sl.emit_parser_op("verify", [cond, sl.exprs.value(args[1], env)])

    def fn_mark_to_drop(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`mark_to_drop(standard_metadata)`."""
        target = sl.exprs.resolve(args[0], env) if args and args[0] is not None else None
        name = target.name if isinstance(target, HeaderRef) else v1model.STANDARD_METADATA
        sl.emit("mark_to_drop", [{"type": "header", "value": name}], node)

    def _clone(self, sl: Any, args: list, env: Env, node: Any, list_id: int) -> None:
        """Both clone forms: I2E/E2E primitive with the session and a field-list id."""
        kind = enum_member(args[0])
        op = "clone_ingress_pkt_to_egress" if kind == "I2E" else "clone_egress_pkt_to_egress"
        sl.emit(op, [self.arg(sl, args[1], env), self.const32(list_id)], node)

    def fn_clone(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`clone(type, session)`: an empty field list, as p4c does."""
        self._clone(sl, args, env, node, self.lists.anonymous_list([], node))

    def data_list(self, sl: Any, data: ast.Expression, env: Env, node: Any) -> int:
        """The field list of the pre-2020 forms' `data` (`resubmit({meta.a})`): the fields it
        names, restored in the resubmitted, recirculated or cloned packet."""
        elements = []
        for item, _ in self.flatten(sl, data, env):
            if item.get("type") != "field":
                raise unsupported(data, "a value other than a field in the data of resubmit, recirculate or clone3")
            elements.append(item)
        return self.lists.anonymous_list(elements, node)

    def fn_clone3(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`clone3(type, session, data)` (deprecated for clone_preserving_field_list)."""
        self._clone(sl, args, env, node, self.data_list(sl, args[2], env, node))

    def fn_resubmit(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`resubmit(data)` (deprecated for resubmit_preserving_field_list)."""
        sl.emit("resubmit", [self.const32(self.data_list(sl, args[0], env, node))], node)

    def fn_recirculate(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`recirculate(data)` (deprecated for recirculate_preserving_field_list)."""
        sl.emit("recirculate", [self.const32(self.data_list(sl, args[0], env, node))], node)

    def fn_clone_preserving_field_list(
        self, sl: Any, args: list, env: Env, node: Any, call: Any
    ) -> None:
        """`clone_preserving_field_list(type, session, index)`."""
        index = sl.exprs.constant_int(args[2])
        self._clone(sl, args, env, node, self.lists.field_list(index, node))

    def fn_resubmit_preserving_field_list(
        self, sl: Any, args: list, env: Env, node: Any, call: Any
    ) -> None:
        """`resubmit_preserving_field_list(index)`."""
        index = sl.exprs.constant_int(args[0])
        sl.emit("resubmit", [self.const32(self.lists.field_list(index, node))], node)

    def fn_recirculate_preserving_field_list(
        self, sl: Any, args: list, env: Env, node: Any, call: Any
    ) -> None:
        """`recirculate_preserving_field_list(index)`."""
        index = sl.exprs.constant_int(args[0])
        sl.emit("recirculate", [self.const32(self.lists.field_list(index, node))], node)

    def fn_digest(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`digest<T>(receiver, data)`: a learn list named after T."""
        data_type = strip_type(args[1].type)
        type_name = getattr(data_type, "name", None) or "digest"
        elements = [item for item, _ in self.flatten(sl, args[1], env)]
        list_id = self.lists.learn_list(type_name, elements, node)
        if not any(d.name == type_name for d in self.ctx.cp.digests):
            fields = []
            if isinstance(data_type, t.StructLike):
                fields = [CpParam(n, field_width(strip_type(ft)), kind=type_kind(ft)) for n, ft in data_type.fields]
            self.ctx.cp.digests.append(CpDigest(type_name, type_name, fields))
        receiver = sl.exprs.constant_int(args[0])
        sl.emit(
            "generate_digest",
            [self.const32(receiver), {"type": "hexstr", "value": hexstr(list_id)}],
            node,
        )

    def fn_hash(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`hash(out, algo, base, data, max)`."""
        algo = enum_member(args[1])
        inputs = self.flatten(sl, args[3], env, computed=True)
        calc = self.calcs.add(algo, inputs, node)
        params = [
            self.lvalue(sl, args[0], env),
            self.arg(sl, args[2], env),
            {"type": "calculation", "value": calc},
            self.arg(sl, args[4], env),
        ]
        sl.emit("modify_field_with_hash_based_offset", params, node)

    def fn_random(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`random(out, lo, hi)`."""
        params = [
            self.lvalue(sl, args[0], env),
            self.arg(sl, args[1], env),
            self.arg(sl, args[2], env),
        ]
        sl.emit("modify_field_rng_uniform", params, node)

    def fn_truncate(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`truncate(length_in_bytes)`."""
        sl.emit("truncate", [self.arg(sl, args[0], env)], node)

    def fn_assert(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`assert(cond)`."""
        cond = to_bool(sl.exprs.value(args[0], env))
        sl.emit("assert", [primitive_arg(expr_op("b2d", None, cond))], node)

    def fn_assume(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`assume(cond)`."""
        cond = to_bool(sl.exprs.value(args[0], env))
        sl.emit("assume", [primitive_arg(expr_op("b2d", None, cond))], node)

    def fn_log_msg(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """`log_msg(format[, data])`."""
        fmt = (
            args[0].const_value
            if args[0].const_value is not None
            else getattr(args[0], "value", "")
        )
        values: list[dict] = []
        if len(args) > 1 and args[1] is not None:
            data = args[1]
            items = data.components if isinstance(data, ast.ListExpression) else [data]
            for item in items:
                values.append(primitive_arg(to_data(sl.exprs.value(item, env))))
        sl.emit(
            "log_msg",
            [{"type": "string", "value": fmt}, {"type": "parameters_vector", "value": values}],
            node,
        )

    def _checksum_only(self, sl: Any, args: list, env: Env, node: Any, call: Any) -> None:
        """Checksum externs belong in the VerifyChecksum/ComputeChecksum controls."""
        raise CompileError(node.pos, "checksum externs may only be called in the checksum controls")

    fn_verify_checksum = _checksum_only
    fn_update_checksum = _checksum_only
    fn_verify_checksum_with_payload = _checksum_only
    fn_update_checksum_with_payload = _checksum_only
