"""The VerifyChecksum and ComputeChecksum controls as `checksums` entries (formats.md §1.12)."""

from __future__ import annotations

from typing import Any

from .. import ast
from ..diagnostics import CompileError
from .calculations import Calculations
from .context import Context, unsupported
from .expressions import ExpressionLowering, to_bool
from .externs import Externs, enum_member
from .statements import StatementLowering
from .storage import Env, FieldRef

CHECKSUM_CALLS = {
    "verify_checksum": (True, False),
    "verify_checksum_with_payload": (True, True),
    "update_checksum": (False, False),
    "update_checksum_with_payload": (False, True),
}


def lower_checksum_control(
    ctx: Context, calcs: Calculations, externs: Externs, decl: ast.ControlDeclaration, env: Env, verify: bool
) -> None:
    """Add one checksum entry per checksum call of a checksum control."""
    exprs = ExpressionLowering(ctx)
    helper = StatementLowering(ctx, externs)

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
            inputs = externs.flatten(helper, data, env)
            calc = calcs.add(enum_member(algo), inputs, s, payload=payload)
            if_cond = None if cond_expr.const_value is True else to_bool(exprs.value(cond_expr, env))
            calcs.add_checksum([target.header, target.field], calc, verify, if_cond, s)

    walk(decl.body.components)
