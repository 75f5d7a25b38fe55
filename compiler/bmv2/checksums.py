"""The VerifyChecksum and ComputeChecksum controls as `checksums` entries (formats.md §1.12).

A BMv2 calculation takes only fields, headers and constants (bit strings packed one after
the other). Data that is computed is kept in that form where its bits are those of fields
and constants: `a ++ b` is `a` then `b`, a widening cast of an unsigned value is zero bits
then the value. Other computed data (`h.len - 20`, a slice) of `update_checksum` goes into a
temporary that the egress pipeline computes last, and before every `exit` (after which
egress stops): nothing runs between egress and the checksum update, so it holds the value
the update reads. p4c-bm2-ss writes such data as an `expression` input, which simple_switch
refuses to load. `verify_checksum` runs right after the parser, on whichever state it ended
in (errors included), so nothing can compute its data: such data is refused.
"""

from __future__ import annotations

from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .calculations import Calculations
from .context import Context, field_width, strip_type, unsupported
from .expressions import ExpressionLowering, to_bool
from .externs import Externs, enum_member
from .hexstr import hexstr
from .statements import StatementLowering, has_call
from .storage import Env, FieldRef

CHECKSUM_CALLS = {
    "verify_checksum": (True, False),
    "verify_checksum_with_payload": (True, True),
    "update_checksum": (False, False),
    "update_checksum_with_payload": (False, True),
}


def checksum_calls(decl: ast.ControlDeclaration) -> list[tuple[ast.Statement, ast.CallInfo]]:
    """The checksum calls of a checksum control, in order; anything else is refused."""
    out: list[tuple[ast.Statement, ast.CallInfo]] = []

    def walk(statements: list[Any]) -> None:
        for s in statements:
            if isinstance(s, ast.BlockStatement):
                walk(s.components)
                continue
            if isinstance(s, ast.EmptyStatement):
                continue
            call = s.call.call if isinstance(s, ast.MethodCallStatement) else None
            name = getattr(getattr(call, "target", None), "name", "")
            if call is None or name not in CHECKSUM_CALLS:
                raise unsupported(s, "anything but checksum calls in a checksum control")
            out.append((s, call))

    walk(decl.body.components)
    return out


def is_location(e: ast.Expression) -> bool:
    """Whether `e` names storage (a field, header or struct) rather than computing a value."""
    return isinstance(e, ast.PathExpression | ast.MemberExpression | ast.IndexExpression) and e.const_value is None


def zero_extension(e: ast.Expression) -> int | None:
    """The number of zero bits a cast `e` puts before its operand's bits (None: not one)."""
    if not isinstance(e, ast.CastExpression):
        return None
    source, target = strip_type(e.expr.type), strip_type(e.type)
    if isinstance(source, t.Bits) and isinstance(target, t.Bits) and not source.signed \
            and target.width >= source.width:
        return target.width - source.width
    return None


def computed_items(e: ast.Expression) -> list[ast.Expression]:
    """The parts of checksum data that are neither storage, constants, concatenations nor
    zero extensions of such: each needs a temporary."""
    if isinstance(e, ast.ListExpression):
        return [x for item in e.components for x in computed_items(item)]
    if isinstance(e, ast.StructExpression):
        return [x for item in e.fields for x in computed_items(item.value)]
    if e.const_value is not None and not isinstance(e.const_value, bool) or is_location(e):
        return []
    if isinstance(e, ast.BinaryExpression) and e.op == "++":
        return computed_items(e.left) + computed_items(e.right)
    if zero_extension(e) is not None:
        return computed_items(e.expr)
    return [e]


def checksum_inputs(
    e: ast.Expression, env: Env, externs: Externs, sl: StatementLowering, temps: dict[int, FieldRef]
) -> list[tuple[dict, int]]:
    """Calculation inputs (operand, width) for checksum data `e`; `temps` holds the
    temporaries of its computed parts."""
    if id(e) in temps:
        return [(temps[id(e)].operand(), field_width(strip_type(e.type)))]
    if isinstance(e, ast.ListExpression):
        return [x for item in e.components for x in checksum_inputs(item, env, externs, sl, temps)]
    if isinstance(e, ast.StructExpression):
        return [x for item in e.fields for x in checksum_inputs(item.value, env, externs, sl, temps)]
    if isinstance(e, ast.BinaryExpression) and e.op == "++":
        return checksum_inputs(e.left, env, externs, sl, temps) + checksum_inputs(e.right, env, externs, sl, temps)
    zeros = zero_extension(e)
    if zeros is not None:
        head = [({"type": "hexstr", "value": hexstr(0, zeros)}, zeros)] if zeros else []
        return head + checksum_inputs(e.expr, env, externs, sl, temps)
    return externs.flatten(sl, e, env)


def checksum_temporaries(ctx: Context, decl: ast.ControlDeclaration, env: Env) -> dict[int, FieldRef]:
    """A temporary for each computed part of the ComputeChecksum control's data, recorded in
    `ctx.checksum_data` for the egress pipeline to compute (see the module docstring)."""
    temps: dict[int, FieldRef] = {}
    for _, call in checksum_calls(decl):
        if not CHECKSUM_CALLS[call.target.name][0]:
            for item in computed_items(call.args[1]):
                if has_call(item):
                    raise unsupported(item, "a call in the data of update_checksum")
                if not isinstance(strip_type(item.type), t.Bits):
                    raise unsupported(item, "computed checksum data that is not a bit<W> or int<W> value")
                temps[id(item)] = ctx.temporary(item.type)
                ctx.checksum_data.append((temps[id(item)], item, env))
    return temps


def lower_checksum_control(
    ctx: Context, calcs: Calculations, externs: Externs, decl: ast.ControlDeclaration, env: Env, verify: bool,
    temps: dict[int, FieldRef] | None = None,
) -> None:
    """Add one checksum entry per checksum call of a checksum control; `temps` holds the
    temporaries `checksum_temporaries` made for its computed data."""
    exprs = ExpressionLowering(ctx)
    helper = StatementLowering(ctx, externs)
    for s, call in checksum_calls(decl):
        name = call.target.name
        is_verify, payload = CHECKSUM_CALLS[name]
        if is_verify != verify:
            raise CompileError(s.pos, f"{name} is not allowed in this checksum control")
        cond_expr, data, target_expr, algo = call.args[:4]
        if is_verify and target_expr.const_value == 0:
            # BMv2 compares with a field: a scalar no one writes, zero in every packet.
            target = ctx.scalar(ctx.unique_scalar("checksum_zero"), target_expr.type)
        else:
            target = exprs.resolve(target_expr, env)
        if not isinstance(target, FieldRef):
            raise unsupported(s, "a checksum value that is neither a field nor 0")
        computed = [] if temps is None else [e for e in computed_items(data) if id(e) not in temps]
        if is_verify and computed_items(data):
            raise CompileError(
                computed_items(data)[0].pos,
                "computed data in verify_checksum is not supported by the BMv2 back end: a "
                "calculation takes only fields and constants (and concatenations and zero "
                "extensions of them), and nothing runs between the parser, however it ends, and "
                "verify_checksum to compute it (set a metadata field in the parser instead)",
            )
        if computed:
            raise unsupported(computed[0], "this computed checksum data")
        inputs = checksum_inputs(data, env, externs, helper, temps or {})
        calc = calcs.add(enum_member(algo), inputs, s, payload=payload)
        if_cond = None if cond_expr.const_value is True else to_bool(exprs.value(cond_expr, env))
        calcs.add_checksum([target.header, target.field], calc, verify, if_cond, s)
