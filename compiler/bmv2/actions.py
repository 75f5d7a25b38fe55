"""The `actions` section: user actions (once per declaring instance) and synthesized ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import ast
from .. import types as t
from ..printer import print_expression
from .aliasing import WRITING, copied_parameters
from .context import Context, annotation_int, annotation_text, field_width, strip_type
from .model import CpAction, CpParam
from .stateful import cp_name
from .statements import StatementLowering, has_call
from .storage import Env, ExprRef, RuntimeDataRef


@dataclass(frozen=True)
class DeclaredIn:
    """Binding of an action declaration: the environment it was declared in."""

    env: Env


def ast_text(e: Any) -> str:
    """A stable text for an argument expression (to compare bindings): the same expression
    written in an action list and in `default_action` binds one action."""
    if isinstance(e, ast.PathExpression):
        return e.name
    if isinstance(e, ast.MemberExpression):
        return f"{ast_text(e.expr)}.{e.member}"
    return print_expression(e)


def is_data_param(param: ast.Parameter) -> bool:
    """Directionless action parameters are action data (set by the control plane)."""
    return param.direction == ast.Direction.NONE


class Actions:
    """Lowers actions on first use and hands out their JSON names and ids."""

    def __init__(self, ctx: Context, externs: Any) -> None:
        self.ctx = ctx
        self.externs = externs
        # (declaration, its environment, the text of its directional arguments) → name, id.
        self._known: dict[tuple[int, int, tuple[str, ...]], tuple[str, int]] = {}
        # Declarations already lowered once: every binding of one action is one P4Info action.
        self._lowered: set[tuple[int, int]] = set()
        # JSON actions that are another binding's copy (they share their original's name).
        self.copies: set[int] = set()
        self._hidden_count = 0
        # Pipeline being lowered (1 ingress, 2 egress): p4c lists actions per control.
        self.control_rank = 0

    def sort_key(self, decl: Any, home: Env) -> tuple:
        """Where p4c would list this action: top level first, then per control in source order."""
        pos = (decl.pos.line, decl.pos.column) if decl.pos is not None else (0, 0)
        if home.parent is None:
            return (0, 0, (pos,))
        return (self.control_rank, 0, (*home.anchor, pos))

    def hidden_key(self) -> tuple:
        """Synthesized actions follow the user actions of their control."""
        self._hidden_count += 1
        return (self.control_rank, 1, ((self._hidden_count, 0),))

    def declaring_env(self, decl: ast.ActionDeclaration, env: Env) -> Env:
        """The environment `decl` was declared in, as seen from `env`."""
        binding = env.lookup(decl)
        return binding.env if isinstance(binding, DeclaredIn) else env

    def name_of(self, decl: ast.ActionDeclaration, env: Env) -> str:
        """The JSON name of action `decl` referenced from `env` (every binding shares it)."""
        return cp_name(decl, self.declaring_env(decl, env))

    def get(
        self, decl: ast.ActionDeclaration, env: Env, bound: list[Any] | None = None
    ) -> tuple[str, int]:
        """JSON name and id of action `decl` referenced from `env` (lowered on first use).

        `bound` holds the reference's arguments per parameter: those of directional
        parameters (`my_drop(standard_metadata)` in an action list) are bound in the body.
        An action bound to other arguments elsewhere gets a JSON copy of its own under the
        same name (p4c copies an action for each use), one action in P4Info.
        """
        home = self.declaring_env(decl, env)
        directional = [
            (param, arg) for param, arg in zip(decl.params, bound or [], strict=False)
            if not is_data_param(param) and arg is not None
        ]
        key = (id(decl), id(home), tuple(ast_text(arg) for _, arg in directional))
        known = self._known.get(key)
        if known is not None:
            return known
        name = cp_name(decl, home)
        body_env = home.child()
        sl = StatementLowering(self.ctx, self.externs)
        # An `in` argument the body could see change, or computed by a call, is copied in
        # once when the action starts (otherwise each read would evaluate it again); an
        # `out`/`inout` l-value whose index calls something is evaluated then too.
        copies = {id(p) for p in copied_parameters(decl.params, bound or [], [decl.body])}
        for param, arg in directional:
            if param.direction not in WRITING and (id(param) in copies or has_call(arg)):
                storage = self.ctx.local_storage(self.ctx.local_name(param.name), param.p4type or arg.type)
                sl.assign(storage, arg, env, arg)
                body_env.bind(param, storage)
            elif param.direction in WRITING and has_call(arg):
                body_env.bind(param, sl.exprs.resolve(arg, env))
            else:
                body_env.bind(param, ExprRef(arg, env))
        runtime_data = []
        cp_params = []
        index = 0
        for param in decl.params:
            if not is_data_param(param):
                continue
            ptype = strip_type(param.p4type or param.type_node.resolved)
            width = field_width(ptype) if not isinstance(ptype, t.Bool) else 1
            body_env.bind(param, RuntimeDataRef(index, param.p4type or ptype))
            runtime_data.append({"name": param.name, "bitwidth": width})
            cp_params.append(CpParam(param.name, width, annotation_int(param.annotations, "id")))
            index += 1
        entry: dict = {"name": name, "id": self.ctx.next_id("actions"), "runtime_data": runtime_data,
                       "primitives": []}
        self.ctx.actions.append(entry)
        self.ctx.action_order[name] = self.sort_key(decl, home)
        self._known[key] = (name, entry["id"])
        entry["primitives"] = sl.lower_action(decl, body_env)
        annotations = [annotation_text(a) for a in decl.annotations if a.name not in ("name", "id")]
        if (id(decl), id(home)) in self._lowered:
            self.copies.add(id(entry))
            return name, entry["id"]
        self._lowered.add((id(decl), id(home)))
        if ast.find_annotation(decl.annotations, "hidden") is None:
            self.ctx.cp.actions.append(CpAction(name, cp_params, annotation_int(decl.annotations, "id"), annotations))
        return name, entry["id"]

    def hidden(
        self, statements: list[Any], env: Env, base: str, overrides: dict[int, Any] | None = None
    ) -> tuple[str, int]:
        """A synthesized `@hidden` action holding control statements (not in P4Info).

        `overrides` maps expressions already computed (a table's hit) to their bindings.
        """
        name = self.ctx.unique(base)
        entry: dict = {"name": name, "id": self.ctx.next_id("actions"), "runtime_data": [],
                       "primitives": []}
        self.ctx.actions.append(entry)
        self.ctx.action_order[name] = self.hidden_key()
        sl = StatementLowering(self.ctx, self.externs)
        sl.exprs.overrides.update(overrides or {})
        entry["primitives"] = sl.lower_statements(statements, env)
        return name, entry["id"]

    def hidden_primitives(self, primitives: list[dict], base: str) -> tuple[str, int]:
        """A synthesized action made of already lowered primitives."""
        name = self.ctx.unique(base)
        entry: dict = {"name": name, "id": self.ctx.next_id("actions"), "runtime_data": [],
                       "primitives": primitives}
        self.ctx.actions.append(entry)
        self.ctx.action_order[name] = self.hidden_key()
        return name, entry["id"]

    def hidden_assignments(
        self, pairs: list[tuple[Any, Any]], env: Env, base: str, overrides: dict[int, Any] | None = None
    ) -> tuple[str, int]:
        """A synthesized action storing each expression into its temporary (table keys);
        `overrides` maps terms already computed (another table's hit) to their bindings."""
        name = self.ctx.unique(base)
        entry: dict = {"name": name, "id": self.ctx.next_id("actions"), "runtime_data": [], "primitives": []}
        self.ctx.actions.append(entry)
        self.ctx.action_order[name] = self.hidden_key()
        sl = StatementLowering(self.ctx, self.externs)
        sl.exprs.overrides.update(overrides or {})
        for target, expr in pairs:
            sl.store(target, sl.exprs.value(expr, env), expr)
        entry["primitives"] = sl.out.resolve()
        return name, entry["id"]
