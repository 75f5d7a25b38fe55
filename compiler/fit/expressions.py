"""Walking the BMv2-style JSON expressions our compiler writes, for the fit rules.

A JSON operand is `{"type": "field", "value": [header, field]}`, `hexstr`, `bool`,
`runtime_data`, `header`, an extern or array reference, or `{"type": "expression",
"value": ...}` wrapping either another operand or an operation `{"op", "left",
"right"[, "cond"]}`. The fit rules need three things from them: the fields an
operand reads, the operations it applies (with their operands), and the width of
a value, so that a multiply by 4 or a 64-bit add can be told apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

Field = tuple[str, str]

# Relations the match-action ALUs and the stateful ALU compare with.
ORDERING = {"<", ">", "<=", ">="}
EQUALITY = {"==", "!="}
# Operations whose result is a bit string computed by an ALU (not a condition).
ARITHMETIC = {"+", "-", "*", "/", "%", "<<", ">>", "|+|", "|-|"}


@dataclass(frozen=True)
class Operation:
    """One operation inside an operand: its operator and its (unwrapped) operands."""

    op: str
    left: dict | None
    right: dict | None
    cond: dict | None = None


def unwrap(node: dict | None) -> dict | None:
    """Strip `{"type": "expression", "value": X}` wrappers down to an operand or operation."""
    while isinstance(node, dict) and node.get("type") == "expression":
        node = node.get("value")
    return node


def is_operation(node: dict | None) -> bool:
    """True when `node` (unwrapped) is an operation rather than an operand."""
    return isinstance(node, dict) and "op" in node and "type" not in node


def operations(node: dict | None) -> Iterator[Operation]:
    """Every operation inside `node`, outermost first."""
    node = unwrap(node)
    if not is_operation(node):
        return
    assert node is not None
    yield Operation(node["op"], unwrap(node.get("left")), unwrap(node.get("right")),
                    unwrap(node.get("cond")))
    for key in ("cond", "left", "right"):
        yield from operations(node.get(key))


def fields(node: dict | None) -> Iterator[Field]:
    """Every header field `node` reads (header validity as the field `$valid$`)."""
    node = unwrap(node)
    if not isinstance(node, dict):
        return
    if is_operation(node):
        for key in ("cond", "left", "right"):
            yield from fields(node.get(key))
        return
    kind = node.get("type")
    if kind == "field":
        header, name = node["value"][0], node["value"][1]
        yield (header, name)
    elif kind == "header":
        yield (node["value"], "$valid$")
    elif kind == "stack_field":
        yield (node["value"][0], node["value"][1])


def constant(node: dict | None) -> int | None:
    """The value of a `hexstr`/`bool` operand, or None when it is not a constant."""
    node = unwrap(node)
    if not isinstance(node, dict):
        return None
    if node.get("type") == "hexstr":
        return int(node["value"], 16)
    if node.get("type") == "bool":
        return int(bool(node["value"]))
    return None


def is_power_of_two(value: int | None) -> bool:
    """True for 1, 2, 4, ...: what a shift or a mask can replace."""
    return value is not None and value > 0 and value & (value - 1) == 0


def render(node: dict | None) -> str:
    """A short stable text of an operand, to tell equal ones (indices, comparisons) apart."""
    node = unwrap(node)
    if not isinstance(node, dict):
        return repr(node)
    if is_operation(node):
        cond = f"{render(node.get('cond'))} ? " if node.get("cond") is not None else ""
        return f"({cond}{render(node.get('left'))} {node['op']} {render(node.get('right'))})"
    value = node.get("value")
    return ".".join(str(v) for v in value) if isinstance(value, list) else str(value)


def is_min_max(node: dict) -> bool:
    """`a OP b ? a : b` (or swapped): how our lowering writes min()/max(), one instruction."""
    cond = unwrap(node.get("cond"))
    if node.get("op") != "?" or not (isinstance(cond, dict) and cond.get("op") in ORDERING):
        return False
    sides = {render(cond.get("left")), render(cond.get("right"))}
    return sides == {render(node.get("left")), render(node.get("right"))}


class Widths:
    """Bit widths of the fields of one JSON document (a v1model program or one gress)."""

    def __init__(self, doc: dict) -> None:
        types = {t["name"]: t for t in doc.get("header_types", [])}
        self._fields: dict[Field, int] = {}
        for header in doc.get("headers", []):
            for entry in types.get(header["header_type"], {}).get("fields", []):
                # A varbit field's width is "*": it has no fixed width to check.
                if isinstance(entry[1], int):
                    self._fields[(header["name"], entry[0])] = entry[1]

    def field(self, field: Field) -> int | None:
        """The width of `field` in bits (None: not a declared field, e.g. `$valid$`)."""
        if field[1] == "$valid$":
            return 1
        return self._fields.get(field)

    def of(self, node: dict | None) -> int | None:
        """The width of the value `node` computes (None when it cannot be told)."""
        node = unwrap(node)
        if not isinstance(node, dict):
            return None
        if is_operation(node):
            op = node["op"]
            if op in ORDERING | EQUALITY | {"and", "or", "not", "d2b", "valid"}:
                return 1
            if op == "&":
                # Our lowering masks every result to its type's width with `& 0xff..`.
                mask = constant(node.get("right"))
                if mask is not None and is_power_of_two(mask + 1):
                    return (mask + 1).bit_length() - 1
            if op == "?":
                return _widest(self.of(node.get("left")), self.of(node.get("right")))
            if op in ("b2d", "~", "not"):
                return self.of(node.get("right"))
            return _widest(self.of(node.get("left")), self.of(node.get("right")))
        kind = node.get("type")
        if kind == "field":
            return self.field((node["value"][0], node["value"][1]))
        if kind == "hexstr":
            digits = node["value"][2:].lstrip("-")
            return max(len(digits) * 4, 1)
        if kind == "bool":
            return 1
        return None


def _widest(a: int | None, b: int | None) -> int | None:
    """The wider of two widths, ignoring unknown ones."""
    known = [w for w in (a, b) if w is not None]
    return max(known) if known else None
