"""Arithmetic rules: no multiply, divide or modulo but by a power of two, shifts by
constants only, and ALU operands of at most 32 bits.

Tofino's action ALUs add, subtract, shift by a constant, and do bitwise and min/max
operations on one PHV container of 8, 16 or 32 bits; a condition's gateway compares
up to 4 bytes. Multiplication, division and modulo exist only as shifts and masks
(Tofino 2's stateful ALU adds a divide/modulo unit, see salu.py).
"""

from __future__ import annotations

from ..diagnostics import SourcePos
from .expressions import (
    ARITHMETIC,
    ORDERING,
    Operation,
    Widths,
    constant,
    is_min_max,
    is_power_of_two,
    operations,
)
from .program import Gress, position
from .report import Finding
from .targets import Device


def _mul_div(op: Operation) -> str | None:
    """Why one operation is not a shift or mask (None when it is)."""
    left, right = constant(op.left), constant(op.right)
    if op.op == "*" and not (is_power_of_two(left) or is_power_of_two(right)):
        return "multiplication of two run-time values (or by a constant that is not a power of two)"
    if op.op in ("/", "%") and not is_power_of_two(right):
        word = "division" if op.op == "/" else "modulo"
        return f"{word} by something other than a constant power of two"
    if op.op in ("<<", ">>") and right is None:
        return "a shift by a run-time amount"
    return None


def _too_wide(op: Operation, widths: Widths, device: Device) -> int | None:
    """The operand width of an arithmetic or ordering operation wider than the ALU."""
    # A shift by a constant builds or splits a value across containers (a concatenation,
    # a slice): Tofino does that with deposit-field moves, whatever the total width.
    if op.op not in ARITHMETIC | ORDERING or op.op in ("<<", ">>"):
        return None
    # A constant takes the width of what it is combined with.
    sides = [widths.of(side) for side in (op.left, op.right) if constant(side) is None]
    widest = max((w for w in sides if w is not None), default=0)
    return widest if widest > device.alu_width else None


def _check(expr: dict | None, widths: Widths, device: Device, where: str, pos: SourcePos | None,
           found: list[Finding], seen: set) -> None:
    """Apply both rules to one expression, one finding per rule and place."""
    for op in operations(expr):
        why = _mul_div(op)
        if why and ("arith-mul-div", pos) not in seen:
            seen.add(("arith-mul-div", pos))
            found.append(Finding("arith-mul-div", pos, f"{where}: {why} ({op.op})"))
        width = _too_wide(op, widths, device)
        if width and ("alu-width", pos) not in seen:
            seen.add(("alu-width", pos))
            found.append(Finding("alu-width", pos,
                                 f"{where}: {op.op} on {width}-bit operands; Tofino's ALUs and "
                                 f"gateways take {device.alu_width} bits"))


# Operations that take an ALU instruction of their own; masks, constant shifts and `|`
# are how our lowering builds concatenations and slices, which Tofino does with moves.
_ALU_OPS = ARITHMETIC | ORDERING | {"==", "!=", "^", "~", "?"}


def _alu_ops(expr: dict | None) -> list[str]:
    """The ALU operations one assigned expression needs, outermost first."""
    found: list[str] = []
    skip = 0
    for op in operations(expr):
        if skip:
            # The comparison under a min/max is part of its one instruction.
            skip -= 1
            continue
        if op.op == "?" and is_min_max({"op": "?", "cond": op.cond, "left": op.left, "right": op.right}):
            found.append("min/max")
            skip = 1
            continue
        if op.op in _ALU_OPS and not (op.op in ("<<", ">>") and constant(op.right) is not None):
            found.append(op.op)
    return found


def check_gress(g: Gress, device: Device) -> list[Finding]:
    """Every action and condition of one gress (RegisterAction bodies: multiply/divide only)."""
    found: list[Finding] = []
    seen: set = set()
    used = {a for node in g.nodes.values() for a in node.actions}
    for name in sorted(used):
        action = g.actions[name]
        for prim in action.get("primitives", []):
            pos = position(prim.get("source_info"), position(action.get("source_info")))
            for param in prim.get("parameters", []):
                _check(param, g.widths, device, f"action {name}", pos, found, seen)
            ops = _alu_ops(prim["parameters"][1]) if prim.get("op") == "assign" else []
            if len(ops) > 1:
                found.append(Finding("action-single-op", pos,
                                     f"action {name}: one assignment needs {len(ops)} ALU operations "
                                     f"({' '.join(ops)}); Tofino does one per field per stage"))
    for node in g.nodes.values():
        if node.kind == "table" and not node.hidden:
            for action_name, pos, f in node.chained:
                found.append(Finding("action-single-op", pos,
                                     f"action {action_name} reads {f[0]}.{f[1]} after writing it: "
                                     "the statements of one action run in one stage, in parallel"))
    for cond in g.pipeline.get("conditionals", []):
        pos = position(cond.get("source_info"))
        _check(cond.get("expression"), g.widths, device, "condition", pos, found, seen)
    for ra in g.register_actions.values():
        for prim in ra.get("primitives", []):
            pos = position(prim.get("source_info"), position(ra.get("source_info")))
            for param in prim.get("parameters", []):
                for op in operations(param):
                    if op.op in ("/", "%") and device.salu_divmod:
                        continue
                    why = _mul_div(op)
                    if why and ("arith-mul-div", pos) not in seen:
                        seen.add(("arith-mul-div", pos))
                        found.append(Finding("arith-mul-div", pos,
                                             f"RegisterAction {ra['name']}: {why} ({op.op})"))
    return found
