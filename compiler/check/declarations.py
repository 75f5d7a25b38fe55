"""Declarations: types, externs, parsers, controls, actions, functions, instances."""

from __future__ import annotations

from .. import ast
from ..types import (
    Callable,
    ControlType,
    DontCare,
    Extern,
    NewType,
    P4Type,
    PackageType,
    ParserStateType,
    ParserType,
    Set,
    Specialized,
    Struct,
    Tuple,
    TypeVar,
    Void,
)
from .coerce import substitute
from .context import Where
from .tables import TableChecker


def always_returns(s: ast.Node) -> bool:
    """Whether every path through `s` ends in `return` (or `exit`)."""
    if isinstance(s, ast.ReturnStatement | ast.ExitStatement):
        return True
    if isinstance(s, ast.BlockStatement):
        return any(always_returns(c) for c in s.components)
    if isinstance(s, ast.IfStatement):
        return s.otherwise is not None and always_returns(s.then) and always_returns(s.otherwise)
    if isinstance(s, ast.SwitchStatement):
        has_default = any(isinstance(c.label, ast.DefaultExpression) for c in s.cases)
        return has_default and all(c.body is None or always_returns(c.body) for c in s.cases)
    return False


# States every parser has without declaring them.
BUILTIN_STATES = ("accept", "reject")


class DeclarationChecker(TableChecker):
    """Checks top-level and local declarations in source order."""

    def check_declaration(self, d: ast.Node) -> None:
        """Check one top-level declaration and add its name to the top-level scope."""
        handler = getattr(self, f"_d_{type(d).__name__}", None)
        if handler is None:
            raise self.fail(d.pos, f"a {type(d).__name__} is not allowed at the top level")
        handler(d)

    # ------------------------------------------------------------ types

    def _d_ConstantDeclaration(self, d: ast.ConstantDeclaration) -> None:
        self.check_constant(d)

    def _d_VariableDeclaration(self, d: ast.VariableDeclaration) -> None:
        raise self.fail(
            d.pos, f"variable '{d.name}' cannot be declared at the top level; use const"
        )

    def _d_TypedefDeclaration(self, d: ast.TypedefDeclaration) -> None:
        t = self.resolve_type(d.type_node)
        d.p4type = NewType(d.name, d, t) if d.is_newtype else t
        self.scope.declare(d.name, d, d.pos)

    def _struct_like(self, d: ast.Declaration) -> None:
        d.p4type = self.struct_type(d)
        self.scope.declare(d.name, d, d.pos)

    _d_HeaderDeclaration = _struct_like
    _d_HeaderUnionDeclaration = _struct_like
    _d_StructDeclaration = _struct_like

    def _d_EnumDeclaration(self, d: ast.EnumDeclaration) -> None:
        d.p4type = self.enum_type(d)
        self.scope.declare(d.name, d, d.pos)

    def _d_SerEnumDeclaration(self, d: ast.SerEnumDeclaration) -> None:
        d.p4type = self.ser_enum_type(d)
        self.scope.declare(d.name, d, d.pos)

    def _d_ErrorDeclaration(self, d: ast.ErrorDeclaration) -> None:
        for m in d.members:
            if m.name in self.facts.error_members:
                raise self.fail(m.pos, f"duplicate error 'error.{m.name}'")
            self.facts.error_members[m.name] = m
            self.facts.errors.append(m.name)

    def _d_MatchKindDeclaration(self, d: ast.MatchKindDeclaration) -> None:
        for m in d.members:
            self.scope.declare(m.name, m, m.pos)
            self.facts.match_kinds.append(m.name)

    # ------------------------------------------------------------ externs and block types

    def resolve_params(self, params: list[ast.Parameter]) -> None:
        """Resolve parameter types and default values; names must differ."""
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                raise self.fail(p.pos, f"duplicate parameter '{p.name}'")
            seen.add(p.name)
            p.p4type = self.resolve_type(p.type_node)
            if p.default is not None:
                self.check_expr(p.default)
                self.coerce(p.default, p.p4type, f"default value of '{p.name}'")

    def declare_params(self, params: list[ast.Parameter]) -> None:
        """Make parameters visible in the current scope."""
        for p in params:
            self.scope.declare(p.name, p, p.pos)

    def _prototype(self, proto: ast.MethodPrototype, return_override: P4Type | None = None) -> None:
        with self.scoped():
            self.declare_type_params(proto.type_params, proto)
            if proto.return_type is not None:
                self.resolve_type(proto.return_type)
            self.resolve_params(proto.params)
        ret = proto.return_type.resolved if proto.return_type is not None else return_override
        proto.p4type = Callable(tuple(proto.params), ret if ret is not None else Void())

    def _d_ExternDeclaration(self, d: ast.ExternDeclaration) -> None:
        with self.scoped():
            names = self.declare_type_params(d.type_params, d)
            d.p4type = Extern(d.name, d, names)
            self.scope.declare(d.name, d, d.pos)
            arities: set[tuple[str, int]] = set()
            for m in d.methods:
                if m.is_constructor and m.name != d.name:
                    raise self.fail(m.pos, f"constructor {m.name} must be named {d.name}")
                key = (m.name, len(m.params))
                if key in arities:
                    raise self.fail(
                        m.pos, f"duplicate method {m.name} with {len(m.params)} parameters"
                    )
                arities.add(key)
                self._prototype(m, d.p4type if m.is_constructor else None)
        self.scope.declare(d.name, d, d.pos)

    def _d_ExternFunctionDeclaration(self, d: ast.ExternFunctionDeclaration) -> None:
        self._prototype(d.prototype)
        d.p4type = d.prototype.p4type
        for other in self.scope.names.get(d.name, []):
            if isinstance(other, ast.ExternFunctionDeclaration) and len(
                other.prototype.params
            ) == len(d.prototype.params):
                raise self.fail(
                    d.pos,
                    f"duplicate extern function {d.name} with {len(d.prototype.params)} parameters",
                )
        self.scope.declare(d.name, d, d.pos, overloadable=True)

    def _block_type(self, d: ast.Declaration, cls: type) -> None:
        with self.scoped():
            names = self.declare_type_params(d.type_params, d)
            self.resolve_params(d.params)
        d.p4type = cls(d.name, d, names, tuple(d.params))
        self.scope.declare(d.name, d, d.pos)

    def _d_ParserTypeDeclaration(self, d: ast.ParserTypeDeclaration) -> None:
        self._block_type(d, ParserType)

    def _d_ControlTypeDeclaration(self, d: ast.ControlTypeDeclaration) -> None:
        self._block_type(d, ControlType)

    def _d_PackageTypeDeclaration(self, d: ast.PackageTypeDeclaration) -> None:
        self._block_type(d, PackageType)

    # ------------------------------------------------------------ parsers

    def _d_ParserDeclaration(self, d: ast.ParserDeclaration) -> None:
        if d.type_params:
            raise self.fail(
                d.pos, f"parser {d.name}: type parameters on a parser definition are not supported"
            )
        self.resolve_params(d.params)
        self.resolve_params(d.constructor_params)
        d.p4type = ParserType(d.name, d, (), tuple(d.params))
        self.scope.declare(d.name, d, d.pos)
        with self.scoped(), self.inside(Where("parser", d)):
            self.declare_params(d.params)
            self.declare_params(d.constructor_params)
            for name in BUILTIN_STATES:
                self.scope.declare(name, ast.ParserState(pos=d.pos, name=name), d.pos)
            for s in d.states:
                if s.name in BUILTIN_STATES:
                    raise self.fail(s.pos, f"state '{s.name}' is built in and cannot be declared")
            for local in d.locals:
                self.check_local(local)
            for s in d.states:
                s.p4type = ParserStateType()
                self.scope.declare(s.name, s, s.pos)
            if not any(s.name == "start" for s in d.states):
                raise self.fail(d.pos, f"parser {d.name} has no 'start' state")
            for s in d.states:
                self._check_state(s)

    def _check_state(self, s: ast.ParserState) -> None:
        with self.scoped(), self.inside(Where("state", s)):
            for c in s.components:
                self.check_statement(c)
            t = s.transition
            if t is None:
                return
            if isinstance(t, ast.PathExpression):
                self._state_target(t)
            elif isinstance(t, ast.SelectExpression):
                self._check_select(t)
            else:
                raise self.fail(t.pos, "a transition goes to a state or a select")

    def _state_target(self, target: ast.PathExpression) -> None:
        decl = self.scope.lookup(target.name)
        if not isinstance(decl, ast.ParserState):
            raise self.fail(target.pos, f"unknown state '{target.name}'")
        target.ref = decl
        target.type = ParserStateType()

    def _check_select(self, sel: ast.SelectExpression) -> None:
        types = [self.check_expr(e) for e in sel.exprs]
        for e, t in zip(sel.exprs, types, strict=True):
            self.value_type(t, e, "a select expression")
        for case in sel.cases:
            k = case.keyset
            if not types:
                # `select()`: only `default` and `_` keysets, which match everything.
                if not isinstance(k, ast.DefaultExpression | ast.DontCareExpression):
                    raise self.fail(k.pos, "a select with no expressions takes only default or _")
                k.type = Set(Tuple(()))
            elif isinstance(k, ast.ListExpression) and len(types) > 1:
                if len(k.components) != len(types):
                    raise self.fail(
                        k.pos,
                        f"the keyset has {len(k.components)} values, the select has {len(types)}",
                    )
                for c, t in zip(k.components, types, strict=True):
                    self.check_keyset(c, t, "select keyset")
                    if isinstance(getattr(c, "ref", None), ast.ValueSetDeclaration):
                        raise self.fail(
                            c.pos, "a value_set must be the whole keyset, not part of a tuple"
                        )
                k.type = Set(types[0])
            elif len(types) == 1:
                self.check_keyset(k, types[0], "select keyset")
            elif isinstance(k, ast.DefaultExpression | ast.DontCareExpression):
                k.type = Set(types[0])
            else:
                kt = self.check_expr(k)
                if not isinstance(kt, Set):
                    raise self.fail(
                        k.pos, f"the select has {len(types)} values; the keyset needs as many"
                    )
                fields = (
                    [ft for _, ft in kt.element.fields] if isinstance(kt.element, Struct) else None
                )
                if fields != types:
                    shown = ", ".join(map(str, types))
                    raise self.fail(
                        k.pos,
                        f"a value_set matching ({shown}) needs a struct of those field types, not {kt.element}",
                    )
            self._state_target(case.state)
        sel.type = ParserStateType()

    # ------------------------------------------------------------ controls

    def _d_ControlDeclaration(self, d: ast.ControlDeclaration) -> None:
        if d.type_params:
            raise self.fail(
                d.pos,
                f"control {d.name}: type parameters on a control definition are not supported",
            )
        self.resolve_params(d.params)
        self.resolve_params(d.constructor_params)
        d.p4type = ControlType(d.name, d, (), tuple(d.params))
        self.scope.declare(d.name, d, d.pos)
        with self.scoped(), self.inside(Where("control", d)):
            self.declare_params(d.params)
            self.declare_params(d.constructor_params)
            for local in d.locals:
                self.check_local(local)
            with self.inside(Where("control", d, in_apply=True)):
                self.check_block(d.body)

    def check_local(self, d: ast.Declaration) -> None:
        """A parser or control local declaration."""
        if isinstance(d, ast.ConstantDeclaration):
            self.check_constant(d)
        elif isinstance(d, ast.VariableDeclaration):
            self.check_statement(d)
        elif isinstance(d, ast.Instantiation):
            self._d_Instantiation(d)
        elif isinstance(d, ast.ActionDeclaration):
            self._d_ActionDeclaration(d)
        elif isinstance(d, ast.TableDeclaration):
            self.check_table(d)
        elif isinstance(d, ast.ValueSetDeclaration):
            element = self.resolve_type(d.element_type)
            self.const_int(d.size, "value_set size")
            d.p4type = Set(element)
            self.scope.declare(d.name, d, d.pos)
        else:
            raise self.fail(d.pos, f"a {type(d).__name__} is not allowed here")

    # ------------------------------------------------------------ actions, functions, instances

    def _d_ActionDeclaration(self, d: ast.ActionDeclaration) -> None:
        self.resolve_params(d.params)
        seen_data = False
        for p in d.params:
            if p.direction is ast.Direction.NONE:
                seen_data = True
            elif seen_data:
                raise self.fail(
                    p.pos,
                    f"action {d.name}: directional parameter '{p.name}' must come before action data",
                )
        d.p4type = Callable(tuple(d.params), Void())
        with self.scoped(), self.inside(Where("action", d)):
            self.declare_params(d.params)
            self.check_block(d.body, new_scope=False)
        self.scope.declare(d.name, d, d.pos)

    def _d_FunctionDeclaration(self, d: ast.FunctionDeclaration) -> None:
        with self.scoped():
            self.declare_type_params(d.type_params, d)
            ret = self.resolve_type(d.return_type)
            self.resolve_params(d.params)
            d.p4type = Callable(tuple(d.params), ret)
            with self.inside(Where("function", d, return_type=ret)):
                self.declare_params(d.params)
                self.check_block(d.body, new_scope=False)
        if not isinstance(ret, Void) and not always_returns(d.body):
            raise self.fail(d.pos, f"function {d.name} does not return a value on every path")
        self.scope.declare(d.name, d, d.pos)

    def _d_Instantiation(self, d: ast.Instantiation) -> None:
        t = self.resolve_type(d.type_node)
        d.p4type = self.constructor_call(d, t, d.args, [])
        if d.initializer is not None:
            self._check_initializer(d, t)
        self.scope.declare(d.name, d, d.pos)

    def _check_initializer(self, d: ast.Instantiation, t: P4Type) -> None:
        """`Ext(args) x = { void apply(...) {...} };`: each function implements one of the
        extern's abstract methods (TNA's RegisterAction.apply), with the instance's type
        arguments; @optional parameters may be left off; every abstract method that is
        not itself @optional must be implemented."""
        base = t.base if isinstance(t, Specialized) else t
        if not isinstance(base, Extern):
            raise self.fail(d.pos, f"only extern instances take an initialiser, not {t}")
        bindings = d.p4type.bindings() if isinstance(d.p4type, Specialized) else {}
        abstract = {m.name: m for m in base.decl.methods if m.is_abstract}
        implemented: set[str] = set()
        for item in d.initializer:
            if not isinstance(item, ast.FunctionDeclaration):
                raise self.fail(item.pos, f"an initialiser of {base.name} holds only method implementations")
            proto = abstract.get(item.name)
            if proto is None:
                names = ", ".join(sorted(abstract)) or "none"
                raise self.fail(
                    item.pos, f"{base.name} has no abstract method {item.name} (abstract: {names})"
                )
            if item.name in implemented:
                raise self.fail(item.pos, f"abstract method {item.name} is implemented twice")
            implemented.add(item.name)
            # `this` in the body is the instance (TNA's this.predicate(), this.address()).
            saved, self.this_type = getattr(self, "this_type", None), d.p4type
            try:
                with self.scoped():
                    self._d_FunctionDeclaration(item)
            finally:
                self.this_type = saved
            self._match_implementation(item, proto, bindings, base.name)
        for name, proto in abstract.items():
            if name not in implemented and ast.find_annotation(proto.annotations, "optional") is None:
                raise self.fail(d.pos, f"{d.name}: abstract method {name} of {base.name} is not implemented")

    def _match_implementation(
        self, impl: ast.FunctionDeclaration, proto: ast.MethodPrototype, bindings: dict, what: str
    ) -> None:
        """The implementation's signature against the abstract prototype's."""
        want_ret = proto.return_type.resolved if proto.return_type is not None else Void()
        want_ret = substitute(want_ret, bindings)
        if impl.p4type.return_type != want_ret:
            raise self.fail(
                impl.pos, f"{what}.{impl.name} returns {want_ret}, not {impl.p4type.return_type}"
            )
        params = list(impl.params)
        index = 0
        for wp in proto.params:
            p = params[index] if index < len(params) else None
            expected = substitute(wp.p4type, bindings)
            optional = ast.find_annotation(wp.annotations, "optional") is not None
            fits = p is not None and p.direction is wp.direction and (
                p.p4type == expected or isinstance(expected, TypeVar | DontCare)
            )
            if fits:
                index += 1
                continue
            if optional:
                continue
            if p is None:
                raise self.fail(impl.pos, f"{what}.{impl.name} needs parameter '{wp.name}' ({expected})")
            raise self.fail(
                p.pos,
                f"{what}.{impl.name}: parameter '{p.name}' is {p.direction.value or 'directionless'} "
                f"{p.p4type}, the abstract method needs {wp.direction.value or 'directionless'} {expected}",
            )
        if index < len(params):
            raise self.fail(
                params[index].pos, f"{what}.{impl.name} has no parameter like '{params[index].name}'"
            )
