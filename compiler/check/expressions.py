"""Typing of expressions: resolves names, fills `type` and folds `const_value`.

Integer literal rules (specification, "Integer literals" and "Expressions on
bit types"): an unsized literal has type `int`; when it meets a `bit<W>` or
`int<W>` operand it takes that type and must fit; two different sized types
never mix without a cast. `int` operations between constants fold exactly.
"""

from __future__ import annotations

from .. import ast
from ..types import (
    ActionEnum,
    ApplyResult,
    Bits,
    Bool,
    Callable,
    ControlType,
    DontCare,
    Enum,
    EnumValue,
    Error,
    ErrorValue,
    Extern,
    Header,
    HeaderUnion,
    InfInt,
    ListLiteral,
    MatchKind,
    P4Type,
    ParserStateType,
    ParserType,
    SerEnum,
    Set,
    Specialized,
    Stack,
    String,
    Struct,
    StructLike,
    StructLiteral,
    Table,
    Tuple,
    TypeOf,
)
from . import consteval
from .casts import cast_allowed
from .coerce import Coercer
from .members import HEADER_METHODS, SIZE_METHODS, STACK_METHODS, UNION_METHODS, Method
from .typeresolve import _TYPE_DECLS, TypeResolver

_ARITH = ("+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^")


def _is_numeric(t: P4Type) -> bool:
    return isinstance(t, Bits | InfInt)


class ExpressionChecker(TypeResolver, Coercer):
    """Type inference for every expression form."""

    def check_expr(self, e: ast.Expression) -> P4Type:
        """Type `e` (and its subexpressions); returns and stores `e.type`."""
        handler = getattr(self, f"_x_{type(e).__name__}", None)
        if handler is None:
            raise self.fail(e.pos, f"unsupported expression {type(e).__name__} here")
        t = handler(e)
        e.type = t
        return t

    def const_int(self, expr: ast.Expression, what: str) -> int:
        """Type `expr` and return its value; it must be a compile-time integer."""
        self.check_expr(expr)
        value = expr.const_value
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(expr.pos, f"{what} must be a compile-time integer constant")
        return value

    def expect_bool(self, expr: ast.Expression, what: str) -> None:
        """Type `expr`, which must be a bool."""
        t = self.check_expr(expr)
        if not isinstance(t, Bool):
            raise self.fail(expr.pos, f"{what} must be a bool, not {t}")

    # ------------------------------------------------------------ literals

    def _x_IntLiteral(self, e: ast.IntLiteral) -> P4Type:
        if e.width is None:
            e.const_value = e.value
            return InfInt()
        t = Bits(e.width, e.signed)
        # `8w300` is truncated with a warning, as p4c does (its WARN_OVERFLOW); `4s8` is -8.
        if e.value >= (1 << e.width):
            self.warn(e.pos, f"value {e.value} does not fit in {t}; truncated to {t.wrap(e.value)}")
        e.const_value = t.wrap(e.value)
        return t

    def _x_BoolLiteral(self, e: ast.BoolLiteral) -> P4Type:
        e.const_value = e.value
        return Bool()

    def _x_StringLiteral(self, e: ast.StringLiteral) -> P4Type:
        e.const_value = e.value
        return String()

    def _x_DontCareExpression(self, e: ast.DontCareExpression) -> P4Type:
        return DontCare()

    def _x_DefaultExpression(self, e: ast.DefaultExpression) -> P4Type:
        return DontCare()

    def _x_InvalidExpression(self, e: ast.InvalidExpression) -> P4Type:
        return DontCare()

    def _x_ThisExpression(self, e: ast.ThisExpression) -> P4Type:
        this_type = getattr(self, "this_type", None)
        if this_type is None:
            raise self.fail(e.pos, "'this' may only be used in an abstract method implementation")
        return this_type

    def _x_TypeExpression(self, e: ast.TypeExpression) -> P4Type:
        return TypeOf(self.resolve_type(e.type_node))

    # ------------------------------------------------------------ names

    def _x_PathExpression(self, e: ast.PathExpression) -> P4Type:
        scope = self.scope.root() if e.is_global else self.scope
        decl = scope.lookup(e.name)
        if decl is None:
            if e.name == "error":
                return TypeOf(Error())
            raise self.fail(e.pos, f"unknown name '{e.name}'")
        e.ref = decl
        return self.type_of_decl(decl, e)

    def type_of_decl(self, decl: object, e: ast.Expression) -> P4Type:
        """The type a reference to `decl` has (and its constant value, if any)."""
        if isinstance(decl, ast.ConstantDeclaration):
            e.const_value = decl.value.const_value
            return decl.p4type
        if isinstance(decl, ast.Parameter | ast.VariableDeclaration | ast.Instantiation):
            return decl.p4type
        if isinstance(decl, ast.TableDeclaration):
            return decl.p4type
        if isinstance(decl, ast.ActionDeclaration | ast.FunctionDeclaration):
            return decl.p4type
        if isinstance(decl, ast.ExternFunctionDeclaration):
            return decl.p4type
        if isinstance(decl, ast.ParserState):
            return ParserStateType()
        if isinstance(decl, ast.ValueSetDeclaration):
            return decl.p4type
        if isinstance(decl, ast.MatchKindMember):
            e.const_value = decl.name
            return MatchKind()
        if isinstance(decl, _TYPE_DECLS):
            return TypeOf(decl.p4type)
        raise self.fail(e.pos, f"'{getattr(decl, 'name', '?')}' cannot be used as a value")

    def _x_MemberExpression(self, e: ast.MemberExpression) -> P4Type:
        base = self.check_expr(e.expr)
        m = e.member
        if isinstance(base, TypeOf):
            return self._type_member(e, base.type)
        if isinstance(base, Header | HeaderUnion) and m in (
            HEADER_METHODS if isinstance(base, Header) else UNION_METHODS
        ):
            return Method("builtin", m, base)
        if isinstance(base, StructLike):
            ft = base.field_type(m)
            if ft is not None:
                if isinstance(base, Struct) and isinstance(e.expr.const_value, tuple):
                    # A member of a compile-time struct value (`const s_t C = {...}; C.f`):
                    # the value holds the fields in declaration order.
                    names = [n for n, _ in base.fields]
                    e.const_value = e.expr.const_value[names.index(m)]
                return ft
            if m in SIZE_METHODS:
                return Method("builtin", m, base)
            raise self.fail(e.pos, f"{base} has no field '{m}'")
        if isinstance(base, Stack):
            return self._stack_member(e, base)
        if isinstance(base, Extern | Specialized) and isinstance(
            base.base if isinstance(base, Specialized) else base, Extern
        ):
            return self._extern_member(e, base)
        if isinstance(base, Table) and m == "apply":
            return Method("table_apply", m, base)
        if isinstance(base, ApplyResult):
            if m in ("hit", "miss"):
                return Bool()
            if m == "action_run":
                return ActionEnum(base.table)
        if isinstance(base, ParserType | ControlType) and m == "apply":
            return Method("block_apply", m, base, tuple(base.params))
        if (
            isinstance(base, Specialized)
            and isinstance(base.base, ParserType | ControlType)
            and m == "apply"
        ):
            return Method("block_apply", m, base, tuple(base.base.params))
        raise self.fail(e.pos, f"{base} has no member '{m}'")

    def _type_member(self, e: ast.MemberExpression, t: P4Type) -> P4Type:
        m = e.member
        if isinstance(t, Error):
            member = self.facts.error_members.get(m)
            if member is None:
                raise self.fail(e.pos, f"unknown error 'error.{m}'")
            e.ref = member
            e.const_value = ErrorValue(m)
            return Error()
        if isinstance(t, Enum):
            if m not in t.members:
                raise self.fail(e.pos, f"enum {t.name} has no member '{m}'")
            e.ref = next(x for x in t.decl.members if x.name == m)
            e.const_value = EnumValue(t, m)
            return t
        if isinstance(t, SerEnum):
            value = t.value_of(m)
            if value is None:
                raise self.fail(e.pos, f"enum {t.name} has no member '{m}'")
            e.ref = next(x for x in t.decl.members if x.name == m)
            e.const_value = EnumValue(t, m, value)
            return t
        if m in SIZE_METHODS and isinstance(t, StructLike | Bits):
            return Method("builtin", m, t)
        if m == "apply" and isinstance(t, ParserType | ControlType) and t.decl is not None:
            # Direct invocation (spec 15.1): `C.apply(...)` applies an instance of C named C.
            if not isinstance(t.decl, ast.ParserDeclaration | ast.ControlDeclaration):
                raise self.fail(e.pos, f"{t.name} is only declared: a {t.name}.apply() needs its definition")
            if t.decl.constructor_params:
                raise self.fail(e.pos, f"{t.name} has constructor parameters: instantiate it to apply it")
            return Method("block_apply", m, t, tuple(t.params))
        raise self.fail(e.pos, f"type {t} has no member '{m}'")

    def _stack_member(self, e: ast.MemberExpression, t: Stack) -> P4Type:
        m = e.member
        if m in ("next", "last"):
            if self.where.kind not in ("parser", "state"):
                raise self.fail(e.pos, f"'{m}' of a header stack may only be used in a parser")
            return t.element
        if m == "lastIndex":
            return Bits(32)
        if m == "size":
            e.const_value = t.size
            return Bits(32)
        if m in STACK_METHODS:
            return Method("builtin", m, t)
        if m in UNION_METHODS:
            raise self.fail(e.pos, f"a header stack has no method '{m}'; index an element first")
        raise self.fail(e.pos, f"a header stack has no member '{m}'")

    def _extern_member(self, e: ast.MemberExpression, t: P4Type) -> P4Type:
        extern = t.base if isinstance(t, Specialized) else t
        decl = extern.decl
        candidates = tuple(
            mp for mp in decl.methods if mp.name == e.member and not mp.is_constructor
        )
        if not candidates:
            raise self.fail(e.pos, f"extern {extern.name} has no method '{e.member}'")
        e.ref = candidates[0]
        return Method("extern_method", e.member, t, candidates)

    # ------------------------------------------------------------ operators

    def _x_UnaryExpression(self, e: ast.UnaryExpression) -> P4Type:
        t = self.check_expr(e.operand)
        op = e.op
        if op == "!":
            if not isinstance(t, Bool):
                raise self.fail(e.pos, f"'!' needs a bool operand, not {t}")
        elif op == "~":
            if not isinstance(t, Bits):
                raise self.fail(e.pos, f"'~' needs a bit<W> or int<W> operand, not {t}")
        elif not _is_numeric(t):
            raise self.fail(e.pos, f"unary '{op}' needs a numeric operand, not {t}")
        e.const_value = self._fold(e, lambda: consteval.fold_unary(op, e.operand.const_value, t))
        return t

    def _fold(self, e: ast.Expression, fn) -> object:  # noqa: ANN001
        try:
            return fn()
        except ValueError as exc:
            raise self.fail(e.pos, str(exc)) from exc

    def _x_BinaryExpression(self, e: ast.BinaryExpression) -> P4Type:
        op = e.op
        lt = self.check_expr(e.left)
        rt = self.check_expr(e.right)
        if op in ("&&", "||"):
            for side, t in ((e.left, lt), (e.right, rt)):
                if not isinstance(t, Bool):
                    raise self.fail(side.pos, f"'{op}' needs bool operands, not {t}")
            result: P4Type = Bool()
        elif op in ("<<", ">>"):
            result = self._shift(e, lt, rt)
        elif op == "++":
            result = self._concat(e, lt, rt)
        else:
            operand = self._unify_operands(e, lt, rt)
            if op in ("==", "!="):
                result = Bool()
            elif op in ("<", "<=", ">", ">="):
                if not _is_numeric(operand):
                    raise self.fail(e.pos, f"'{op}' needs numeric operands, not {operand}")
                result = Bool()
            else:
                if not _is_numeric(operand):
                    raise self.fail(e.pos, f"'{op}' needs numeric operands, not {operand}")
                if op in ("|+|", "|-|") and isinstance(operand, InfInt):
                    raise self.fail(e.pos, f"saturating '{op}' needs a sized type, not int")
                if op in ("/", "%") and e.right.const_value == 0:
                    raise self.fail(e.right.pos, "division by zero")
                if op in ("/", "%") and isinstance(operand, Bits) and operand.signed:
                    raise self.fail(e.pos, f"'{op}' is not defined on signed {operand}")
                result = operand
        left_t = e.left.type
        e.const_value = self._fold(
            e,
            lambda: consteval.fold_binary(
                op, e.left.const_value, e.right.const_value, result, left_t
            ),
        )
        return result

    def _unify_operands(self, e: ast.BinaryExpression, lt: P4Type, rt: P4Type) -> P4Type:
        """The common type of a binary operation's operands (an `int` adopts the other side)."""
        if isinstance(lt, InfInt) and isinstance(rt, InfInt):
            return lt
        # A serializable enum meets an int as its underlying type (implicit cast).
        if isinstance(lt, InfInt) and isinstance(rt, SerEnum):
            rt = rt.underlying
        if isinstance(rt, InfInt) and isinstance(lt, SerEnum):
            lt = lt.underlying
        if isinstance(lt, InfInt):
            self.coerce(e.left, rt, f"left operand of '{e.op}'")
            return rt
        if isinstance(rt, InfInt):
            self.coerce(e.right, lt, f"right operand of '{e.op}'")
            return lt
        if isinstance(lt, SerEnum) and lt.underlying == rt:
            return rt
        if isinstance(rt, SerEnum) and rt.underlying == lt:
            return lt
        if isinstance(e.left, ast.ListExpression | ast.StructExpression) and not isinstance(
            rt, ListLiteral | StructLiteral
        ):
            self.coerce(e.left, rt, f"left operand of '{e.op}'")
            return rt
        if isinstance(e.right, ast.ListExpression | ast.StructExpression) and not isinstance(
            lt, ListLiteral | StructLiteral
        ):
            self.coerce(e.right, lt, f"right operand of '{e.op}'")
            return lt
        if isinstance(e.right, ast.InvalidExpression):
            self.coerce(e.right, lt, f"right operand of '{e.op}'")
            return lt
        if lt != rt:
            raise self.fail(e.pos, f"'{e.op}' cannot combine {lt} and {rt}: cast one side")
        return lt

    def _shift(self, e: ast.BinaryExpression, lt: P4Type, rt: P4Type) -> P4Type:
        if not _is_numeric(lt):
            raise self.fail(e.left.pos, f"'{e.op}' needs a numeric left operand, not {lt}")
        if isinstance(rt, Bits) and rt.signed or not _is_numeric(rt):
            raise self.fail(e.right.pos, f"the shift amount must be unsigned, not {rt}")
        if (
            isinstance(rt, InfInt)
            and isinstance(e.right.const_value, int)
            and e.right.const_value < 0
        ):
            raise self.fail(e.right.pos, "shift by a negative amount")
        if isinstance(lt, InfInt) and e.right.const_value is None:
            raise self.fail(e.pos, "shifting an int constant needs a constant shift amount")
        return lt

    def _concat(self, e: ast.BinaryExpression, lt: P4Type, rt: P4Type) -> P4Type:
        for side, t in ((e.left, lt), (e.right, rt)):
            if not isinstance(t, Bits):
                raise self.fail(side.pos, f"'++' needs bit<W> or int<W> operands, not {t}")
        return Bits(lt.width + rt.width, lt.signed)

    def _x_TernaryExpression(self, e: ast.TernaryExpression) -> P4Type:
        self.expect_bool(e.cond, "the condition of '?:'")
        tt = self.check_expr(e.then)
        ot = self.check_expr(e.otherwise)
        if isinstance(tt, InfInt) and isinstance(ot, InfInt):
            if e.cond.const_value is None:
                raise self.fail(
                    e.pos,
                    "the width of '?:' with two int branches cannot be inferred; cast a branch",
                )
            result: P4Type = tt
        elif isinstance(tt, InfInt):
            self.coerce(e.then, ot, "'?:' branch")
            result = ot
        elif isinstance(ot, InfInt):
            self.coerce(e.otherwise, tt, "'?:' branch")
            result = tt
        elif tt != ot:
            raise self.fail(e.pos, f"the branches of '?:' have different types: {tt} and {ot}")
        else:
            result = tt
        cond = e.cond.const_value
        if isinstance(cond, bool):
            e.const_value = (e.then if cond else e.otherwise).const_value
        return result

    def _x_CastExpression(self, e: ast.CastExpression) -> P4Type:
        target = self.resolve_type(e.type_node)
        source = self.check_expr(e.expr)
        if isinstance(e.expr, ast.ListExpression | ast.StructExpression) and isinstance(
            target, StructLike | Tuple
        ):
            self.coerce(e.expr, target, "cast")
            return target
        if isinstance(e.expr, ast.InvalidExpression) and isinstance(target, Header | HeaderUnion):
            # `(h_t){#}`: the invalid header (or union) of that type.
            e.expr.type = target
            return target
        if not cast_allowed(source, target):
            raise self.fail(e.pos, f"cannot cast {source} to {target}")
        inner = e.expr.const_value
        if isinstance(inner, EnumValue) and inner.value is not None:
            inner = inner.value
        value = consteval.fold_cast(inner, source, target)
        if isinstance(target, SerEnum) and isinstance(value, int):
            names = [n for n, v in target.members if v == value]
            value = EnumValue(target, names[0] if names else "", value)
        e.const_value = value
        return target

    # ------------------------------------------------------------ indexing

    def _x_IndexExpression(self, e: ast.IndexExpression) -> P4Type:
        base = self.check_expr(e.expr)
        it = self.check_expr(e.index)
        if isinstance(base, Stack):
            # p4c takes any bit<W> or int<W> index (a negative one is simply out of range).
            if not isinstance(it, Bits | InfInt):
                raise self.fail(e.index.pos, f"a stack index must be an integer, not {it}")
            index = e.index.const_value
            if isinstance(index, int) and not 0 <= index < base.size:
                raise self.fail(
                    e.index.pos, f"index {index} is out of range for a stack of size {base.size}"
                )
            if isinstance(it, InfInt):
                self.coerce(e.index, Bits(32), "stack index")
            return base.element
        if isinstance(base, Tuple):
            index = e.index.const_value
            if not isinstance(index, int) or not 0 <= index < len(base.elements):
                raise self.fail(e.index.pos, "a tuple index must be a constant within the tuple")
            if isinstance(e.expr.const_value, tuple):
                e.const_value = e.expr.const_value[index]
            return base.elements[index]
        raise self.fail(e.pos, f"cannot index a value of type {base}")

    def _x_SliceExpression(self, e: ast.SliceExpression) -> P4Type:
        base = self.check_expr(e.expr)
        if isinstance(base, SerEnum):
            base = base.underlying
        if not isinstance(base, Bits | InfInt):
            raise self.fail(e.pos, f"cannot slice a value of type {base}")
        hi = self.const_int(e.hi, "slice bound")
        lo = self.const_int(e.lo, "slice bound")
        if lo < 0 or hi < lo:
            raise self.fail(e.pos, f"invalid slice [{hi}:{lo}]")
        if isinstance(base, Bits) and hi >= base.width:
            raise self.fail(e.hi.pos, f"slice [{hi}:{lo}] is out of range for {base}")
        e.const_value = consteval.fold_slice(e.expr.const_value, hi, lo)
        return Bits(hi - lo + 1)

    # ------------------------------------------------------------ aggregates

    def _x_ListExpression(self, e: ast.ListExpression) -> P4Type:
        return ListLiteral(tuple(self.check_expr(c) for c in e.components))

    def _x_StructExpression(self, e: ast.StructExpression) -> P4Type:
        seen: set[str] = set()
        for f in e.fields:
            if f.name in seen:
                raise self.fail(f.pos, f"field '{f.name}' is given twice")
            seen.add(f.name)
        return StructLiteral(tuple((f.name, self.check_expr(f.value)) for f in e.fields))

    def _x_MaskExpression(self, e: ast.MaskExpression) -> P4Type:
        vt = self.check_expr(e.value)
        mt = self.check_expr(e.mask)
        t = self._unify_operands(
            ast.BinaryExpression(pos=e.pos, op="&&&", left=e.value, right=e.mask), vt, mt
        )
        return Set(t)

    def _x_RangeExpression(self, e: ast.RangeExpression) -> P4Type:
        lt = self.check_expr(e.low)
        ht = self.check_expr(e.high)
        t = self._unify_operands(
            ast.BinaryExpression(pos=e.pos, op="..", left=e.low, right=e.high), lt, ht
        )
        return Set(t)

    def _x_SelectExpression(self, e: ast.SelectExpression) -> P4Type:
        raise self.fail(e.pos, "select is only allowed as a parser transition")

    def value_type(self, t: P4Type, e: ast.Expression, what: str) -> P4Type:
        """Reject types that are not data (types, methods, tables) where a value is needed."""
        if isinstance(t, TypeOf | Method | Callable | Table | ParserStateType):
            raise self.fail(e.pos, f"{what} is not a value")
        return t
