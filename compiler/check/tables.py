"""Tables: key, actions, default_action, entries, size and other properties."""

from __future__ import annotations

from .. import ast
from ..types import (
    Bits,
    Bool,
    Enum,
    Error,
    Extern,
    MatchKind,
    NewType,
    P4Type,
    SerEnum,
    Set,
    Specialized,
    Table,
    Varbit,
)
from .context import Where
from .statements import StatementChecker

_KEY_TYPES = (Bits, Bool, SerEnum, Enum, Error, Varbit, NewType)


class TableChecker(StatementChecker):
    """Checks a table declaration's properties."""

    def check_table(self, t: ast.TableDeclaration) -> None:
        """Check every property of `t` and declare it in the control's scope."""
        seen: dict[str, ast.TableProperty] = {}
        for p in t.properties:
            if p.name in seen:
                raise self.fail(p.pos, f"table {t.name} has property '{p.name}' twice")
            seen[p.name] = p
        key = seen.get("key")
        key_types = self._check_key(key) if isinstance(key, ast.KeyProperty) else []
        actions = seen.get("actions")
        if not isinstance(actions, ast.ActionsProperty):
            raise self.fail(t.pos, f"table {t.name} has no actions property")
        listed = self._check_actions(actions)
        for p in t.properties:
            if isinstance(p, ast.DefaultActionProperty):
                self._check_default(t, p, listed)
            elif isinstance(p, ast.EntriesProperty):
                if not isinstance(key, ast.KeyProperty):
                    raise self.fail(p.pos, f"table {t.name} has entries but no key")
                self._check_entries(t, p, key, key_types, listed)
            elif isinstance(p, ast.ValueProperty):
                self._check_value_property(p)
        t.p4type = Table(t.name, t)
        self.scope.declare(t.name, t, t.pos)

    def _check_key(self, key: ast.KeyProperty) -> list[P4Type]:
        types: list[P4Type] = []
        for element in key.elements:
            # A key is evaluated where the table is applied, so it may apply another table
            # (`t1.apply().hit : exact`), as in an apply block.
            with self.inside(Where(self.where.kind, self.where.decl, in_apply=self.where.kind == "control")):
                kt = self.check_expr(element.expr)
            if not isinstance(kt, _KEY_TYPES):
                raise self.fail(element.expr.pos, f"a table key cannot have type {kt}")
            mk = self.check_expr(element.match_kind)
            if not isinstance(mk, MatchKind):
                raise self.fail(
                    element.match_kind.pos, f"'{element.match_kind.name}' is not a match kind"
                )
            types.append(kt)
        return types

    def _check_actions(self, prop: ast.ActionsProperty) -> dict[str, ast.ActionRef]:
        listed: dict[str, ast.ActionRef] = {}
        for ref in prop.actions:
            decl = self._action_decl(ref)
            if decl.name in listed:
                raise self.fail(ref.pos, f"action {decl.name} is listed twice")
            self._bind_action_ref(ref, decl, need_data=False)
            listed[decl.name] = ref
        return listed

    def _action_decl(self, ref: ast.ActionRef) -> ast.ActionDeclaration:
        path = ref.expr.callee if isinstance(ref.expr, ast.MethodCallExpression) else ref.expr
        assert isinstance(path, ast.PathExpression)
        scope = self.scope.root() if path.is_global else self.scope
        decl = scope.lookup(path.name)
        if decl is None:
            raise self.fail(path.pos, f"unknown action '{path.name}'")
        if not isinstance(decl, ast.ActionDeclaration):
            raise self.fail(path.pos, f"'{path.name}' is not an action")
        path.ref = decl
        path.type = decl.p4type
        ref.ref = decl
        return decl

    def _bind_action_ref(
        self, ref: ast.ActionRef, decl: ast.ActionDeclaration, need_data: bool
    ) -> None:
        """Directional parameters must be bound here; action data only when `need_data`."""
        directional = [p for p in decl.params if p.direction is not ast.Direction.NONE]
        expected = decl.params if need_data else directional
        if need_data and len(ref.args) != len(decl.params):
            raise self.fail(
                ref.pos,
                f"wrong number of arguments to action {decl.name}: expected {len(decl.params)}, got {len(ref.args)}",
            )
        if not need_data and len(ref.args) not in (len(directional), len(decl.params)):
            raise self.fail(
                ref.pos,
                f"action {decl.name} in a table must bind its {len(directional)} directional parameters, "
                f"got {len(ref.args)} arguments",
            )
        params = decl.params[: len(ref.args)] if ref.args else expected[:0]
        bound = self.bind_arguments(ref.args, params, {}, f"action {decl.name}", ref.pos)
        if isinstance(ref.expr, ast.MethodCallExpression):
            ref.expr.call = ast.CallInfo(
                kind=ast.CallKind.ACTION, target=decl, params=list(params), args=bound
            )
            ref.expr.type = decl.p4type.return_type

    def _check_default(
        self, t: ast.TableDeclaration, p: ast.DefaultActionProperty, listed: dict
    ) -> None:
        decl = self._action_decl(p.action)
        if decl.name not in listed:
            raise self.fail(
                p.action.pos, f"default action {decl.name} is not in the actions of table {t.name}"
            )
        if ast.find_annotation(listed[decl.name].annotations, "tableonly"):
            raise self.fail(
                p.action.pos, f"action {decl.name} is @tableonly and cannot be the default action"
            )
        self._bind_action_ref(p.action, decl, need_data=True)

    def _check_entries(
        self,
        t: ast.TableDeclaration,
        p: ast.EntriesProperty,
        key: ast.KeyProperty,
        key_types: list[P4Type],
        listed: dict,
    ) -> None:
        for entry in p.entries:
            if len(entry.keyset) != len(key_types):
                raise self.fail(
                    entry.pos,
                    f"entry has {len(entry.keyset)} key values but table {t.name} has {len(key_types)} keys",
                )
            for k, kt, element in zip(entry.keyset, key_types, key.elements, strict=True):
                self.check_keyset(k, kt, f"key '{_key_name(element)}'")
            decl = self._action_decl(entry.action)
            if decl.name not in listed:
                raise self.fail(
                    entry.action.pos, f"action {decl.name} is not in the actions of table {t.name}"
                )
            if ast.find_annotation(listed[decl.name].annotations, "defaultonly"):
                raise self.fail(
                    entry.action.pos,
                    f"action {decl.name} is @defaultonly and cannot be in an entry",
                )
            self._bind_action_ref(entry.action, decl, need_data=True)
            if entry.priority is not None:
                value = self.const_int(entry.priority, "an entry priority")
                if value < 0:
                    raise self.fail(entry.priority.pos, "an entry priority cannot be negative")

    def check_keyset(self, k: ast.Expression, want: P4Type, what: str) -> None:
        """A keyset element against the type of the value it matches."""
        if isinstance(k, ast.DefaultExpression | ast.DontCareExpression):
            k.type = Set(want)
            return
        # Masks and ranges are arithmetic on the representation: on a serializable-enum key
        # they take its underlying bit<W> (members convert to it), as p4c accepts
        # `(bit<16>)E.M &&& 0xff00`.
        bounds = want.underlying if isinstance(want, SerEnum) else want
        if isinstance(k, ast.MaskExpression):
            self.check_expr(k.value)
            self.check_expr(k.mask)
            self.coerce(k.value, bounds, f"{what} value")
            self.coerce(k.mask, bounds, f"{what} mask")
            k.type = Set(want)
            return
        if isinstance(k, ast.RangeExpression):
            self.check_expr(k.low)
            self.check_expr(k.high)
            self.coerce(k.low, bounds, f"{what} range")
            self.coerce(k.high, bounds, f"{what} range")
            k.type = Set(want)
            return
        t = self.check_expr(k)
        if isinstance(t, Set):
            if t.element != want:
                raise self.fail(k.pos, f"{what}: a set of {t.element} cannot match {want}")
            return
        self.coerce(k, want, what)

    def _check_value_property(self, p: ast.ValueProperty) -> None:
        v = p.value
        t = self.check_expr(v)
        if p.name == "size":
            size = v.const_value
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise self.fail(v.pos, "table size must be a non-negative compile-time integer")
        if p.name in ("implementation", "counters", "meters"):
            base = t.base if isinstance(t, Specialized) else t
            if not isinstance(base, Extern):
                raise self.fail(
                    v.pos, f"table property {p.name} must be an extern instance, not {t}"
                )


def _key_name(element: ast.KeyElement) -> str:
    name = ast.find_annotation(element.annotations, "name")
    if name and name.args and isinstance(name.args[0], ast.StringLiteral):
        return name.args[0].value
    return _expr_text(element.expr)


def _expr_text(e: ast.Expression) -> str:
    if isinstance(e, ast.PathExpression):
        return e.name
    if isinstance(e, ast.MemberExpression):
        return f"{_expr_text(e.expr)}.{e.member}"
    return "key"
