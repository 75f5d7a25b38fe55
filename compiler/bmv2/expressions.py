"""Lowering of typed P4 expressions to BMv2 operands, with p4c's masking conventions.

Results follow formats.md §1.14: arithmetic on `bit<W>` is masked back to W bits, on
`int<W>` wrapped with `two_comp_mod`; booleans and data never mix implicitly (`d2b`,
`b2d`); action data appears as `local` inside expressions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .context import Context, field_width, is_signed, strip_type, unsupported
from .hexstr import hexstr
from .storage import (
    ConstRef,
    Env,
    ExprRef,
    FieldRef,
    HeaderRef,
    InstanceRef,
    RuntimeDataRef,
    StackRef,
    StructRef,
    UnionRef,
    header_leaves,
)


@dataclass(frozen=True)
class StackMember:
    """`s.next`, `s.last`, `s.lastIndex` or `s.size` of a header stack."""

    stack: StackRef
    member: str


@dataclass(frozen=True)
class UnionStackNext:
    """`us.next.member` of a header-union stack (an extract target in parsers)."""

    stack: StackRef
    member: str


@dataclass(frozen=True)
class StackLastField:
    """`s.last.f`: field of the last valid element (`stack_field`)."""

    stack: StackRef
    field: str
    p4type: t.P4Type


@dataclass(frozen=True)
class DynamicElement:
    """`s[i]` with a run-time index."""

    stack: StackRef
    index: dict


@dataclass(frozen=True)
class DynamicField:
    """`s[i].f` with a run-time index: `access_field(dereference_header_stack(s, i), offset)`."""

    stack: StackRef
    index: dict
    offset: int
    p4type: t.P4Type


def expr_op(op: str, left: Any, right: Any, cond: Any = None) -> dict:
    """A `{"type": "expression"}` operand for `op` (`cond` only for `?`)."""
    value: dict = {"op": op, "left": left, "right": right}
    if cond is not None:
        value["cond"] = cond
    return {"type": "expression", "value": value}


def mask_operand(width: int) -> dict:
    """The all-ones mask of `width` bits, padded to whole bytes."""
    return {"type": "hexstr", "value": hexstr((1 << width) - 1, width)}


def const_operand(value: Any, p4type: t.P4Type | None, ctx: Context, node: Any = None) -> dict:
    """Operand for a compile-time value of `p4type` (`node` locates the error if it has none)."""
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, t.ErrorValue):
        return {"type": "hexstr", "value": hexstr(ctx.errors[value.member])}
    if isinstance(value, t.EnumValue):
        if value.value is not None:
            return {"type": "hexstr", "value": hexstr(value.value, t.bit_width(value.enum))}
        code = ctx.enum_values.get((str(value.enum), value.member), 0)
        return {"type": "hexstr", "value": hexstr(code, 32)}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, int):
        base = strip_type(p4type) if p4type is not None else None
        if isinstance(base, t.Bits) and base.width > 0:
            return {"type": "hexstr", "value": hexstr(value, base.width)}
        return {"type": "hexstr", "value": hexstr(value)}
    raise unsupported(node, f"the compile-time value {value!r} as a single operand")


def const_binding(value: Any, p4type: t.P4Type) -> Any:
    """A compile-time value as a binding: a struct or tuple value (a tuple of its fields'
    values) is a `StructRef` of constants, so it is copied, compared and passed field by
    field like a struct variable; anything else is a `ConstRef`."""
    base = strip_type(p4type)
    if isinstance(value, tuple) and isinstance(base, t.Tuple):
        base = t.Struct(name="tuple", fields=tuple((f"f{i}", e) for i, e in enumerate(base.elements)))
    if isinstance(value, tuple) and isinstance(base, t.Struct) and len(value) == len(base.fields):
        return StructRef(
            base, {name: const_binding(v, ft) for (name, ft), v in zip(base.fields, value, strict=True)}
        )
    return ConstRef(value, p4type)


def literal_member(e: ast.Expression, p4type: Any, name: str) -> ast.Expression | None:
    """Component `name` of a struct or list expression of struct or header type `p4type`."""
    while isinstance(e, ast.CastExpression):
        e = e.expr
    if isinstance(e, ast.StructExpression):
        return next((f.value for f in e.fields if f.name == name), None)
    if isinstance(e, ast.ListExpression) and isinstance(p4type, t.Struct | t.Header):
        names = [n for n, _ in p4type.fields]
        if name in names and names.index(name) < len(e.components):
            return e.components[names.index(name)]
    return None


def is_bool(p4type: Any) -> bool:
    """Whether `p4type` is `bool`."""
    return isinstance(p4type, t.Bool)


def is_boolean_operand(operand: dict) -> bool:
    """Whether a lowered operand is a BMv2 boolean (needs `b2d` before storing)."""
    if operand.get("type") == "bool":
        return True
    if operand.get("type") != "expression":
        return False
    op = operand["value"].get("op")
    if op == "?":
        return is_boolean_operand(operand["value"]["left"])
    return op in {
        "==",
        "!=",
        "<",
        "<=",
        ">",
        ">=",
        "and",
        "or",
        "not",
        "d2b",
        "valid",
        "valid_union",
    }


def to_data(operand: dict) -> dict:
    """`operand` as data: booleans become `b2d(operand)`."""
    return expr_op("b2d", None, operand) if is_boolean_operand(operand) else operand


def to_bool(operand: dict) -> dict:
    """`operand` as a boolean: data becomes `d2b(operand)`."""
    return operand if is_boolean_operand(operand) else expr_op("d2b", None, operand)


def primitive_arg(operand: dict) -> dict:
    """An operand as a primitive parameter: action data as `runtime_data`, expressions wrapped."""
    kind = operand.get("type")
    if kind == "local":
        return {"type": "runtime_data", "value": operand["value"]}
    if kind in ("expression", "stack_field"):
        return {"type": "expression", "value": operand}
    return operand


def return_expression(decl: ast.FunctionDeclaration) -> ast.Expression | None:
    """The expression of a function whose whole body is `return expression;`, else None."""
    body = [c for c in decl.body.components if not isinstance(c, ast.EmptyStatement)]
    if len(body) == 1 and isinstance(body[0], ast.ReturnStatement):
        return body[0].value
    return None


class ExpressionLowering:
    """Turns expressions into operands against an `Env` of bindings."""

    def __init__(self, ctx: Context, in_parser: bool = False) -> None:
        self.ctx = ctx
        self.in_parser = in_parser
        self.lookahead_offset = 0
        # Computes a call used as a value (function, value-returning extern method) into a
        # binding before the current statement; set by statement lowering, else None.
        self.inline_call: Any = None
        # Computes `a && b`, `a || b` and `c ? x : y` into a binding, evaluating only the
        # operands P4 evaluates (set by action lowering, where jumps exist), else None.
        self.short_circuit: Any = None
        # Expressions already computed into a binding (by node identity), e.g. a table's hit.
        self.overrides: dict[int, Any] = {}
        # Copies an operand into a fresh temporary before the current statement (so a later
        # call cannot change it); set by statement lowering, else None.
        self.save: Any = None

    # ---------------------------------------------------------------- resolution

    def resolve(self, e: ast.Expression, env: Env) -> Any:
        """The binding an l-value or composite expression denotes."""
        if id(e) in self.overrides:
            return self.overrides[id(e)]
        if isinstance(e, ast.ThisExpression):
            # Bound (under the class itself) where an abstract method implementation is lowered.
            binding = env.lookup(ast.ThisExpression)
            if binding is None:
                raise CompileError(e.pos, "'this' outside an abstract method implementation")
            return binding
        if isinstance(e, ast.PathExpression):
            binding = env.lookup(e.ref)
            if binding is None:
                if e.const_value is not None:
                    return const_binding(e.const_value, e.type)
                if isinstance(e.ref, ast.ConstantDeclaration):
                    return const_binding(e.ref.value.const_value, e.ref.p4type or e.type)
                raise CompileError(e.pos, f"{e.name} has no storage in the BMv2 back end")
            if isinstance(binding, ExprRef):
                if isinstance(binding.expr, ast.PathExpression | ast.MemberExpression | ast.IndexExpression):
                    return self.resolve(binding.expr, binding.env)
                # A computed argument (`(bit<32>)p` passed on to a nested call): read by value.
                return binding
            return binding
        if isinstance(e, ast.MemberExpression):
            if e.const_value is not None and not isinstance(
                e.expr, ast.PathExpression | ast.MemberExpression
            ):
                return const_binding(e.const_value, e.type)
            if e.const_value is not None and isinstance(e.const_value, t.ErrorValue | t.EnumValue):
                return const_binding(e.const_value, e.type)
            base = self.resolve(e.expr, env)
            return self.member(base, e)
        if isinstance(e, ast.IndexExpression):
            base = self.resolve(e.expr, env)
            if isinstance(base, StructRef):
                index = self.constant_int(e.index)
                return base.fields[f"f{index}"]
            if not isinstance(base, StackRef):
                raise unsupported(e, "indexing something other than a header stack")
            if e.index.const_value is not None:
                index = int(e.index.const_value)
                if not 0 <= index < len(base.elements):
                    raise CompileError(e.pos, f"index {index} is out of bounds of {base.name}")
                return base.elements[index]
            return DynamicElement(base, self.value(e.index, env))
        if isinstance(e, ast.MethodCallExpression) and self.computed_call(e):
            return self.inline_call(e, env)
        if isinstance(e, ast.DontCareExpression):
            # A discarded out argument writes a fresh, never-read local (p4c names it `arg`).
            return self.ctx.local_storage("arg", e.type)
        if e.const_value is not None:
            return const_binding(e.const_value, e.type)
        raise unsupported(e, f"the expression {type(e).__name__}")

    def calls_in(self, e: ast.Expression) -> bool:
        """Whether `e` contains a call whose value statement lowering computes."""
        stack: list[Any] = [e]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.MethodCallExpression) and self.computed_call(node):
                return True
            if isinstance(node, ast.Node):
                stack.extend(v for k, v in vars(node).items()
                             if k not in ("type", "const_value", "ref", "call") and isinstance(v, ast.Node | list))
            elif isinstance(node, list):
                stack.extend(node)
        return False

    def computed_call(self, e: ast.MethodCallExpression) -> bool:
        """Whether call `e` is a function or extern method whose value statement lowering computes."""
        call = e.call
        return (
            self.inline_call is not None
            and call is not None
            and call.kind in (ast.CallKind.FUNCTION, ast.CallKind.EXTERN_METHOD, ast.CallKind.EXTERN_FUNCTION)
            and not isinstance(strip_type(e.type), t.Void)
        )

    def member(self, base: Any, e: ast.MemberExpression) -> Any:
        """Member `e.member` of binding `base`."""
        name = e.member
        if isinstance(base, HeaderRef):
            try:
                return base.member(name)
            except KeyError:
                raise CompileError(e.pos, f"{base.name} has no field {name}") from None
        if isinstance(base, StructRef):
            if name not in base.fields:
                raise CompileError(e.pos, f"struct {base.p4type.name} has no field {name}")
            return base.fields[name]
        if isinstance(base, UnionRef):
            return base.members[name]
        if isinstance(base, ExprRef):
            component = literal_member(base.expr, strip_type(e.expr.type), name)
            if component is not None:
                # `f({1, 2})` then `v.a` in f's body: the literal's component, lowered where used.
                return ExprRef(component, base.env)
        if isinstance(base, StackRef):
            if name in ("next", "last", "lastIndex", "size"):
                return StackMember(base, name)
            raise CompileError(e.pos, f"header stack has no member {name}")
        if isinstance(base, StackMember) and base.member == "next" and base.stack.is_union_stack:
            return UnionStackNext(base.stack, name)
        if isinstance(base, StackMember) and base.member == "last":
            element = base.stack.p4type.element
            return StackLastField(base.stack, name, element.field_type(name))
        if isinstance(base, DynamicElement):
            element = base.stack.p4type.element
            if len(header_leaves(element)) != len(element.fields):
                raise unsupported(e, "a run-time stack index into a header with struct-typed fields")
            offset = next(i for i, (fname, _) in enumerate(element.fields) if fname == name)
            return DynamicField(base.stack, base.index, offset, element.field_type(name))
        if isinstance(base, InstanceRef):
            return base
        raise unsupported(e, f"member access .{name} here")

    def constant_int(self, e: ast.Expression) -> int:
        """The value of a compile-time integer expression."""
        value = e.const_value
        if isinstance(value, t.EnumValue) and value.value is not None:
            return value.value
        if not isinstance(value, int) or isinstance(value, bool):
            raise CompileError(e.pos, "a compile-time constant is required here")
        return value

    # ---------------------------------------------------------------- operands

    def binding_operand(self, binding: Any, e: ast.Node | None = None) -> dict:
        """Operand reading `binding` (booleans stay data: callers apply `to_bool`)."""
        if isinstance(binding, FieldRef):
            return binding.operand()
        if isinstance(binding, RuntimeDataRef):
            return {"type": "local", "value": binding.index}
        if isinstance(binding, ConstRef):
            return const_operand(binding.value, binding.p4type, self.ctx, e)
        if isinstance(binding, HeaderRef):
            return {"type": "header", "value": binding.name}
        if isinstance(binding, UnionRef):
            return {"type": "header_union", "value": binding.name}
        if isinstance(binding, StackRef):
            kind = "header_union_stack" if binding.is_union_stack else "header_stack"
            return {"type": kind, "value": binding.name}
        if isinstance(binding, StackLastField):
            return {"type": "stack_field", "value": [binding.stack.name, binding.field]}
        if isinstance(binding, DynamicField):
            return expr_op(
                "access_field", self.dereference(binding.stack, binding.index), binding.offset
            )
        if isinstance(binding, DynamicElement):
            return self.dereference(binding.stack, binding.index)
        if isinstance(binding, StackMember):
            if binding.member == "lastIndex":
                return expr_op("last_stack_index", None, self.binding_operand(binding.stack))
            if binding.member == "size":
                return {"type": "hexstr", "value": hexstr(binding.stack.p4type.size, 32)}
        raise unsupported(e, "this value as an operand")

    def dereference(self, stack: StackRef, index: dict) -> dict:
        """`dereference_header_stack(stack, index)` (or the union-stack form)."""
        op = "dereference_union_stack" if stack.is_union_stack else "dereference_header_stack"
        return expr_op(op, self.binding_operand(stack), to_data(index))

    def value(self, e: ast.Expression, env: Env) -> dict:
        """Operand computing `e` (booleans as BMv2 booleans, everything else as data)."""
        p4type = e.type
        if id(e) in self.overrides:
            operand = self.binding_operand(self.overrides[id(e)], e)
            return expr_op("d2b", None, operand) if is_bool(strip_type(p4type)) else operand
        if e.const_value is not None and not isinstance(e, ast.MethodCallExpression):
            return const_operand(e.const_value, p4type, self.ctx, e)
        if isinstance(e, ast.PathExpression | ast.MemberExpression | ast.IndexExpression):
            if isinstance(e, ast.MemberExpression) and isinstance(e.expr, ast.MethodCallExpression):
                return self.call_member(e, env)
            binding = self.resolve(e, env)
            if isinstance(binding, ExprRef):
                return self.value(binding.expr, binding.env)
            operand = self.binding_operand(binding, e)
            if is_bool(strip_type(p4type)) and not isinstance(binding, ConstRef):
                return expr_op("d2b", None, operand)
            return operand
        if isinstance(e, ast.MethodCallExpression):
            return self.call_value(e, env)
        if isinstance(e, ast.SliceExpression):
            hi = self.constant_int(e.hi)
            lo = self.constant_int(e.lo)
            inner = self.value(e.expr, env)
            if lo:
                inner = expr_op(">>", inner, {"type": "hexstr", "value": hexstr(lo)})
            return expr_op("&", inner, mask_operand(hi - lo + 1))
        if isinstance(e, ast.UnaryExpression):
            return self.unary(e, env)
        if isinstance(e, ast.BinaryExpression):
            return self.binary(e, env)
        if isinstance(e, ast.TernaryExpression):
            if self.short_circuit is not None and (self.calls_in(e.then) or self.calls_in(e.otherwise)):
                # A branch calls something: only the chosen branch may run.
                operand = self.binding_operand(self.short_circuit(e, env), e)
                return expr_op("d2b", None, operand) if is_bool(strip_type(p4type)) else operand
            cond = to_bool(self.value(e.cond, env))
            then = self.value(e.then, env)
            other = self.value(e.otherwise, env)
            return expr_op("?", then, other, cond)
        if isinstance(e, ast.CastExpression):
            return self.cast(self.value(e.expr, env), e.expr.type, p4type)
        raise unsupported(e, f"the expression {type(e).__name__}")

    def switch_condition(self, expr: ast.Expression, labels: list[ast.Expression], env: Env) -> dict:
        """`expr == l1 || expr == l2 …` for the labels of one switch case."""
        value = to_data(self.value(expr, env))
        cond: dict | None = None
        for label in labels:
            if label.const_value is None:
                raise CompileError(label.pos, "switch labels must be compile-time constants")
            test = expr_op("==", value, const_operand(label.const_value, expr.type, self.ctx))
            cond = test if cond is None else expr_op("or", cond, test)
        return cond

    def wrap(self, operand: dict, p4type: Any) -> dict:
        """Bring an arithmetic result back into range for `p4type`."""
        base = strip_type(p4type)
        if not isinstance(base, t.Bits):
            return operand
        if base.signed:
            return expr_op("two_comp_mod", operand, {"type": "hexstr", "value": hexstr(base.width)})
        return expr_op("&", operand, mask_operand(base.width))

    def unary(self, e: ast.UnaryExpression, env: Env) -> dict:
        """`!x`, `~x`, `-x`, `+x`."""
        operand = self.value(e.operand, env)
        if e.op == "!":
            return expr_op("not", None, to_bool(operand))
        if e.op == "~":
            return self.wrap(expr_op("~", None, operand), e.type)
        if e.op == "-":
            zero = const_operand(0, e.type, self.ctx)
            return self.wrap(expr_op("-", zero, operand), e.type)
        return operand

    def binary(self, e: ast.BinaryExpression, env: Env) -> dict:
        """Binary operators, including `++` and the saturating ones."""
        op = e.op
        if op in ("&&", "||"):
            if self.short_circuit is not None and self.calls_in(e.right):
                # The right operand calls something: evaluate it only when P4 does.
                operand = self.binding_operand(self.short_circuit(e, env), e)
                return expr_op("d2b", None, operand)
            left = to_bool(self.value(e.left, env))
            right = to_bool(self.value(e.right, env))
            return expr_op("and" if op == "&&" else "or", left, right)
        if op == "++":
            width_right = field_width(strip_type(e.right.type))
            left, right = self.in_order(e.left, e.right, env)
            shifted = self.wrap(
                expr_op("<<", left, {"type": "hexstr", "value": hexstr(width_right)}), e.type
            )
            return expr_op("|", shifted, expr_op("&", right, mask_operand(width_right)))
        if op in ("==", "!=") and isinstance(strip_type(e.left.type), t.StructLike | t.Stack):
            equal = self.composite_equal(self.resolve(e.left, env), self.resolve(e.right, env), e)
            return equal if op == "==" else expr_op("not", None, equal)
        left, right = self.in_order(e.left, e.right, env)
        if op in ("==", "!=", "<", "<=", ">", ">="):
            if is_bool(strip_type(e.left.type)) and op in ("==", "!="):
                return expr_op(op, to_bool(left), to_bool(right))
            return expr_op(op, to_data(left), to_data(right))
        if op in ("|+|", "|-|"):
            base = strip_type(e.type)
            inner = expr_op("+" if op == "|+|" else "-", left, right)
            cast = "sat_cast" if is_signed(base) else "usat_cast"
            return expr_op(cast, inner, {"type": "hexstr", "value": hexstr(t.bit_width(base))})
        if op in ("&", "|", "^"):
            return expr_op(op, left, right)
        if op == "-" and e.right.const_value is not None and isinstance(strip_type(e.type), t.Bits):
            base = strip_type(e.type)
            if not base.signed and isinstance(e.right.const_value, int):
                modulus = 1 << base.width
                addend = (-int(e.right.const_value)) % modulus
                return self.wrap(
                    expr_op("+", left, {"type": "hexstr", "value": hexstr(addend, base.width)}),
                    e.type,
                )
        if op in ("<<", ">>"):
            amount = e.right.const_value
            if isinstance(amount, int) and amount > 256:
                raise CompileError(e.pos, f"shift amount {amount} is too large for BMv2")
            rtype = strip_type(e.right.type)
            if amount is None and isinstance(rtype, t.Bits) and rtype.width > 8:
                return self.wide_shift(e, left, right)
        if op in ("+", "-", "*", "<<", ">>"):
            return self.wrap(expr_op(op, left, right), e.type)
        if op in ("/", "%"):
            return expr_op(op, left, right)
        raise unsupported(e, f"the operator {op}")

    def in_order(self, first: ast.Expression, second: ast.Expression, env: Env) -> tuple[dict, dict]:
        """Operands of `first` and then `second` (spec 8.1: left to right). When `second` calls
        something, which runs before the expression, `first`'s value is saved before it."""
        left = self.value(first, env)
        if self.save is not None and first.const_value is None and self.calls_in(second):
            saved = self.binding_operand(self.save(to_data(left), first.type, first), first)
            left = expr_op("d2b", None, saved) if is_bool(strip_type(first.type)) else saved
        return left, self.value(second, env)

    def wide_shift(self, e: ast.BinaryExpression, left: dict, right: dict) -> dict:
        """`x << s` with `s` wider than bit<8>, as `s >= W ? <all shifted out> : x << s[7:0]`.

        p4c's BMv2 back end takes 8-bit shift amounts only; an amount of at least the
        operand's width shifts every bit out (P4 semantics), so the low byte suffices below it.
        """
        base = strip_type(e.left.type)
        width = t.bit_width(base)
        if not isinstance(base, t.Bits) or width > 256:
            raise CompileError(
                e.pos, "a variable shift amount wider than bit<8> of a value wider than 256 bits "
                "is not supported by the BMv2 back end",
            )
        limit = {"type": "hexstr", "value": hexstr(width, t.bit_width(strip_type(e.right.type)))}
        out_of_range = expr_op(">=", to_data(right), limit)
        low_byte = expr_op("&", to_data(right), mask_operand(8))
        shifted = self.wrap(expr_op(e.op, left, low_byte), e.type)
        if e.op == ">>" and base.signed:
            # An arithmetic shift by W or more leaves only copies of the sign bit.
            saturated = expr_op(">>", left, {"type": "hexstr", "value": hexstr(width - 1)})
        else:
            saturated = const_operand(0, e.type, self.ctx)
        return expr_op("?", saturated, shifted, out_of_range)

    def composite_equal(self, left: Any, right: Any, e: ast.Node) -> dict:
        """`left == right` on headers, structs and stacks, field by field.

        As p4c's RemoveComplexComparisons: two headers are equal when both are invalid, or
        both are valid with equal fields.
        """
        if isinstance(left, HeaderRef) and isinstance(right, HeaderRef):
            fields = self._all_equal(
                [(left.member(name), right.member(name)) for name, _ in left.p4type.fields], e
            )
            if left.metadata or right.metadata:
                return fields
            lvalid = expr_op("d2b", None, self.valid_field(left, e))
            rvalid = expr_op("d2b", None, self.valid_field(right, e))
            both_invalid = expr_op(
                "and", expr_op("not", None, lvalid), expr_op("not", None, rvalid)
            )
            both_valid = expr_op("and", expr_op("and", lvalid, rvalid), fields)
            return expr_op("or", both_invalid, both_valid)
        if isinstance(left, StructRef) and isinstance(right, StructRef):
            return self._all_equal([(left.fields[n], right.fields[n]) for n in left.fields], e)
        if isinstance(left, StackRef) and isinstance(right, StackRef):
            return self._all_equal(list(zip(left.elements, right.elements, strict=True)), e)
        if isinstance(left, HeaderRef | StructRef | StackRef | UnionRef) or isinstance(
            right, HeaderRef | StructRef | StackRef | UnionRef
        ):
            raise unsupported(e, "comparing these composite values")
        return expr_op("==", to_data(self.binding_operand(left, e)), to_data(self.binding_operand(right, e)))

    def _all_equal(self, pairs: list[tuple[Any, Any]], e: ast.Node) -> dict:
        """The conjunction of `a == b` over `pairs` (true when there are none)."""
        result: dict | None = None
        for a, b in pairs:
            test = self.composite_equal(a, b, e)
            result = test if result is None else expr_op("and", result, test)
        return result if result is not None else {"type": "bool", "value": True}

    def cast(self, operand: dict, source: Any, target: Any) -> dict:
        """`(target) operand` where operand has type `source`."""
        src = strip_type(source)
        dst = strip_type(target)
        if is_bool(dst):
            if is_bool(src):
                return operand
            return expr_op(
                "!=",
                to_data(operand),
                {"type": "hexstr", "value": hexstr(0, t.bit_width(src) or 8)},
            )
        if is_bool(src):
            one = const_operand(1, dst, self.ctx)
            zero = const_operand(0, dst, self.ctx)
            return expr_op("?", one, zero, to_bool(operand))
        if isinstance(dst, t.Bits):
            if (
                isinstance(src, t.Bits)
                and src.signed == dst.signed
                and src.width <= dst.width
                and not dst.signed
            ):
                return operand
            if isinstance(src, t.Bits) and src == dst:
                return operand
            return self.wrap(operand, dst)
        return operand

    def call_value(self, e: ast.MethodCallExpression, env: Env) -> dict:
        """Value-returning calls: `isValid()`, `lookahead<T>()` in parsers."""
        call = e.call
        if call is None:
            raise unsupported(e, "an unresolved call")
        if call.kind == ast.CallKind.BUILTIN and call.builtin == "isValid":
            target = self.resolve(call.receiver, env)
            if isinstance(target, UnionRef):
                return expr_op("valid_union", None, self.binding_operand(target))
            return expr_op("d2b", None, self.valid_field(target, e))
        if (
            call.kind == ast.CallKind.EXTERN_METHOD
            and getattr(call.target, "name", "") == "lookahead"
        ):
            if not self.in_parser:
                raise unsupported(e, "lookahead outside a parser")
            width = t.bit_width(strip_type(e.type))
            return {"type": "lookahead", "value": [self.lookahead_offset, width]}
        if call.kind == ast.CallKind.FUNCTION and return_expression(call.target) is not None and not (
                self.inline_call is not None and any(a is not None and self.calls_in(a) for a in call.args)):
            # `return expr;` read in place, unless an argument calls something: that one is
            # computed once, through the statement lowering's copy-in (below).
            return self.inline_function(e, env)
        if self.computed_call(e):
            binding = self.inline_call(e, env)
            operand = self.binding_operand(binding, e)
            return expr_op("d2b", None, operand) if is_bool(strip_type(e.type)) else operand
        raise unsupported(e, f"calling {getattr(call.target, 'name', 'this')} in an expression here")

    def inline_function(self, e: ast.MethodCallExpression, env: Env) -> dict:
        """A function whose body is one `return expr;`, evaluated with its arguments bound."""
        decl = e.call.target
        fenv = Env(parent=env, prefix=env.prefix)
        for param, arg in zip(decl.params, e.call.args, strict=False):
            if arg is not None:
                fenv.bind(param, ExprRef(arg, env))
        return self.value(return_expression(decl), fenv)

    def call_member(self, e: ast.MemberExpression, env: Env) -> dict:
        """`lookahead<H>().f` in a parser: a lookahead at the field's bit offset."""
        inner = e.expr
        call = inner.call
        if (
            call is not None
            and call.kind == ast.CallKind.EXTERN_METHOD
            and call.target.name == "lookahead"
        ):
            header = strip_type(inner.type)
            offset = 0
            for fname, ftype in header.fields:
                if fname == e.member:
                    return {
                        "type": "lookahead",
                        "value": [self.lookahead_offset + offset, t.bit_width(ftype)],
                    }
                offset += t.bit_width(ftype)
        if isinstance(inner, ast.MethodCallExpression) and self.computed_call(inner):
            operand = self.binding_operand(self.resolve(e, env), e)
            return expr_op("d2b", None, operand) if is_bool(strip_type(e.type)) else operand
        if call is not None and call.kind == ast.CallKind.TABLE_APPLY:
            raise CompileError(
                e.pos,
                f"t.apply().{e.member} is only supported in an apply block (not in actions or functions) "
                "by the BMv2 back end",
            )
        raise unsupported(e, "this member of a call result")

    def valid_field(self, target: Any, node: ast.Node) -> dict:
        """The `$valid$` field of a header (or a run-time stack element's validity)."""
        if isinstance(target, HeaderRef):
            return {"type": "field", "value": [target.name, "$valid$"]}
        if isinstance(target, DynamicElement):
            element = target.stack.p4type.element
            return expr_op(
                "access_field", self.dereference(target.stack, target.index), len(header_leaves(element))
            )
        if isinstance(target, StackMember) and target.member == "last":
            return {"type": "stack_field", "value": [target.stack.name, "$valid$"]}
        raise unsupported(node, "isValid() on this value")
