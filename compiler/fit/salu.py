"""RegisterAction bodies against the stateful ALU (TNA/T2NA programs).

A stateful ALU runs one RegisterAction per packet as one VLIW instruction: two
comparison units (four on Tofino 2) whose results predicate up to two updates of
each half of the cell, and one output word (four on Tofino 2). A body that needs
more, or operators the ALU lacks, is refused by bf-p4c. Reading the body from our
JSON: `_jump_if_zero` conditions and `?:` conditions are the comparisons,
assignments to the `value` fields are the updates, to `rv` fields the outputs.
"""

from __future__ import annotations

from .expressions import (
    EQUALITY,
    ORDERING,
    constant,
    fields,
    is_min_max,
    is_power_of_two,
    render,
    unwrap,
)
from .program import Gress, position
from .report import Finding
from .targets import Device

_STATEMENTS = {"assign", "_jump", "_jump_if_zero"}
_METHODS = {"_RegisterAction_predicate", "_RegisterAction_address", "_RegisterAction_min8",
            "_RegisterAction_max8", "_RegisterAction_min16", "_RegisterAction_max16",
            "_MathUnit_execute", "_RegisterParam_read"}
_OPERATORS = {"+", "-", "|+|", "|-|", "&", "|", "^", "~", "?", "and", "or", "not", "d2b", "b2d"}
_OPERATORS |= ORDERING | EQUALITY


class _Body:
    """One RegisterAction's body as the checks read it."""

    def __init__(self, g: Gress, ra: dict) -> None:
        self.ra = ra
        self.state = ra.get("state")
        self.value = {tuple(v) for v in ra.get("value", [])}
        self.results = {tuple(r) for r in ra.get("results", [])}
        prims = ra.get("primitives", [])
        self.locals = {(p["parameters"][0]["value"][0], p["parameters"][0]["value"][1])
                       for p in prims if p.get("op") == "assign"
                       and unwrap(p["parameters"][0]).get("type") == "field"
                       and p["parameters"][0]["value"][0] != self.state}
        self.pos = position(ra.get("source_info"))
        self.widths = g.widths

    def kind(self, node: dict | None) -> str:
        """mem (the cell), local (a body temporary), phv (a packet field), const or other."""
        node = unwrap(node)
        if not isinstance(node, dict):
            return "other"
        if node.get("type") == "field":
            f = (node["value"][0], node["value"][1])
            if f in self.value:
                return "mem"
            if f in self.locals or f[0] == self.state:
                return "local"
            return "phv"
        if constant(node) is not None:
            return "const"
        return "other"


def _is_mask(node: dict | None) -> bool:
    """A constant 2^k - 1: how our lowering keeps a result to its width."""
    value = constant(node)
    return value is not None and is_power_of_two(value + 1)


def _terms(body: _Body, node: dict | None, out: list[str]) -> None:
    """Flatten a sum/difference into the kinds of its terms."""
    node = unwrap(node)
    if isinstance(node, dict) and "op" in node and "type" not in node:
        op = node["op"]
        if op in ("+", "-"):
            _terms(body, node.get("left"), out)
            _terms(body, node.get("right"), out)
            return
        if op == "&" and _is_mask(node.get("right")):
            _terms(body, node.get("left"), out)
            return
        if op == "b2d":
            _terms(body, node.get("right"), out)
            return
        out.append("other")
        return
    out.append(body.kind(node))


def _comparisons(node: dict | None, found: list[dict]) -> None:
    """Every relation in a condition; a bare boolean field is a comparison with 0."""
    node = unwrap(node)
    if not isinstance(node, dict):
        return
    if "op" in node and "type" not in node:
        op = node["op"]
        if op in ORDERING | EQUALITY:
            found.append(node)
        elif op in ("and", "or", "not", "d2b", "b2d"):
            for key in ("left", "right"):
                _comparisons(node.get(key), found)
        elif op == "?":
            _comparisons(node.get("cond"), found)
        return
    if node.get("type") == "field":
        found.append({"op": "!=", "left": node, "right": {"type": "hexstr", "value": "0x0"}})


def _walk(node: dict | None, parent: str | None = None):
    """Every (operation, its parent operator) inside `node`."""
    node = unwrap(node)
    if isinstance(node, dict) and "op" in node and "type" not in node:
        yield node, parent
        for key in ("cond", "left", "right"):
            yield from _walk(node.get(key), node["op"])


def check_body(g: Gress, ra: dict, device: Device) -> list[Finding]:
    """Every way one RegisterAction's body exceeds the stateful ALU."""
    body = _Body(g, ra)
    found: list[Finding] = []
    comparisons: dict[str, dict] = {}
    updates: dict[tuple, int] = {}
    name = ra["name"]
    for prim in ra.get("primitives", []):
        op = prim.get("op", "")
        params = prim.get("parameters", [])
        pos = position(prim.get("source_info"), body.pos)
        if op not in _STATEMENTS | _METHODS:
            found.append(Finding("salu-operators", pos,
                                 f"RegisterAction {name}: {op} is not something a stateful ALU can do"))
            continue
        exprs = []
        if op == "_jump_if_zero":
            relations: list[dict] = []
            _comparisons(params[0], relations)
            for rel in relations:
                comparisons.setdefault(render(rel), {"node": rel, "pos": pos})
            exprs.append(params[0])
        elif op == "assign":
            dest = unwrap(params[0])
            if dest.get("type") == "field":
                key = (dest["value"][0], dest["value"][1])
                if key in body.value:
                    updates[key] = updates.get(key, 0) + 1
            exprs.append(params[1])
        elif op in _METHODS:
            exprs.extend(params[1:])
        for expr in exprs:
            for node, parent in _walk(expr):
                operator = node["op"]
                allowed = operator in _OPERATORS or (operator in ("/", "%") and device.salu_divmod)
                # A slice is lowered as a constant right shift under a mask, a
                # concatenation as a constant left shift under an or.
                if constant(node.get("right")) is not None and (
                        (operator == ">>" and parent == "&") or (operator == "<<" and parent == "|")):
                    allowed = True
                if not allowed:
                    found.append(Finding("salu-operators", pos,
                                         f"RegisterAction {name}: operator {operator} is not in the "
                                         f"{device.label} stateful ALU"))
                if operator == "?" and not is_min_max(node):
                    relations = []
                    _comparisons(node.get("cond"), relations)
                    for rel in relations:
                        comparisons.setdefault(render(rel), {"node": rel, "pos": pos})
                if operator in ORDERING | EQUALITY and op == "assign":
                    comparisons.setdefault(render(node), {"node": node, "pos": pos})
        for expr in exprs:
            for field, width in _phv_reads(body, g, expr):
                limit = min(device.salu_phv_input, max(8, _cell_width(g, ra)))
                if width > limit:
                    found.append(Finding("salu-phv-width", pos,
                                         f"RegisterAction {name} reads {field[0]}.{field[1]} "
                                         f"(bit<{width}>) but its stateful ALU works on {limit} bits"))
    for text, cmp in comparisons.items():
        terms: list[str] = []
        _terms(body, cmp["node"].get("left"), terms)
        _terms(body, cmp["node"].get("right"), terms)
        if "other" in terms or terms.count("mem") > 1 or terms.count("phv") > 1:
            found.append(Finding("salu-compare-form", cmp["pos"],
                                 f"RegisterAction {name}: comparison {text} is not (±a packet field "
                                 "±the cell ±a constant)"))
    if len(comparisons) > device.cmp_units:
        found.append(Finding("salu-comparisons", body.pos,
                             f"RegisterAction {name} needs {len(comparisons)} comparisons; the "
                             f"{device.label} stateful ALU has {device.cmp_units}"))
    for key, count in sorted(updates.items()):
        if count > 2:
            found.append(Finding("salu-updates", body.pos,
                                 f"RegisterAction {name} writes {key[1]} {count} times; each half of "
                                 "the cell has two update units"))
    if len(body.results) > device.salu_outputs:
        found.append(Finding("salu-outputs", body.pos,
                             f"RegisterAction {name} returns {len(body.results)} values; the "
                             f"{device.label} stateful ALU returns {device.salu_outputs}"))
    return found


# Operators whose low result bits depend only on the operands' low bits: a mask
# above them limits how much of a packet field the ALU really reads.
_LOW_BITS = {"+", "-", "&", "|", "^", "~", "b2d", "|+|", "|-|"}


def _phv_reads(body: _Body, g: Gress, node: dict | None, bits: int | None = None):
    """(packet field, bits of it the body reads): a slice `f[15:0]` (lowered as a mask)
    reads 16 bits of `f`, not all of it."""
    node = unwrap(node)
    if not isinstance(node, dict):
        return
    if "op" in node and "type" not in node:
        op = node["op"]
        if op == "&" and _is_mask(node.get("right")):
            mask_bits = (constant(node.get("right")) + 1).bit_length() - 1
            yield from _phv_reads(body, g, node.get("left"), min(bits or mask_bits, mask_bits))
            return
        if op == ">>" and constant(node.get("right")) is not None and bits is not None:
            yield from _phv_reads(body, g, node.get("left"), bits + constant(node.get("right")))
            return
        keep = bits if op in _LOW_BITS else None
        for key in ("cond", "left", "right"):
            yield from _phv_reads(body, g, node.get(key), keep)
        return
    for f in fields(node):
        if f[1] != "$valid$" and body.kind({"type": "field", "value": list(f)}) == "phv":
            width = g.widths.field(f) or 0
            yield f, min(width, bits) if bits is not None else width


def _cell_width(g: Gress, ra: dict) -> int:
    """The width one half of the register's cell has."""
    array = g.registers.get(ra.get("register"), {})
    layout = array.get("layout")
    return layout[0]["bitwidth"] if layout else array.get("bitwidth", 32)


def _constants(ra: dict) -> set[int]:
    """The constants a body computes with (jump targets and width masks excluded)."""
    values: set[int] = set()
    for prim in ra.get("primitives", []):
        op = prim.get("op", "")
        params = prim.get("parameters", [])
        if op == "_jump":
            continue
        exprs = params[:1] if op == "_jump_if_zero" else params[1:]
        for expr in exprs:
            values |= _constants_in(expr)
    return values


def _constants_in(node: dict | None) -> set[int]:
    """Constants inside one operand, read as two's complement of their written width."""
    node = unwrap(node)
    if not isinstance(node, dict):
        return set()
    if "op" in node and "type" not in node:
        if node["op"] == "&" and _is_mask(node.get("right")):
            return _constants_in(node.get("left"))
        found: set[int] = set()
        for key in ("cond", "left", "right"):
            found |= _constants_in(node.get(key))
        return found
    value = constant(node)
    if value is None or node.get("type") != "hexstr":
        return set()
    width = max(len(node["value"][2:]) * 4, 1)
    if value >= 1 << (width - 1) and width > 1:
        value -= 1 << width
    return {value}


def check_register(g: Gress, register: str, actions: list[dict], device: Device) -> list[Finding]:
    """What all RegisterActions of one register share: instruction rows and constants."""
    found: list[Finding] = []
    array = g.registers.get(register, {})
    pos = position(array.get("source_info"))
    if len(actions) > device.salu_instructions:
        found.append(Finding("salu-instructions", pos,
                             f"register {register} has {len(actions)} RegisterActions; its stateful "
                             f"ALU holds {device.salu_instructions}"))
    large = set()
    for ra in actions:
        large |= {v for v in _constants(ra) if not device.salu_const_min <= v <= device.salu_const_max}
    if len(large) > device.salu_regfile_rows:
        found.append(Finding("salu-constants", pos,
                             f"the RegisterActions of register {register} use {len(large)} constants "
                             f"outside {device.salu_const_min}..{device.salu_const_max} "
                             f"({', '.join(map(str, sorted(large)))}); the stateful ALU has "
                             f"{device.salu_regfile_rows} register-file rows"))
    return found


def check_gress(g: Gress, device: Device) -> list[Finding]:
    """Every RegisterAction of one gress, then every register's shared limits."""
    found: list[Finding] = []
    by_register: dict[str, list[dict]] = {}
    for ra in g.register_actions.values():
        found += check_body(g, ra, device)
        by_register.setdefault(ra.get("register", ""), []).append(ra)
    for register, actions in sorted(by_register.items()):
        found += check_register(g, register, actions, device)
    return found
