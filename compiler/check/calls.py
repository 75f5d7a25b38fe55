"""Calls: which declaration a call reaches, argument binding, directions, type arguments.

Arguments bind by position or all by name; parameters with a default value
or `@optional` may be left out. An out/inout argument must be an l-value (or
`_` for out). Extern functions and methods overload by argument count.
Type arguments come from the call (`f<bit<8>>(x)`), from the receiver
(`register<bit<32>> r; r.read(...)`) or are inferred from argument types.
"""

from __future__ import annotations

from .. import ast
from ..types import (
    ApplyResult,
    Bits,
    Bool,
    ControlType,
    DontCare,
    Enum,
    Extern,
    Header,
    InfInt,
    P4Type,
    PackageType,
    ParserType,
    SerEnum,
    Specialized,
    StructLike,
    TypeOf,
    TypeVar,
    Void,
    bit_width,
)
from .coerce import substitute
from .expressions import ExpressionChecker
from .lvalues import lvalue_problem
from .members import Method

_BUILTIN_RESULTS = {"isValid": Bool(), "setValid": Void(), "setInvalid": Void()}


def _optional(p: ast.Parameter) -> bool:
    return p.default is not None or ast.find_annotation(p.annotations, "optional") is not None


class CallChecker(ExpressionChecker):
    """Typing of `MethodCallExpression`s."""

    def _x_MethodCallExpression(self, e: ast.MethodCallExpression) -> P4Type:
        callee_t = self.check_expr(e.callee)
        if isinstance(callee_t, Method):
            return self._method_call(e, callee_t)
        if isinstance(callee_t, TypeOf):
            return self.constructor_call(e, callee_t.type, e.args, e.type_args)
        decl = getattr(e.callee, "ref", None)
        if isinstance(decl, ast.ActionDeclaration):
            return self._action_call(e, decl)
        if isinstance(decl, ast.FunctionDeclaration):
            return self._invoke(e, ast.CallKind.FUNCTION, decl, [decl], {}, decl.name)
        if isinstance(decl, ast.ExternFunctionDeclaration):
            if decl.name == "verify" and "core.p4" in decl.pos.file and self.where.kind != "state":
                raise self.fail(e.pos, "verify may only be called in a parser state")
            candidates = [d.prototype for d in self.scope.lookup_all(decl.name)]
            result = self._invoke(e, ast.CallKind.EXTERN_FUNCTION, decl, candidates, {}, decl.name)
            # Only the overload the arguments chose can be deprecated (mark_to_drop has both).
            self.warn_deprecated(e.call.target, e.pos)
            return result
        raise self.fail(e.pos, f"{callee_t} cannot be called")

    def _action_call(self, e: ast.MethodCallExpression, decl: ast.ActionDeclaration) -> P4Type:
        if self.where.kind not in ("control", "action"):
            raise self.fail(
                e.pos, f"action {decl.name} may only be called from a control or an action"
            )
        return self._invoke(e, ast.CallKind.ACTION, decl, [decl], {}, decl.name)

    def _method_call(self, e: ast.MethodCallExpression, m: Method) -> P4Type:
        receiver = e.callee.expr if isinstance(e.callee, ast.MemberExpression) else None
        if m.kind == "builtin":
            return self._builtin_call(e, m, receiver)
        if m.kind == "table_apply":
            if e.args:
                raise self.fail(e.pos, "a table's apply() takes no arguments")
            if self.where.kind not in ("control",) or not self.where.in_apply:
                raise self.fail(e.pos, "a table may only be applied in a control's apply block")
            e.call = ast.CallInfo(
                kind=ast.CallKind.TABLE_APPLY, target=m.receiver.decl, receiver=receiver
            )
            return ApplyResult(m.receiver)
        if m.kind == "block_apply":
            block = m.receiver.base if isinstance(m.receiver, Specialized) else m.receiver
            kind = (
                ast.CallKind.PARSER_APPLY
                if isinstance(block, ParserType)
                else ast.CallKind.CONTROL_APPLY
            )
            holder = _Params(list(m.candidates))
            result = self._invoke(
                e, kind, getattr(receiver, "ref", None), [holder], {}, f"{block.name}.apply"
            )
            e.call.receiver = receiver
            return result
        bindings = m.receiver.bindings() if isinstance(m.receiver, Specialized) else {}
        result = self._invoke(
            e, ast.CallKind.EXTERN_METHOD, None, list(m.candidates), bindings, m.name
        )
        e.call.receiver = receiver
        if m.name == "extract" and getattr(m.receiver, "name", None) == "packet_in":
            extracted = e.call.type_args.get("T")
            if not isinstance(extracted, Header):
                raise self.fail(e.args[0].pos, f"extract needs a header, not {extracted}")
        return result

    def _builtin_call(
        self, e: ast.MethodCallExpression, m: Method, receiver: ast.Expression | None
    ) -> P4Type:
        name = m.name
        e.call = ast.CallInfo(kind=ast.CallKind.BUILTIN, receiver=receiver, builtin=name)
        if name in ("push_front", "pop_front"):
            if len(e.args) != 1:
                raise self.fail(
                    e.pos, f"{name} takes one argument (the count), {len(e.args)} given"
                )
            count = self.const_int(e.args[0].value, f"the count of {name}")
            if count < 0:
                raise self.fail(e.args[0].pos, f"{name} needs a non-negative count")
            self.coerce(e.args[0].value, InfInt(), name)
            self._require_lvalue(receiver, f"the stack in {name}")
            e.call.args = [e.args[0].value]
            return Void()
        if e.args:
            raise self.fail(e.pos, f"{name}() takes no arguments")
        if name in ("setValid", "setInvalid"):
            self._require_lvalue(receiver, f"the header in {name}()")
        if name in _BUILTIN_RESULTS:
            return _BUILTIN_RESULTS[name]
        # minSizeInBits and friends on a fixed-size type are compile-time ints.
        t = m.receiver
        if isinstance(t, StructLike | Bits):
            bits = bit_width(t)
            e.const_value = bits if name.endswith("Bits") else (bits + 7) // 8
        return InfInt()

    def warn_deprecated(self, decl: ast.Declaration, pos: object) -> None:
        """Warn where a `@deprecated("reason")` extern is used, as p4c does."""
        note = ast.find_annotation(decl.annotations, "deprecated")
        if note is None:
            return
        reason = note.args[0].value if note.args else ""
        self.warn(pos, f"{decl.name} is deprecated: {reason}".rstrip(": "))

    def _require_lvalue(self, expr: ast.Expression | None, what: str) -> None:
        if expr is None:
            return
        problem = lvalue_problem(expr)
        if problem:
            raise self.fail(expr.pos, f"{what} must be writable: {problem}")

    # ------------------------------------------------------------ binding

    def _invoke(
        self,
        e: ast.MethodCallExpression,
        kind: ast.CallKind,
        target: object,
        candidates: list,
        bindings: dict[str, P4Type],
        what: str,
    ) -> P4Type:
        """Pick the overload matching the argument count, bind and check the arguments."""
        fitting = [c for c in candidates if self._accepts(c.params, e.args)]
        if len(fitting) > 1:
            # Overloads with as many parameters (TNA's Meter.execute(index, color) and
            # execute(index, adjust_byte_count)): an enum argument picks the enum parameter.
            fitting = [c for c in fitting if self._enums_fit(c.params, e.args, bindings)] or fitting
        if not fitting:
            counts = sorted({len(c.params) for c in candidates})
            shown = " or ".join(map(str, counts))
            raise self.fail(
                e.pos, f"wrong number of arguments to {what}: expected {shown}, got {len(e.args)}"
            )
        chosen = fitting[0]
        type_params = list(getattr(chosen, "type_params", []))
        bindings = dict(bindings)
        if e.type_args:
            if len(e.type_args) != len(type_params):
                raise self.fail(
                    e.pos,
                    f"{what} takes {len(type_params)} type arguments, {len(e.type_args)} given",
                )
            for tp, ta in zip(type_params, e.type_args, strict=True):
                bindings[tp.name] = self.resolve_type(ta)
        extern = kind in (ast.CallKind.EXTERN_FUNCTION, ast.CallKind.EXTERN_METHOD)
        args = self.bind_arguments(
            e.args, chosen.params, bindings, what, e.pos, constant_data=extern
        )
        ret = getattr(chosen, "return_type", None)
        result: P4Type = Void()
        if ret is not None and ret.resolved is not None:
            result = substitute(ret.resolved, bindings)
        if isinstance(target, ast.ActionDeclaration | ast.FunctionDeclaration):
            result = target.p4type.return_type
        if isinstance(result, TypeVar):
            raise self.fail(
                e.pos, f"cannot infer the type {result} returned by {what}; give type arguments"
            )
        if kind is ast.CallKind.EXTERN_METHOD:
            target = chosen
        elif kind is ast.CallKind.EXTERN_FUNCTION:
            # The overload chosen by argument count, not the first declaration of the name.
            target = next(
                (d for d in self.scope.lookup_all(target.name) if d.prototype is chosen), target
            )
        e.call = ast.CallInfo(
            kind=kind, target=target, params=list(chosen.params), args=args, type_args=bindings
        )
        return result

    def _accepts(self, params: list[ast.Parameter], args: list[ast.Argument]) -> bool:
        if args and all(a.name is not None for a in args):
            names = {p.name for p in params}
            given = {a.name for a in args}
            return given <= names and all(p.name in given or _optional(p) for p in params)
        required = sum(1 for p in params if not _optional(p))
        return required <= len(args) <= len(params)

    def _enums_fit(
        self, params: list[ast.Parameter], args: list[ast.Argument], bindings: dict[str, P4Type]
    ) -> bool:
        """Whether positional arguments and parameters agree on being of an enum type."""
        if any(a.name is not None for a in args):
            return True
        for p, a in zip(params, args, strict=False):
            if a.value.type is None:
                self.check_expr(a.value)
            want = substitute(p.p4type, bindings) if p.p4type is not None else None
            got = a.value.type
            if isinstance(want, TypeVar) or want is None or got is None:
                continue
            if isinstance(want, Enum | SerEnum) != isinstance(got, Enum | SerEnum):
                return False
        return True

    def _match_arguments(
        self, args: list[ast.Argument], params: list[ast.Parameter], what: str
    ) -> dict[str, ast.Argument]:
        """Parameter name -> argument, by position or (all) by name."""
        named = [a for a in args if a.name is not None]
        if named and len(named) != len(args):
            raise self.fail(
                named[0].pos, f"arguments to {what} must be all positional or all named"
            )
        if not named:
            return {p.name: a for p, a in zip(params, args, strict=False)}
        by_param: dict[str, ast.Argument] = {}
        for a in args:
            if a.name in by_param:
                raise self.fail(a.pos, f"argument '{a.name}' is given twice")
            if not any(p.name == a.name for p in params):
                raise self.fail(a.pos, f"{what} has no parameter named '{a.name}'")
            by_param[a.name] = a
        return by_param

    def bind_arguments(
        self,
        args: list[ast.Argument],
        params: list[ast.Parameter],
        bindings: dict[str, P4Type],
        what: str,
        pos: object,
        constant_data: bool = False,
    ) -> list[ast.Expression | None]:
        """Check each argument against its parameter; returns arguments in parameter order.

        With `constant_data` (externs, constructors) a directionless parameter
        takes only compile-time constants.
        """
        by_param = self._match_arguments(args, params, what)
        for a in by_param.values():
            if a.value.type is None:
                self.check_expr(a.value)
        for p in params:
            a = by_param.get(p.name)
            if a is not None and p.p4type is not None:
                self.unify(p.p4type, a.value, bindings, f"argument '{p.name}' of {what}")
        bound: list[ast.Expression | None] = []
        for p in params:
            a = by_param.get(p.name)
            if a is None:
                # An omitted argument takes the parameter's default value (None if it has
                # none: an @optional extern parameter).
                bound.append(p.default)
                continue
            self.check_argument(a.value, p, substitute(p.p4type, bindings), what)
            if constant_data and p.direction is ast.Direction.NONE:
                self._require_constant(a.value, f"argument '{p.name}' of {what}")
            bound.append(a.value)
        return bound

    def _require_constant(self, value: ast.Expression, label: str) -> None:
        """Directionless extern and constructor arguments are fixed when the program is compiled."""
        if value.const_value is not None or isinstance(value, ast.DontCareExpression):
            return
        # Instances (externs, parsers, controls) passed to constructors are compile-time objects too.
        base = value.type.base if isinstance(value.type, Specialized) else value.type
        if isinstance(base, Extern | ParserType | ControlType | PackageType):
            return
        raise self.fail(value.pos, f"{label} has no direction and must be a compile-time constant")

    def check_argument(
        self, value: ast.Expression, p: ast.Parameter, ptype: P4Type, what: str
    ) -> None:
        """One argument against one parameter: type and direction."""
        label = f"argument '{p.name}' of {what}"
        if isinstance(value, ast.DontCareExpression):
            if p.direction is not ast.Direction.OUT:
                raise self.fail(value.pos, f"{label}: '_' may only be passed to an out parameter")
            if isinstance(ptype, TypeVar):
                raise self.fail(
                    value.pos, f"{label}: cannot infer the type of '_'; give {what} a type argument"
                )
            value.type = ptype
            return
        pbase = ptype.base if isinstance(ptype, Specialized) else ptype
        if isinstance(pbase, ParserType | ControlType) and isinstance(value.type, ParserType | ControlType):
            # A parser or control instance passed to a constructor implements the
            # parameter's parser/control type when their apply signatures agree.
            self.match_block(ptype, value.type, {}, value.pos, label)
            return
        self.coerce(value, ptype, label)
        if p.direction in (ast.Direction.OUT, ast.Direction.INOUT):
            problem = lvalue_problem(value)
            if problem:
                raise self.fail(
                    value.pos,
                    f"{label} has direction {p.direction.value} and needs an l-value: {problem}",
                )

    # ------------------------------------------------------------ constructors

    def constructor_call(
        self, e: ast.Node, t: P4Type, args: list[ast.Argument], type_args: list[ast.TypeNode]
    ) -> P4Type:
        """`T(args)`: construct a parser, control, package or extern; returns the instance type."""
        base = t.base if isinstance(t, Specialized) else t
        bindings = t.bindings() if isinstance(t, Specialized) else {}
        if type_args:
            params = getattr(base, "type_params", ())
            if len(params) != len(type_args):
                raise self.fail(
                    e.pos, f"{base} takes {len(params)} type arguments, {len(type_args)} given"
                )
            for name, ta in zip(params, type_args, strict=True):
                bindings[name] = self.resolve_type(ta)
        if isinstance(base, Extern):
            self.warn_deprecated(base.decl, e.pos)
            ctors = [m for m in base.decl.methods if m.is_constructor]
            if not ctors:
                raise self.fail(e.pos, f"extern {base.name} has no constructor")
            fitting = [c for c in ctors if self._accepts(c.params, args)]
            if not fitting:
                raise self.fail(
                    e.pos,
                    f"wrong number of arguments to the constructor of {base.name}: expected "
                    f"{' or '.join(sorted({str(len(c.params)) for c in ctors}))}, got {len(args)}",
                )
            bound = self.bind_arguments(
                args,
                fitting[0].params,
                bindings,
                f"{base.name} constructor",
                e.pos,
                constant_data=True,
            )
            self._record_ctor(e, base, fitting[0].params, bound, bindings)
        elif isinstance(base, ParserType | ControlType):
            decl = base.decl
            if not isinstance(decl, ast.ParserDeclaration | ast.ControlDeclaration):
                raise self.fail(
                    e.pos, f"{base.name} is a type declaration and cannot be instantiated"
                )
            params = decl.constructor_params
            if not self._accepts(params, args):
                raise self.fail(
                    e.pos,
                    f"wrong number of arguments to {base.name}: expected {len(params)}, got {len(args)}",
                )
            bound = self.bind_arguments(
                args, params, bindings, base.name, e.pos, constant_data=True
            )
            self._record_ctor(e, base, params, bound, bindings)
        elif isinstance(base, PackageType):
            params = list(base.params)
            if not self._accepts(params, args):
                raise self.fail(
                    e.pos,
                    f"wrong number of arguments to {base.name}: expected {len(params)}, got {len(args)}",
                )
            bound = self.bind_package_arguments(args, params, bindings, base.name)
            self._record_ctor(e, base, params, bound, bindings)
        else:
            raise self.fail(e.pos, f"{t} cannot be instantiated")
        type_params = getattr(base, "type_params", ())
        if type_params:
            missing = [n for n in type_params if n not in bindings]
            if isinstance(base, PackageType):
                # Type variables only an omitted @optional block uses (pipe1..pipe3 of a
                # one-pipe Switch) stay unbound: nothing constrains them.
                for name in missing:
                    bindings[name] = DontCare()
                missing = []
            if missing:
                raise self.fail(e.pos, f"cannot infer type argument {missing[0]} of {base.name}")
            return Specialized(base, tuple(bindings[n] for n in type_params))
        return base

    def _record_ctor(
        self, e: ast.Node, base: P4Type, params: list, bound: list, bindings: dict[str, P4Type]
    ) -> None:
        if isinstance(e, ast.MethodCallExpression):
            e.call = ast.CallInfo(
                kind=ast.CallKind.CONSTRUCTOR, target=base.decl, params=list(params), args=bound,
                type_args=dict(bindings),
            )  # fmt: skip

    def bind_package_arguments(
        self,
        args: list[ast.Argument],
        params: list[ast.Parameter],
        bindings: dict[str, P4Type],
        what: str,
    ) -> list[ast.Expression | None]:
        """Package arguments are blocks: match them against the parameter types, binding type variables."""
        by_param = self._match_arguments(args, params, what)
        bound: list[ast.Expression | None] = []
        for p in params:
            a = by_param.get(p.name)
            if a is None:
                bound.append(None)
                continue
            arg_t = self.check_expr(a.value)
            self.match_block(
                p.p4type, arg_t, bindings, a.value.pos, f"argument '{p.name}' of {what}"
            )
            bound.append(a.value)
        return bound

    def match_block(
        self, want: P4Type, got: P4Type, bindings: dict[str, P4Type], pos: object, what: str
    ) -> None:
        """Check that block type `got` implements `want` (e.g. `Parser<H, M>`), binding H and M."""
        want_base = want.base if isinstance(want, Specialized) else want
        got_base = got.base if isinstance(got, Specialized) else got
        if not isinstance(want_base, ParserType | ControlType | PackageType | Extern):
            if want != got:
                raise self.fail(pos, f"{what}: expected {want}, got {got}")
            return
        if type(want_base) is not type(got_base):
            kind = type(want_base).__name__.replace("Type", "").lower()
            raise self.fail(pos, f"{what}: expected a {kind} of type {want}, got {got}")
        if isinstance(want_base, Extern):
            if want_base != got_base:
                raise self.fail(pos, f"{what}: expected {want}, got {got}")
            return
        if isinstance(want_base, PackageType):
            self._match_package(want, got, bindings, pos, what)
            return
        inner = (
            dict(zip(want_base.type_params, want.args, strict=False))
            if isinstance(want, Specialized)
            else {}
        )
        for wp, gp in self.fit_block_params(want, got_base, inner, bindings, pos, what):
            expected = substitute(substitute(wp.p4type, inner), bindings)
            if isinstance(expected, TypeVar):
                bindings[expected.name] = gp.p4type

    def fit_block_params(
        self,
        want: P4Type,
        got_base: P4Type,
        inner: dict[str, P4Type],
        bindings: dict[str, P4Type],
        pos: object,
        what: str,
    ) -> list[tuple[ast.Parameter, ast.Parameter]]:
        """Pair the parameters of block `got_base` with those of the block type `want`.

        In order; a parameter of `want` marked `@optional` (TNA's intrinsic metadata) may
        be left off, anywhere in the list, when the block's next parameter does not fit it.
        """
        want_base = want.base if isinstance(want, Specialized) else want
        wparams, gparams = list(want_base.params), list(got_base.params)
        pairs: list[tuple[ast.Parameter, ast.Parameter]] = []
        local = dict(bindings)
        index = 0
        for wp in wparams:
            gp = gparams[index] if index < len(gparams) else None
            optional = _optional(wp)
            if gp is None:
                if optional:
                    continue
                raise self.fail(
                    pos,
                    f"{what}: {got_base.name} has {len(gparams)} parameters, {want} needs "
                    f"{sum(1 for p in wparams if not _optional(p))} or more (parameter "
                    f"'{wp.name}' is missing)" if any(_optional(p) for p in wparams) else
                    f"{what}: {got_base.name} has {len(gparams)} parameters, {want} needs {len(wparams)}",
                )
            expected = substitute(substitute(wp.p4type, inner), local)
            # A block that only reads what the package lets it write fits, as p4c accepts
            # (`control vc(in H hdr, inout M meta)` for VerifyChecksum).
            reads_only = wp.direction is ast.Direction.INOUT and gp.direction is ast.Direction.IN
            direction_ok = wp.direction is gp.direction or reads_only
            type_ok = isinstance(expected, TypeVar) or expected == gp.p4type
            if optional and not (direction_ok and type_ok):
                continue
            if not direction_ok:
                raise self.fail(
                    gp.pos,
                    f"{what}: parameter '{gp.name}' of {got_base.name} has direction "
                    f"{gp.direction.value or 'none'}, {want} needs {wp.direction.value or 'none'}",
                )
            if not type_ok:
                raise self.fail(
                    gp.pos,
                    f"{what}: parameter '{gp.name}' of {got_base.name} has type {gp.p4type}, "
                    f"{want} needs {expected}",
                )
            if isinstance(expected, TypeVar):
                local[expected.name] = gp.p4type
            pairs.append((wp, gp))
            index += 1
        if index < len(gparams):
            extra = gparams[index]
            raise self.fail(
                extra.pos,
                f"{what}: parameter '{extra.name}' of {got_base.name} matches no parameter of {want}",
            )
        return pairs

    def _match_package(
        self, want: P4Type, got: P4Type, bindings: dict[str, P4Type], pos: object, what: str
    ) -> None:
        """A package instance passed to a package (TNA's `Switch(pipe)`): same package type,
        binding the outer package's type variables to the instance's type arguments."""
        want_base = want.base if isinstance(want, Specialized) else want
        got_base = got.base if isinstance(got, Specialized) else got
        if want_base.decl is not got_base.decl:
            raise self.fail(pos, f"{what}: expected a {want_base.name}, got {got}")
        wargs = want.args if isinstance(want, Specialized) else ()
        gargs = got.args if isinstance(got, Specialized) else ()
        for warg, garg in zip(wargs, gargs, strict=False):
            expected = substitute(warg, bindings)
            if isinstance(expected, TypeVar):
                bindings[expected.name] = garg
            elif expected != garg:
                raise self.fail(pos, f"{what}: expected {want}, got {got}")


class _Params:
    """An apply() signature seen as a callable with just parameters."""

    def __init__(self, params: list[ast.Parameter]) -> None:
        self.params = params
        self.type_params: list[ast.TypeParameter] = []
        self.return_type = None
