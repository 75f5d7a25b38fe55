"""The `parsers` and `parse_vsets` sections (formats.md §1.9), with sub-parsers inlined.

A sub-parser call splits its state: the ops before the call end in a jump to the callee's
inlined start state, and the callee's `accept` continues in a new state holding the rest.
Select keys that are not plain fields are first computed into `scalars` temporaries;
ranges in keysets become value/mask pairs, since BMv2 transitions only know masks.
"""

from __future__ import annotations

import itertools
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .aliasing import copied_parameters
from .context import (
    Context,
    annotation_int,
    annotation_string,
    field_width,
    strip_type,
    unsupported,
)
from .expressions import to_bool, to_data
from .hexstr import byte_width
from .model import CpParam, CpValueSet
from .statements import Frame, Label, StatementLowering, has_call
from .storage import Env, ExprRef, FieldRef, InstanceRef, applied_instance


def range_to_masks(low: int, high: int, width: int) -> list[tuple[int, int]]:
    """Value/mask pairs whose union is exactly the integers in [low, high] (width bits)."""
    out: list[tuple[int, int]] = []
    full = (1 << width) - 1
    while low <= high:
        size = low & -low if low else 1 << width
        while low + size - 1 > high:
            size >>= 1
        out.append((low, full & ~(size - 1)))
        low += size
    return out


REJECT_WARNING = "explicit transition to reject not supported on this target (parsing ends as on accept)"


class ParserLowering:
    """Builds the single `parser` object of a v1model program."""

    def __init__(self, ctx: Context, externs: Any, instantiate: Any) -> None:
        self.ctx = ctx
        self.externs = externs
        self.instantiate = instantiate
        self.states: list[dict] = []
        self.initialisers: list[Any] = []
        # A sub-parser instance applied more than once gets its states once per call site
        # (each returns to its own continuation, with its own arguments) but keeps one set
        # of locals: its value sets are one control-plane object, as p4c's inliner makes.
        self.applications: dict[str, int] = {}
        # The state a `reject` transition goes to: None (v1model: p4c-bm2-ss's null next
        # state, parsing ends as on accept) or a marked sink state (TNA drops the packet).
        self.reject_state: str | None = None
        self.instance_locals: dict[str, Env] = {}

    def lower(self, decl: ast.ParserDeclaration, env: Env) -> dict:
        """The `parser` JSON object for the top-level parser `decl` bound in `env`."""
        start = self.inline(decl, env, "", None)
        parser: dict = {"name": "parser", "id": self.ctx.next_id("parser"), "init_state": start}
        parser["parse_states"] = self.states
        return parser

    def inline(
        self,
        decl: ast.ParserDeclaration,
        env: Env,
        prefix: str,
        accept: str | None,
        locals_from: Env | None = None,
    ) -> str:
        """Lower all states of `decl` with names prefixed; returns the start state's name.

        `locals_from` is the environment of an earlier application of the same instance,
        whose locals this one shares (only their initialisers run again)."""
        self.initialisers: list[Any] = []
        for local in decl.locals:
            if locals_from is None:
                self.local(local, env)
                continue
            storage = locals_from.lookup(local)
            env.bind(local, storage)
            if isinstance(local, ast.VariableDeclaration) and local.init is not None:
                self.initialisers.append((storage, local.init, local))
        initialisers = self.initialisers
        names = {id(s): prefix + s.name for s in decl.states}
        start = next((s for s in decl.states if s.name == "start"), None)
        if start is None:
            raise CompileError(decl.pos, f"parser {decl.name} has no start state")
        for state in decl.states:
            # Parser locals are initialised when the parser starts.
            self.state(state, env, names, accept, prefix, initialisers if state is start else [])
        return names[id(start)]

    def local(self, local: Any, env: Env) -> None:
        """Parser locals: value sets, variables, sub-parser and extern instances."""
        if isinstance(local, ast.ValueSetDeclaration):
            name = self.cp_name(local, env)
            elem = strip_type(local.element_type.resolved)
            width = field_width(elem) if not isinstance(elem, t.StructLike) else t.bit_width(elem)
            members = []
            if isinstance(elem, t.StructLike):
                members = [CpParam(n, field_width(strip_type(ft))) for n, ft in elem.fields]
            size = int(local.size.const_value)
            entry: dict = {"name": name, "id": self.ctx.next_id("parse_vsets")}
            info = self.ctx.source_info(local)
            if info is not None:
                entry["source_info"] = info
            entry["compressed_bitwidth"] = width
            entry["max_size"] = size
            self.ctx.parse_vsets.append(entry)
            self.ctx.cp.value_sets.append(
                CpValueSet(name, width, size, annotation_int(local.annotations, "id"), members)
            )
            env.bind(local, InstanceRef(local, name))
            return
        if isinstance(local, ast.VariableDeclaration):
            storage = self.ctx.local_storage(self.ctx.local_name(local.name), local.p4type or local.type_node.resolved)
            env.bind(local, storage)
            if local.init is not None:
                self.initialisers.append((storage, local.init, local))
            return
        if isinstance(local, ast.ConstantDeclaration):
            return
        if isinstance(local, ast.Instantiation):
            self.instantiate(local, env)
            return
        raise unsupported(local, f"the parser local {type(local).__name__}")

    def cp_name(self, decl: Any, env: Env) -> str:
        """Control-plane name of a parser-local object."""
        name = annotation_string(decl.annotations, "name") or decl.name
        if name.startswith("."):
            return name[1:]
        return f"{env.prefix}.{name}" if env.prefix else name

    def new_state(self, name: str) -> dict:
        """Append an empty parse state named `name` (unique: transitions name states)."""
        if any(s["name"] == name for s in self.states):
            raise CompileError(None, f"internal error: two parse states named {name}")
        state = {
            "name": name,
            "id": self.ctx.next_id("parse_states"),
            "parser_ops": [],
            "transitions": [],
            "transition_key": [],
        }
        self.states.append(state)
        return state

    def state(
        self,
        s: ast.ParserState,
        env: Env,
        names: dict[int, str],
        accept: str | None,
        prefix: str,
        initialisers: list[Any],
    ) -> None:
        """One P4 parse state (possibly split around sub-parser calls)."""
        current = self.new_state(names[id(s)])
        sl = StatementLowering(self.ctx, self.externs, in_parser=True)
        split = [0]
        holder = {"state": current}
        self.split_on_short_circuits(sl, holder, names[id(s)], split)
        for storage, value, node in initialisers:
            sl.assign(storage, value, env, node)
        sl.exprs.short_circuit = None
        current = holder["state"]
        scope = env.child()
        frame = Frame(end=Label(), outermost=True)
        current, sl = self.components(s.components, current, sl, scope, frame, names[id(s)], prefix, split)
        # A select key's `&&`, `||` or `?:` whose skipped side calls something splits the
        # state as a statement's would: the transition goes on the last join state.
        holder = {"state": current}
        self.split_on_short_circuits(sl, holder, names[id(s)], split)
        self.transitions(holder, s, sl, scope, names, accept)
        sl.exprs.short_circuit = None
        holder["state"]["parser_ops"] = sl.out.prims

    def components(
        self,
        components: list[Any],
        current: dict,
        sl: StatementLowering,
        scope: Env,
        frame: Frame,
        base: str,
        prefix: str,
        split: list[int],
    ) -> tuple[dict, StatementLowering]:
        """Lower statements into `current`; sub-parser calls and `if`s split the state.

        Returns the state (and its op list) where the statements after these continue.
        """
        for component in components:
            call = component.call if isinstance(component, ast.MethodCallStatement) else None
            if (
                call is not None
                and call.call is not None
                and call.call.kind == ast.CallKind.PARSER_APPLY
            ):
                continuation = f"{base}_{split[0]}"
                split[0] += 1
                # Arguments are evaluated before the call; their short circuits split the
                # state like any statement's.
                holder = {"state": current}
                self.split_on_short_circuits(sl, holder, base, split)
                sub_start = self.call_subparser(call, scope, continuation, prefix, sl)
                sl.exprs.short_circuit = None
                current = holder["state"]
                current["parser_ops"] = sl.out.prims
                current["transitions"] = [self.transition("default", None, None, sub_start)]
                current = self.new_state(continuation)
                sl = StatementLowering(self.ctx, self.externs, in_parser=True)
                continue
            if isinstance(component, ast.BlockStatement):
                current, sl = self.components(
                    component.components, current, sl, scope.child(), frame, base, prefix, split)
                continue
            if isinstance(component, ast.IfStatement):
                current, sl = self.if_split(component, current, sl, scope, frame, base, prefix, split)
                continue
            holder = {"state": current}
            self.split_on_short_circuits(sl, holder, base, split)
            sl.statement(component, scope, frame)
            sl.exprs.short_circuit = None
            current = holder["state"]
        return current, sl

    def split_on_short_circuits(self, sl: StatementLowering, holder: dict, base: str, split: list[int]) -> None:
        """Make `sl` lower `a && f()`, `a || f()` and `c ? f() : x` by splitting the state
        held in `holder`, so the call runs only when P4 evaluates it: the state ends with a
        select on what decides, each evaluated side is a state of its own, and the ops after
        the expression go on in a join state (`holder` then holds it), as for `if`."""
        sl.exprs.short_circuit = lambda e, env: self.short_circuit_split(e, env, sl, holder, base, split)

    @staticmethod
    def split_number(base: str, split: list[int]) -> tuple[int, str]:
        """The next split of state `base` and its join state's name."""
        number = split[0]
        split[0] += 1
        return number, f"{base}_join_{number}"

    def short_circuit_split(
        self, e: ast.BinaryExpression | ast.TernaryExpression, env: Env, sl: StatementLowering,
        holder: dict, base: str, split: list[int],
    ) -> FieldRef:
        """One short-circuit expression whose skipped side calls something (see
        `split_on_short_circuits`); returns the temporary holding its value."""
        if isinstance(e, ast.TernaryExpression):
            if not isinstance(strip_type(e.type), t.Bits | t.Bool):
                raise unsupported(e, "a ?: of this type whose branches call something, in a parser state")
            result = self.ctx.temporary(e.type)
            decides = self.ctx.temporary(t.Bool())
            sl.store(decides, to_bool(sl.exprs.value(e.cond, env)), e)
            number, join = self.split_number(base, split)
            branches = {"true": e.then, "false": e.otherwise}
            on_true, otherwise = f"{base}_true_{number}", f"{base}_false_{number}"
        else:
            result = decides = self.ctx.temporary(t.Bool())
            sl.store(result, to_bool(sl.exprs.value(e.left, env)), e)
            number, join = self.split_number(base, split)
            # `a || b` is decided when a holds; `a && b` when it does not.
            evaluate = f"{base}_true_{number}" if e.op == "&&" else f"{base}_false_{number}"
            branches = {"true" if e.op == "&&" else "false": e.right}
            on_true, otherwise = (evaluate, join) if e.op == "&&" else (join, evaluate)
        # Read after the deciding operand, whose own short circuits may have split the state.
        current = holder["state"]
        current["parser_ops"] = list(sl.out.prims)
        sl.out.prims.clear()
        current["transition_key"] = [decides.operand()]
        current["transitions"] = [
            self.transition("hexstr", "0x01", None, on_true),
            self.transition("default", None, None, otherwise),
        ]
        for label, branch in branches.items():
            branch_holder = {"state": self.new_state(f"{base}_{label}_{number}")}
            branch_sl = StatementLowering(self.ctx, self.externs, in_parser=True)
            self.split_on_short_circuits(branch_sl, branch_holder, base, split)
            value = branch_sl.exprs.value(branch, env)
            branch_sl.store(result, to_bool(value) if isinstance(strip_type(e.type), t.Bool) else value, e)
            end = branch_holder["state"]
            end["parser_ops"] = branch_sl.out.prims
            end["transitions"] = [self.transition("default", None, None, join)]
        holder["state"] = self.new_state(join)
        return result

    def if_split(
        self,
        s: ast.IfStatement,
        current: dict,
        sl: StatementLowering,
        scope: Env,
        frame: Frame,
        base: str,
        prefix: str,
        split: list[int],
    ) -> tuple[dict, StatementLowering]:
        """`if` in a parser state: BMv2 states cannot branch inside, so the state ends with a
        select on the condition and each branch becomes a state joining at a new state, as
        p4c's parser control-flow removal does. A call the condition's `&&`, `||` or `?:`
        skips splits the state first, as in any other statement of a state."""
        holder = {"state": current}
        self.split_on_short_circuits(sl, holder, base, split)
        key, _ = self.select_key(s.cond, sl, scope)
        sl.exprs.short_circuit = None
        current = holder["state"]
        current["parser_ops"] = sl.out.prims
        current["transition_key"] = [key]
        number = split[0]
        split[0] += 1
        join = f"{base}_join_{number}"
        targets = {}
        exits: list[tuple[dict, StatementLowering]] = []
        for label, branch in (("true", s.then), ("false", s.otherwise)):
            if branch is None:
                targets[label] = join
                continue
            name = f"{base}_{label}_{number}"
            targets[label] = name
            state = self.new_state(name)
            branch_sl = StatementLowering(self.ctx, self.externs, in_parser=True)
            body = branch.components if isinstance(branch, ast.BlockStatement) else [branch]
            exits.append(self.components(body, state, branch_sl, scope.child(), frame, base, prefix, split))
        current["transitions"] = [
            self.transition("hexstr", "0x01", None, targets["true"]),
            self.transition("default", None, None, targets["false"]),
        ]
        for state, branch_sl in exits:
            state["parser_ops"] = branch_sl.out.prims
            state["transitions"] = [self.transition("default", None, None, join)]
        return self.new_state(join), StatementLowering(self.ctx, self.externs, in_parser=True)

    def call_subparser(
        self,
        e: ast.MethodCallExpression,
        env: Env,
        continuation: str,
        outer_prefix: str,
        sl: StatementLowering,
    ) -> str:
        """Inline a sub-parser instance's states; its `accept` continues at `continuation`."""
        inst = e.call.target
        binding = applied_instance(inst, env)
        if not isinstance(binding, InstanceRef) or not isinstance(
            binding.p4type, ast.ParserDeclaration
        ):
            raise unsupported(e, "applying this parser")
        sub = binding.p4type
        sub_env = Env(parent=env, prefix=binding.name)
        for param, bound in binding.constructor:
            sub_env.bind(param, bound)
        copies = {id(p) for p in copied_parameters(sub.params, e.call.args, [sub.states, sub.locals])}
        # An argument computed by a call is evaluated once, at the call, into a local (copy-in).
        copies |= {
            id(p) for p, a in zip(sub.params, e.call.args, strict=False)
            if a is not None and p.direction not in (ast.Direction.OUT, ast.Direction.INOUT) and has_call(a)
        }
        for param, arg in zip(sub.params, e.call.args, strict=False):
            if isinstance(strip_type(param.p4type), t.Extern) or arg is None:
                continue
            if id(param) in copies:
                storage = self.ctx.local_storage(self.ctx.local_name(param.name), param.p4type or arg.type)
                sl.assign(storage, arg, env, arg)
                sub_env.bind(param, storage)
            elif isinstance(arg, ast.DontCareExpression) or (
                    param.direction in (ast.Direction.OUT, ast.Direction.INOUT) and has_call(arg)):
                # An l-value whose index calls something is evaluated once, at the call.
                sub_env.bind(param, sl.exprs.resolve(arg, env))
            else:
                sub_env.bind(param, ExprRef(arg, env))
        applied = self.applications.get(binding.name, 0)
        self.applications[binding.name] = applied + 1
        prefix = f"{outer_prefix}{inst.name}_" + (f"{applied}_" if applied else "")
        first = self.instance_locals.setdefault(binding.name, sub_env)
        return self.inline(sub, sub_env, prefix, continuation,
                           locals_from=None if first is sub_env else first)

    @staticmethod
    def transition(kind: str, value: str | None, mask: str | None, next_state: str | None) -> dict:
        """One transition object in p4c's key order."""
        return {"type": kind, "value": value, "mask": mask, "next_state": next_state}

    def target_name(
        self, e: ast.Expression, names: dict[int, str], accept: str | None
    ) -> str | None:
        """JSON name of the state a transition names (`accept` → continuation or null)."""
        ref = getattr(e, "ref", None)
        name = getattr(e, "name", None)
        if ref is not None and id(ref) in names:
            return names[id(ref)]
        if name == "accept":
            return accept
        if name == "reject":
            if self.reject_state is not None:
                return self.reject_state
            # p4c-bm2-ss writes a null next state with this warning; BMv2 then ends
            # parsing without an error, as on accept.
            self.ctx.warn(e.pos, REJECT_WARNING)
            return None
        raise CompileError(e.pos, f"unknown parser state {name}")

    def transitions(
        self,
        holder: dict,
        s: ast.ParserState,
        sl: StatementLowering,
        env: Env,
        names: dict[int, str],
        accept: str | None,
    ) -> None:
        """Fill `transitions` and `transition_key` of the state in `holder` from the P4
        transition (lowering the select keys may split the state: `holder` then holds the
        last part)."""
        tr = s.transition
        if not isinstance(tr, ast.SelectExpression):
            state = holder["state"]
        if tr is None:
            if self.reject_state is None:
                self.ctx.warn(s.pos, f"{s.name}: implicit transition to `reject'; {REJECT_WARNING}")
            state["transitions"] = [self.transition("default", None, None, self.reject_state)]
            return
        if not isinstance(tr, ast.SelectExpression):
            state["transitions"] = [
                self.transition("default", None, None, self.target_name(tr, names, accept))
            ]
            return
        keys: list[dict] = []
        widths: list[int] = []
        for index, key in enumerate(tr.exprs):
            # Keys are evaluated left to right: a field read before a later key's call must
            # keep the value it had (the transition reads the key fields at its end).
            later_calls = any(sl.exprs.calls_in(k) for k in tr.exprs[index + 1:])
            operand, width = self.select_key(key, sl, env, copy_fields=later_calls)
            keys.append(operand)
            widths.append(width)
        state = holder["state"]
        state["transition_key"] = keys
        out: list[dict] = []
        for case in tr.cases:
            next_state = self.target_name(case.state, names, accept)
            keyset = case.keyset
            vset = self.value_set(keyset, env)
            if vset is not None:
                out.append(self.transition("parse_vset", vset, None, next_state))
                continue
            components = self.keyset_components(keyset, len(widths))
            alternatives = [
                self.component(c, w, env) for c, w in zip(components, widths, strict=True)
            ]
            matched_all = False
            for combo in itertools.product(*alternatives):
                if all(mask == 0 for _, mask in combo):
                    out.append(self.transition("default", None, None, next_state))
                    matched_all = True
                    break
                out.append(self.transition("hexstr", *self.hexstr_case(combo, widths), next_state))
            if matched_all:
                # The cases after one that matches everything are never reached, and BMv2
                # keeps only the last `default` transition of a state.
                break
        state["transitions"] = out

    @staticmethod
    def hexstr_case(combo: tuple[tuple[int, int], ...], widths: list[int]) -> tuple[str, str | None]:
        """Value and mask (None when every bit counts) of one case, components byte-padded."""
        value = "".join(f"{v:0{2 * byte_width(w)}x}" for (v, _), w in zip(combo, widths, strict=True))
        full = all(mask == (1 << w) - 1 for (_, mask), w in zip(combo, widths, strict=True))
        if full:
            return "0x" + value, None
        mask_text = "".join(f"{m:0{2 * byte_width(w)}x}" for (_, m), w in zip(combo, widths, strict=True))
        return "0x" + value, "0x" + mask_text

    def keyset_components(self, keyset: ast.Expression, count: int) -> list[ast.Expression]:
        """The per-key components of a select case's keyset."""
        if isinstance(keyset, ast.ListExpression):
            if len(keyset.components) != count:
                raise CompileError(
                    keyset.pos,
                    f"keyset has {len(keyset.components)} components, select has {count}",
                )
            return list(keyset.components)
        if isinstance(keyset, ast.DefaultExpression | ast.DontCareExpression):
            return [keyset] * count
        if count != 1:
            raise CompileError(keyset.pos, f"keyset has one component, select has {count}")
        return [keyset]

    def value_set(self, keyset: ast.Expression, env: Env) -> str | None:
        """The parse_vset name when the keyset names a value set."""
        if isinstance(keyset, ast.PathExpression) and isinstance(
            keyset.ref, ast.ValueSetDeclaration
        ):
            binding = env.lookup(keyset.ref)
            if isinstance(binding, InstanceRef):
                return binding.name
        return None

    def component(self, c: ast.Expression, width: int, env: Env) -> list[tuple[int, int]]:
        """(value, mask) alternatives for one keyset component of `width` bits."""
        full = (1 << width) - 1
        if isinstance(c, ast.DefaultExpression | ast.DontCareExpression):
            return [(0, 0)]
        if isinstance(c, ast.MaskExpression):
            value = self.const(c.value) & full
            mask = self.const(c.mask) & full
            return [(value & mask, mask)]
        if isinstance(c, ast.RangeExpression):
            low = self.const(c.low)
            high = self.const(c.high)
            if low > high:
                return []
            return range_to_masks(low & full, high & full, width)
        return [(self.const(c) & full, full)]

    @staticmethod
    def const(e: ast.Expression) -> int:
        """The integer value of a keyset constant (enum members and booleans included)."""
        value = e.const_value
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, t.EnumValue) and value.value is not None:
            return value.value
        if isinstance(value, int):
            return value
        raise CompileError(e.pos, "select keysets must be compile-time constants")

    def select_key(
        self, e: ast.Expression, sl: StatementLowering, env: Env, copy_fields: bool = False
    ) -> tuple[dict, int]:
        """Transition-key operand and width for one select expression; with `copy_fields`
        a field's value is copied into a temporary now instead of read at the transition."""
        width = field_width(strip_type(e.type)) if not isinstance(strip_type(e.type), t.Bool) else 1
        operand = sl.exprs.value(e, env)
        if operand.get("type") == "lookahead" or (
                operand.get("type") in ("field", "stack_field") and not copy_fields):
            return operand, width
        if operand.get("type") == "expression" and operand["value"].get("op") == "d2b" and not copy_fields:
            inner = operand["value"]["right"]
            if inner.get("type") in ("field", "stack_field"):
                return inner, width
        tmp: FieldRef = self.ctx.temporary(
            e.type if not isinstance(strip_type(e.type), t.Bool) else t.Bits(1)
        )
        sl.emit_parser_op("set", [tmp.operand(), to_data(operand)])
        return tmp.operand(), width
