"""One gress of one TNA pipe (ingress, egress or ghost) as a BMv2 JSON document.

The ingress (or egress) parser, control and deparser of a pipe share one header and
metadata layout, which is the other gress's only through what the ingress deparser
emits, so each gress is lowered on its own, with the v1model back end's parser, control
and table lowering, TNA's extern lowering, and the architecture's intrinsic metadata as
header instances named by the architecture's parameter names.
"""

from __future__ import annotations

from typing import Any

from ... import ast
from ... import types as t
from ...arch import Architecture
from ..actions import Actions
from ..context import annotation_string, strip_type
from ..deparser import emitted_headers
from ..externs import instance_type_name
from ..parsers import ParserLowering
from ..pipelines import ControlLowering
from ..program import ProgramLowering
from ..statements import StatementLowering
from ..storage import Env, FieldRef, HeaderRef, InstanceRef, StructRef
from . import unsupported
from .externs import TnaExterns, is_packet_out
from .stateful import CALCULATION_ALGORITHMS, TnaStateful

# The parse state a `transition reject` goes to: it ends parsing and marks the packet
# rejected (README "TNA JSON": Tofino's parser drops it).
REJECT_STATE = "$reject"


def _with_tna_keys(out: dict, entry: dict) -> dict:
    """`out` (BMv2's keys) with the keys TNA adds to counter and meter arrays."""
    for key in ("color_values", "true_egress_accounting"):
        if key in entry and key not in out:
            out[key] = entry[key]
    return out


def _goes_to(parser: dict, state: str) -> bool:
    """Whether any transition of `parser` names `state`."""
    return any(tr["next_state"] == state for s in parser["parse_states"] for tr in s["transitions"])


class GressLowering(ProgramLowering):
    """Lowers the blocks of one gress: `blocks` maps role (parser/control/deparser) to a
    list of (declaration, constructor arguments); `hdr_type`/`meta_type` are its H and M."""

    def __init__(self, checked: Any, program_path: str, arch: Architecture, gress: str,
                 blocks: dict[str, list[tuple[Any, list]]], hdr_type: Any, meta_type: Any) -> None:
        super().__init__(checked, program_path)
        self.arch = arch
        self.arch_files = arch.arch_files
        self.gress = gress
        self.blocks = blocks
        self.hdr_type = hdr_type
        self.meta_type = meta_type
        self.ctx.match_kinds = dict(arch.match_kinds)
        self.calcs.algorithms = CALCULATION_ALGORITHMS
        self.ctx.pad_flexible = True
        self.ctx.timeout_properties = ("support_timeout", "idle_timeout")
        self.stateful = TnaStateful(self.ctx, arch, self.lower_register_action)
        self.externs = TnaExterns(self.ctx, self.calcs, self.lists, self.stateful)
        self.actions = Actions(self.ctx, self.externs)
        self.intrinsic_storage: dict[str, Any] = {}

    # ---------------------------------------------------------------- whole gress

    def lower(self) -> tuple[dict, Any]:
        """The gress's BMv2 JSON document and control-plane model."""
        ctx = self.ctx
        for index, name in enumerate(self.checked.errors):
            ctx.errors[name] = index
        ctx.cp.errors = list(self.checked.errors)
        self.declarations()
        # The architecture's intrinsic metadata keeps its names (engines find it by them);
        # a program's own instance of the same name (open-p4studio's tna_bridged_md
        # bridges a metadata member `ig_intr_md`) becomes `ig_intr_md_0`, in both gresses.
        ctx.reserved_instance_names = frozenset(
            item.name for items in self.arch.intrinsic.values() for item in items)
        storages: dict[str, tuple[t.P4Type, Any]] = {}
        if self.hdr_type is not None:
            storages["H"] = (self.hdr_type, self.headers_storage(self.hdr_type))
        if self.meta_type is not None:
            storages["M"] = (self.meta_type, self.metadata_storage(self.meta_type))
        intrinsic = []
        for item in self.arch.intrinsic.get(self.gress, ()):
            decl = self.checked.declaration(item.type_name)
            p4type = getattr(decl, "p4type", None)
            if not isinstance(p4type, t.StructLike):
                continue  # not declared by this architecture revision
            storage = ctx.add_header(item.name, p4type, not item.prepended)
            storages[item.name] = (p4type, storage)
            intrinsic.append({"name": item.name, "type": item.type_name, "role": item.role,
                              "prepended": item.prepended})
        self.block_args = {}
        parsers = []
        for index, (decl, args) in enumerate(self.blocks.get("parser", [])):
            self.block_args["parser"] = args
            env = self.block_env(decl, storages, "parser")
            lowering = ParserLowering(ctx, self.externs, self.stateful.instantiate)
            lowering.reject_state = REJECT_STATE
            parser = lowering.lower(decl, env)
            parser["name"] = "parser" if index == 0 else f"parser_{index}"
            if _goes_to(parser, REJECT_STATE):
                parser["parse_states"].append({
                    "name": REJECT_STATE, "id": len(parser["parse_states"]), "parser_ops": [],
                    "transition_key": [], "transitions": [{"type": "default", "value": None, "mask": None,
                                                           "next_state": None}],
                    "reject": True,
                })
            parsers.append(parser)
        pipelines = []
        controls = [(self.gress, "control", block) for block in self.blocks.get("control", [])]
        controls += [("ghost", "ghost", block) for block in self.blocks.get("ghost", [])]
        for rank, (name, kind, (decl, args)) in enumerate(controls, start=1):
            self.block_args[kind] = args
            self.actions.control_rank = rank
            env = self.block_env(decl, storages, kind)
            pipelines.append(ControlLowering(ctx, self.actions, self.stateful, self.externs)
                             .lower(name, decl, env))
            self.bind_direct_registers(decl, env)
            for profile in pipelines[-1]["action_profiles"]:
                if "selector" in profile:
                    profile["selector"].update(self.stateful.selector_details(profile["name"]))
        for entry in self.stateful.direct_registers.values():
            if entry["binding"] is None:
                # Used outside any table's actions: bf-p4c places such a call in a table of
                # its own with one entry, so the register has one cell.
                entry["size"] = 1
        ctx.renumber_actions(pipelines)
        self.check_unique_names(pipelines)
        deparsers = []
        for decl, args in self.blocks.get("deparser", []):
            self.block_args["deparser"] = args
            deparsers.append(self.lower_deparser(decl, self.block_env(decl, storages, "deparser")))
        self.stateful.drop_unused_direct()
        document = self.sections(parsers, deparsers, pipelines, self.stateful.extern_instances)
        document["intrinsic_metadata"] = intrinsic
        document["register_actions"] = self.stateful.register_actions
        return document, ctx.cp

    def declarations(self) -> None:
        """Top-level actions and enums; a top-level extern instance belongs to the gress whose
        blocks use it (Tofino keeps ingress and egress state apart)."""
        saved = self.checked.program.declarations
        used = referenced([decl for blocks in self.blocks.values() for decl, _ in blocks])
        self.checked.program.declarations = [
            d for d in saved
            if not (isinstance(d, ast.Instantiation) and (_is_package(d) or id(d) not in used))
        ]
        try:
            super().declarations()
        finally:
            self.checked.program.declarations = saved

    @staticmethod
    def meter_json(entry: dict) -> dict:
        """A meter array; TNA's carry the colour values their meters write."""
        return _with_tna_keys(ProgramLowering.meter_json(entry), entry)

    @staticmethod
    def counter_json(entry: dict) -> dict:
        """A counter array in p4c's key order, with TNA's keys."""
        return _with_tna_keys(ProgramLowering.counter_json(entry), entry)

    # ---------------------------------------------------------------- deparser

    def lower_deparser(self, decl: ast.ControlDeclaration, env: Env) -> dict:
        """A deparser: `order` from the top-level `emit` calls, `primitives` from everything
        else (checksum updates, Mirror/Resubmit/Digest/Pktgen calls and the conditions
        around them), which an engine runs before it emits."""
        for local in decl.locals:
            if isinstance(local, ast.Instantiation):
                self.stateful.instantiate(local, env)
            else:
                raise unsupported(local, "this declaration in a TNA deparser (extern instances only)")
        sl = StatementLowering(self.ctx, self.externs)
        order: list[str] = []
        rest: list[Any] = []
        for s in _flatten(decl.body.components):
            call = s.call.call if isinstance(s, ast.MethodCallStatement) else None
            if call is not None and getattr(call.target, "name", "") == "emit" and is_packet_out(call):
                for name in emitted_headers(sl.exprs.resolve(call.args[0], env), s):
                    if name not in order:
                        order.append(name)
            else:
                rest.append(s)
        self.externs.where = "deparser"
        try:
            primitives = sl.lower_statements(rest, env) if rest else []
        finally:
            self.externs.where = "control"
        deparser: dict = {"name": "deparser", "id": self.ctx.next_id("deparser")}
        info = self.ctx.source_info(decl)
        if info is not None:
            deparser["source_info"] = info
        deparser["order"] = order
        deparser["primitives"] = primitives
        return deparser

    # ---------------------------------------------------------------- stateful ALU

    def lower_register_action(self, decl: ast.Instantiation, name: str, register: str, env: Env) -> dict:
        """A RegisterAction's apply body as primitives over a state header: `value` (the
        cell, read before and written back after) and `rv1`..`rv4` (what execute returns);
        T2NA's `overflow`/`underflow` bodies (a full FIFO/stack pushed, an empty one popped)
        likewise, over the same state."""
        bodies = {d.name: d for d in decl.initializer if isinstance(d, ast.FunctionDeclaration)}
        apply = bodies["apply"]
        params = list(apply.params)
        if not params or params[0].direction is not ast.Direction.INOUT:
            raise unsupported(apply, "an apply without the inout register value as its first parameter")
        value_type = strip_type(params[0].p4type)
        outs = [p for p in params[1:] if p.direction is ast.Direction.OUT]
        if len(outs) != len(params) - 1:
            raise unsupported(apply, f"{decl.name}.apply parameters other than the value and out results")
        # A struct cell (Tofino's paired registers, {lo, hi}) is one field per member.
        cell = list(value_type.fields) if isinstance(value_type, t.Struct) else [("", value_type)]
        fields = [(f"value_{n}" if n else "value", strip_type(ft)) for n, ft in cell]
        fields += [(f"rv{k}", strip_type(p.p4type)) for k, p in enumerate(outs, start=1)]
        state_name = self.ctx.unique(f"{decl.name}_state")
        state_type = t.Struct(f"{state_name}_t", None, tuple(fields))
        state = self.ctx.add_header(state_name, state_type, True)
        value = state.member("value") if not isinstance(value_type, t.Struct) else StructRef(
            value_type, {n: state.member(f"value_{n}") for n, _ in cell})
        results = [state.member(f"rv{k}") for k in range(1, len(outs) + 1)]
        entry: dict = {"name": name, "id": len(self.stateful.register_actions),
                       "type": _base_kind(decl), "register": register}
        info = self.ctx.source_info(decl)
        if info is not None:
            entry["source_info"] = info
        entry["state"] = state_name
        entry["value"] = _field_names(value)
        entry["results"] = [_field_names(r)[0] for r in results]
        this = InstanceRef(decl, name, instance_type_name(decl))
        entry["primitives"] = self.alu_body(apply, value, results, this, env)
        for extra in ("overflow", "underflow"):
            if extra in bodies:
                entry[extra] = self.alu_body(bodies[extra], value, results, this, env)
        return entry

    def alu_body(self, fn: ast.FunctionDeclaration, value: Any, results: list[Any], this: InstanceRef,
                 env: Env) -> list[dict]:
        """One abstract method implementation as primitives: its inout parameter is the cell,
        its out parameters the results in order (an omitted @optional one binds nothing)."""
        body_env = Env(parent=env, prefix=env.prefix)
        body_env.bind(ast.ThisExpression, this)
        outs = [p for p in fn.params if p.direction is ast.Direction.OUT]
        if len(outs) > len(results):
            raise unsupported(fn, f"{fn.name} with more results than apply")
        for p in fn.params:
            if p.direction is ast.Direction.INOUT:
                body_env.bind(p, value)
        for p, result in zip(outs, results, strict=False):
            body_env.bind(p, result)
        sl = StatementLowering(self.ctx, self.externs)
        self.externs.in_register_action = True
        try:
            return sl.lower_statements(fn.body.components, body_env)
        finally:
            self.externs.in_register_action = False

    def bind_direct_registers(self, decl: ast.ControlDeclaration, env: Env) -> None:
        """A table's `registers = r` binds DirectRegister `r` to it, `filters = f` an Lpf or
        Wred (a direct one is indexed by the entry the table hit)."""
        instances = {i["name"]: i for i in self.stateful.extern_instances}
        for local in decl.locals:
            if not isinstance(local, ast.TableDeclaration):
                continue
            table = annotation_name(local) or f"{env.prefix}.{local.name}"
            for prop_name, known, what in (("registers", self.stateful.direct_registers, "a DirectRegister"),
                                           ("filters", instances, "an Lpf or Wred")):
                prop = local.property(prop_name)
                if prop is None:
                    continue
                ref = env.lookup(getattr(prop.value, "ref", None))
                entry = known.get(getattr(ref, "name", ""))
                if entry is None:
                    raise unsupported(prop, f"a {prop_name} property that does not name {what}")
                entry["binding"] = table


def annotation_name(decl: Any) -> str | None:
    """A declaration's `@name`, without a leading dot."""
    name = annotation_string(getattr(decl, "annotations", []), "name")
    return name.lstrip(".") if name else None


def _base_kind(decl: ast.Instantiation) -> str:
    """RegisterAction, DirectRegisterAction or MinMaxAction (numbered forms included)."""
    return instance_type_name(decl).rstrip("234")


def _field_names(binding: Any) -> list[list[str]]:
    """`[header, field]` of every leaf of a bound value."""
    if isinstance(binding, FieldRef):
        return [[binding.header, binding.field]]
    if isinstance(binding, StructRef):
        out: list[list[str]] = []
        for value in binding.fields.values():
            out += _field_names(value)
        return out
    if isinstance(binding, HeaderRef):
        return [[binding.name, f] for f, _ in binding.p4type.fields]
    return []


def referenced(decls: list[Any]) -> set[int]:
    """Ids of every declaration the given blocks name, through the sub-parsers and
    sub-controls they instantiate."""
    seen: set[int] = set()
    stack: list[Any] = list(decls)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, ast.Node):
            continue
        for key, value in vars(node).items():
            if key in ("type", "const_value", "p4type"):
                continue
            if key == "ref" or (key == "call" and isinstance(value, ast.CallInfo)):
                target = value.target if isinstance(value, ast.CallInfo) else value
                if isinstance(target, ast.Node) and id(target) not in seen:
                    seen.add(id(target))
                    if isinstance(target, ast.ParserDeclaration | ast.ControlDeclaration | ast.Instantiation):
                        stack.append(target)
                continue
            if isinstance(value, ast.Node | list):
                stack.append(value)
    return seen


def _flatten(statements: list[Any]) -> list[Any]:
    """Top-level statements with plain blocks opened."""
    out: list[Any] = []
    for s in statements:
        if isinstance(s, ast.BlockStatement):
            out += _flatten(s.components)
        elif not isinstance(s, ast.EmptyStatement):
            out.append(s)
    return out


def _is_package(decl: ast.Instantiation) -> bool:
    p4type = decl.p4type
    base = p4type.base if isinstance(p4type, t.Specialized) else p4type
    return isinstance(base, t.PackageType)
