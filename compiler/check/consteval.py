"""Compile-time constant folding of P4 operators.

Values are Python ints (bit<W>/int<W> values kept in range by wrapping, as P4
defines: unsigned modulo 2^W, signed two's complement), bools and strings.
Arbitrary-precision `int` values are exact. Functions return None when the
result is not a compile-time value; they raise `ValueError` with a message
for operations P4 forbids on constants (division by zero, negative shifts).
"""

from __future__ import annotations

from ..types import Bits, Bool, InfInt, NewType, P4Type


def _wrap(t: P4Type, value: int) -> int:
    return t.wrap(value) if isinstance(t, Bits) else value


def _saturate(t: P4Type, value: int) -> int:
    if not isinstance(t, Bits):
        return value
    if t.signed:
        lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    else:
        lo, hi = 0, (1 << t.width) - 1
    return max(lo, min(hi, value))


def fold_binary(op: str, a: object, b: object, t: P4Type, left_type: P4Type) -> object:
    """The value of `a op b` whose result has type `t` (`left_type` for `++`)."""
    if a is None or b is None:
        return None
    if op in ("&&", "||"):
        return (a and b) if op == "&&" else (a or b)
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if not isinstance(a, int) or not isinstance(b, int) or isinstance(a, bool):
        return None
    if op in ("<", "<=", ">", ">="):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op in ("/", "%"):
        if b == 0:
            raise ValueError("division by zero")
        if a < 0 or b < 0:
            raise ValueError(f"'{op}' on a negative constant is not defined")
        return _wrap(t, a // b if op == "/" else a % b)
    if op in ("<<", ">>"):
        if b < 0:
            raise ValueError("shift by a negative amount")
        return _wrap(t, a << b if op == "<<" else a >> b)
    if op == "++":
        assert isinstance(t, Bits) and isinstance(left_type, Bits)
        low_width = t.width - left_type.width
        return _wrap(t, (a << low_width) | (b & ((1 << low_width) - 1)))
    if op in ("|+|", "|-|"):
        return _saturate(t, a + b if op == "|+|" else a - b)
    simple = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
    }
    return _wrap(t, simple[op]()) if op in simple else None


def fold_unary(op: str, a: object, t: P4Type) -> object:
    """The value of `op a` with result type `t`."""
    if a is None:
        return None
    if op == "!":
        return not a
    if not isinstance(a, int) or isinstance(a, bool):
        return None
    if op == "-":
        return _wrap(t, -a)
    if op == "+":
        return a
    if op == "~":
        return _wrap(t, ~a) if isinstance(t, Bits) else None
    return None


def fold_cast(value: object, source: P4Type, target: P4Type) -> object:
    """The value of `(target) value`."""
    if value is None:
        return None
    if isinstance(target, NewType) and target.underlying is not None:
        return fold_cast(value, source, target.underlying)
    if isinstance(target, Bits):
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return target.wrap(value)
        return None
    if isinstance(target, InfInt) and isinstance(value, int):
        return value

    if isinstance(target, Bool) and isinstance(value, int) and not isinstance(value, bool):
        return bool(value)
    return value if source == target else None


def fold_slice(value: object, hi: int, lo: int) -> object:
    """The value of `value[hi:lo]`."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)
