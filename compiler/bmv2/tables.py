"""A user table's BMv2 JSON object and P4Info entry: keys, actions, default action,
const entries, direct counters and meters, action profiles and selectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .context import (
    annotation_int,
    annotation_string,
    annotation_text,
    field_width,
    strip_type,
    unsupported,
)
from .hexstr import hexstr
from .model import CpActionProfile, CpActionRef, CpEntry, CpParam, CpTable
from .stateful import int_arg
from .storage import Env, FieldRef, HeaderRef, InstanceRef

if TYPE_CHECKING:
    from .pipelines import ControlLowering

DEFAULT_TABLE_SIZE = 1024


def cp_action_args(decl: ast.ActionDeclaration, args: list[int]) -> list[tuple[int, int, int]]:
    """An action call's data arguments as P4Runtime sees them: (parameter id, value, width)."""
    data_params = [p for p in decl.params if p.direction == ast.Direction.NONE]
    out = []
    for position, (param, value) in enumerate(zip(data_params, args, strict=False), start=1):
        ptype = strip_type(param.p4type or param.type_node.resolved)
        width = 1 if isinstance(ptype, t.Bool) else field_width(ptype)
        out.append((annotation_int(param.annotations, "id") or position, value, width))
    return out


def constant_int(e: ast.Expression, error: str) -> int:
    """A compile-time constant as an integer (enum members by their value, booleans as 0/1);
    a located `error` if `e` is not one."""
    value = e.const_value
    if isinstance(value, t.EnumValue):
        value = value.value
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int):
        raise CompileError(e.pos, error)
    return value


@dataclass(frozen=True)
class TableRef:
    """A table declaration bound in the environment of the control instance declaring it."""

    decl: ast.TableDeclaration
    name: str
    env: Env


def key_text(e: ast.Expression) -> str:
    """p4c's default key name: the key expression as written (`hdr.ipv4.dstAddr`)."""
    if isinstance(e, ast.PathExpression):
        return e.name
    if isinstance(e, ast.MemberExpression):
        return f"{key_text(e.expr)}.{e.member}"
    if isinstance(e, ast.IndexExpression):
        return f"{key_text(e.expr)}[{key_text(e.index)}]"
    if isinstance(e, ast.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, ast.SliceExpression):
        return f"{key_text(e.expr)}[{key_text(e.hi)}:{key_text(e.lo)}]"
    if isinstance(e, ast.BinaryExpression):
        return f"{key_text(e.left)} {e.op} {key_text(e.right)}"
    if isinstance(e, ast.MethodCallExpression):
        callee = key_text(e.callee)
        if callee.endswith(".isValid"):
            return callee[: -len(".isValid")] + ".$valid$"
        return callee + "()"
    return "key"


class TableBuilder:
    """One user table: JSON object and P4Info entry."""

    def __init__(self, control: ControlLowering, tref: TableRef) -> None:
        self.control = control
        self.ctx = control.ctx
        self.tref = tref
        self.decl = tref.decl
        self.env = tref.env
        self.exprs = control.exprs
        self.key_overrides: dict[int, FieldRef] = {}
        self.cp_entries: list[CpEntry] = []

    def computed_keys(self) -> list[tuple[FieldRef, ast.Expression]]:
        """Key expressions BMv2 cannot match directly, each given a `key_N` scalar to compute."""
        prop = self.prop("key")
        pairs: list[tuple[FieldRef, ast.Expression]] = []
        for element in prop.elements if prop is not None else []:
            try:
                self.key_target(element.expr)
            except CompileError:
                p4type = element.expr.type
                if not isinstance(strip_type(p4type), t.Bits | t.Bool):
                    raise
                temp = self.ctx.scalar(self.ctx.unique_scalar("key"), p4type)
                self.key_overrides[id(element.expr)] = temp
                pairs.append((temp, element.expr))
        return pairs

    def prop(self, name: str) -> Any:
        """A table property or None."""
        return self.decl.property(name)

    def value_prop(self, name: str) -> ast.Expression | None:
        """The expression of a `name = value` property, or None."""
        p = self.prop(name)
        return p.value if isinstance(p, ast.ValueProperty) else None

    def build(self) -> dict:
        """The table JSON (also records the table in the control-plane model)."""
        name = self.tref.name
        keys, cp_keys, selector_inputs, key_widths = self.keys()
        kinds = {k["match_type"] for k in keys}
        lpm_count = sum(1 for k in keys if k["match_type"] == "lpm")
        if lpm_count > 1:
            raise CompileError(self.decl.pos, f"table {name} has more than one lpm key")
        match_type = "range" if "range" in kinds else "ternary" if "ternary" in kinds else \
            "lpm" if "lpm" in kinds else "exact"
        action_names, action_ids, cp_refs = self.action_list()
        default_name, default_id, default_args, default_const, cp_default = self.default_action(
            action_names, action_ids, cp_refs)
        entries = self.entries(key_widths)
        size_expr = self.value_prop("size")
        size = int_arg(size_expr) if size_expr is not None else None
        max_size = size if size is not None else len(entries) if entries else DEFAULT_TABLE_SIZE
        implementation = self.implementation(selector_inputs)
        counters = self.value_prop("counters")
        meters = self.value_prop("meters")
        timeout = next((self.value_prop(n) for n in self.ctx.timeout_properties if self.value_prop(n) is not None),
                       None)
        support_timeout = bool(timeout.const_value) if timeout is not None else False
        direct_resources: list[tuple[str, str]] = []
        if counters is not None:
            counter = self.direct_instance(counters, self.control.stateful.direct_counters, "counters")
            counter["binding"] = name
            direct_resources.append(("counter", counter["name"]))
            for cp_counter in self.ctx.cp.direct_counters:
                if cp_counter.name == counter["name"]:
                    cp_counter.table = name
        meter_name = None
        if meters is not None:
            meter = self.direct_instance(meters, self.control.stateful.direct_meters, "meters")
            meter["binding"] = name
            meter["size"] = max_size
            meter["result_target"] = self.control.externs.direct_meter_targets.get(meter["name"])
            meter_name = meter["name"]
            direct_resources.append(("meter", meter_name))
            for cp_meter in self.ctx.cp.direct_meters:
                if cp_meter.name == meter_name:
                    cp_meter.table = name
                    cp_meter.size = max_size
        table: dict = {"name": name, "id": self.ctx.next_id("tables")}
        info = self.ctx.source_info(self.decl)
        if info is not None:
            table["source_info"] = info
        table["key"] = keys
        table["match_type"] = match_type
        if implementation is None:
            table["type"] = "simple"
        else:
            table["type"] = "indirect_ws" if implementation["selector"] is not None else "indirect"
            table["action_profile"] = implementation["name"]
        table.update(
            {
                "max_size": max_size,
                "with_counters": counters is not None,
                "support_timeout": support_timeout,
                "direct_meters": meter_name,
                "action_ids": action_ids,
                "actions": action_names,
                "base_default_next": None,
                "next_tables": {a: None for a in action_names},
            }
        )
        if implementation is None:
            table["default_entry"] = {
                "action_id": default_id,
                "action_const": default_const,
                "action_data": [hexstr(v) for v in default_args],
                "action_entry_const": default_const,
            }
        elif self.prop("default_action") is not None:
            self.ctx.warn(self.decl.pos, f"{name}: default_action of an indirect table is ignored by BMv2")
        if entries:
            table["entries"] = entries
        entries_prop = self.prop("entries")
        pos = self.decl.pos
        self.ctx.table_order[name] = (self.control.actions.control_rank, (*self.env.anchor, (pos.line, pos.column)))
        cp_tables = self.ctx.cp.tables if ast.find_annotation(self.decl.annotations, "hidden") is None else []
        cp_tables.append(
            CpTable(
                name=name,
                keys=cp_keys,
                actions=cp_refs,
                size=size if size else DEFAULT_TABLE_SIZE,
                explicit_id=annotation_int(self.decl.annotations, "id"),
                const_default=default_const,
                default_action=default_name,
                explicit_default=self.prop("default_action") is not None,
                default_args=cp_default,
                implementation=implementation["name"] if implementation else None,
                direct_resources=direct_resources,
                support_timeout=support_timeout,
                is_const=bool(entries_prop is not None and entries_prop.is_const),
                has_initial_entries=bool(entries),
                entries=self.cp_entries,
            )
        )
        if any(kind in ("ternary", "range", "optional") for kind, _ in key_widths):
            for rank, cp_entry in enumerate(self.cp_entries):
                if not cp_entry.priority:
                    cp_entry.priority = len(self.cp_entries) - rank
        if implementation is not None:
            for profile in self.ctx.cp.action_profiles:
                if profile.name == implementation["name"]:
                    profile.tables.append(name)
        return table

    def keys(self) -> tuple[list[dict], list[CpParam], list[dict], list[tuple[str, int]]]:
        """JSON keys, P4Info match fields, selector inputs and (kind, width) per key."""
        keys: list[dict] = []
        cp_keys: list[CpParam] = []
        selector_inputs: list[dict] = []
        widths: list[tuple[str, int]] = []
        prop = self.prop("key")
        for element in (prop.elements if prop is not None else []):
            kind = self.ctx.match_kinds.get(element.match_kind.name, element.match_kind.name)
            name = annotation_string(element.annotations, "name") or key_text(element.expr)
            target, mask, width = self.key_target(element.expr)
            cp_keys.append(CpParam(name, width, annotation_int(element.annotations, "id"), kind))
            if kind == "selector":
                selector_inputs.append({"type": "field", "value": target})
                continue
            if kind not in ("exact", "lpm", "ternary", "range", "optional"):
                raise CompileError(element.pos, f"match kind {kind} is not supported by BMv2")
            keys.append({"match_type": "ternary" if kind == "optional" else kind, "name": name,
                         "target": target, "mask": mask})
            widths.append((kind, width))
        return keys, cp_keys, selector_inputs, widths

    def key_target(self, e: ast.Expression) -> tuple[list[str], str | None, int]:
        """`[header, field]`, mask and width of one key expression.

        A slice from bit 0, `f[7:0]`, is its field with a mask, as p4c writes it. BMv2
        matches a masked key in place (`f & mask` against the entry's value, not shifted),
        so a slice above bit 0 would match only entries written in the field's position:
        such a slice, and anything else that is not a field (`f & 0xff00` too), is a
        computed key whose value is the slice itself, as the control plane gives it.
        """
        override = self.key_overrides.get(id(e))
        if override is not None:
            ftype = strip_type(override.p4type)
            return [override.header, override.field], None, 1 if isinstance(ftype, t.Bool) else field_width(ftype)
        if isinstance(e, ast.SliceExpression):
            target, _, width = self.key_target(e.expr)
            hi = self.exprs.constant_int(e.hi)
            lo = self.exprs.constant_int(e.lo)
            if lo:
                raise unsupported(e, "a table key on a slice above bit 0 as a masked field")
            mask = (1 << (hi + 1)) - 1
            return target, hexstr(mask, width), hi - lo + 1
        if isinstance(e, ast.MethodCallExpression) and e.call is not None and e.call.builtin == "isValid":
            header = self.exprs.resolve(e.call.receiver, self.env)
            if isinstance(header, HeaderRef):
                return [header.name, "$valid$"], None, 1
        binding = self.exprs.resolve(e, self.env)
        if isinstance(binding, FieldRef):
            ftype = strip_type(binding.p4type)
            width = 1 if isinstance(ftype, t.Bool) else field_width(ftype)
            return [binding.header, binding.field], None, width
        raise unsupported(e, "this table key expression (BMv2 keys must be fields)")

    def action_list(self) -> tuple[list[str], list[int], list[CpActionRef]]:
        """Names, ids and P4Info refs of the table's actions (NoAction added as p4c does)."""
        names: list[str] = []
        ids: list[int] = []
        refs: list[CpActionRef] = []
        prop = self.prop("actions")
        for ref in (prop.actions if prop is not None else []):
            decl = ref.ref if ref.ref is not None else getattr(ref.expr, "ref", None)
            if not isinstance(decl, ast.ActionDeclaration):
                raise CompileError(ref.pos, "table actions must name actions")
            name, action_id = self.get_action(decl, ref)
            names.append(name)
            ids.append(action_id)
            annotations = [annotation_text(a) for a in ref.annotations]
            scope = "DEFAULT_ONLY" if "@defaultonly" in annotations else \
                "TABLE_ONLY" if "@tableonly" in annotations else "TABLE_AND_DEFAULT"
            refs.append(CpActionRef(name, scope, annotations))
        if self.prop("default_action") is None and "NoAction" not in names:
            noaction = self.ctx.noaction
            if noaction is None:
                raise CompileError(self.decl.pos, "NoAction is not declared (include core.p4)")
            name, action_id = self.control.actions.get(noaction, self.env)
            names.append(name)
            ids.append(action_id)
            refs.append(CpActionRef(name, "DEFAULT_ONLY", ["@defaultonly"]))
        return names, ids, refs

    def default_action(self, names: list[str], ids: list[int], refs: list[CpActionRef]) -> tuple:
        """(name, id, args, const, P4Info args) of the default action."""
        prop = self.prop("default_action")
        if prop is None:
            noaction = self.ctx.noaction
            name, action_id = self.control.actions.get(noaction, self.env)
            return name, action_id, [], False, []
        ref = prop.action
        decl = ref.ref if ref.ref is not None else getattr(ref.expr, "ref", None)
        if decl is None and isinstance(ref.expr, ast.MethodCallExpression):
            decl = ref.expr.call.target if ref.expr.call is not None else None
        if not isinstance(decl, ast.ActionDeclaration):
            raise CompileError(prop.pos, "default_action must name an action")
        name, action_id = self.get_action(decl, ref)
        args = self.action_args(ref)
        return name, action_id, args, bool(prop.is_const), cp_action_args(decl, args)

    @staticmethod
    def call_args(ref: ast.ActionRef) -> list[ast.Expression | None]:
        """Arguments of an action reference, one per parameter in declaration order."""
        if isinstance(ref.expr, ast.MethodCallExpression) and ref.expr.call is not None:
            return list(ref.expr.call.args)
        return [a.value for a in ref.args]

    def get_action(self, decl: ast.ActionDeclaration, ref: ast.ActionRef) -> tuple[str, int]:
        """JSON name and id of a referenced action, directional arguments bound."""
        return self.control.actions.get(decl, self.env, self.call_args(ref))

    def action_args(self, ref: ast.ActionRef) -> list[int]:
        """Constant action-data arguments of an action reference."""
        decl = ref.ref if ref.ref is not None else getattr(ref.expr, "ref", None)
        if decl is None and isinstance(ref.expr, ast.MethodCallExpression) and ref.expr.call is not None:
            decl = ref.expr.call.target
        args = self.call_args(ref)
        if isinstance(decl, ast.ActionDeclaration):
            args = [a for p, a in zip(decl.params, args, strict=False) if p.direction == ast.Direction.NONE]
        values = []
        for a in args:
            if a is None:
                continue
            values.append(constant_int(a, "action arguments here must be compile-time constants"))
        return values

    def entries(self, widths: list[tuple[str, int]]) -> list[dict]:
        """`entries` from a (const) entries property."""
        prop = self.prop("entries")
        if prop is None:
            return []
        out: list[dict] = []
        for priority, entry in enumerate(prop.entries, start=1):
            keyset = entry.keyset
            if len(keyset) == 1 and isinstance(keyset[0], ast.ListExpression) and len(widths) > 1:
                keyset = keyset[0].components
            if len(keyset) == 1 and isinstance(keyset[0], ast.DefaultExpression | ast.DontCareExpression):
                keyset = keyset * len(widths)
            if len(keyset) != len(widths):
                raise CompileError(entry.pos, f"entry has {len(keyset)} keys, table has {len(widths)}")
            match_key = [self.entry_key(k, kind, width) for k, (kind, width) in zip(keyset, widths, strict=True)]
            decl = entry.action.ref if entry.action.ref is not None else getattr(entry.action.expr, "ref", None)
            if decl is None and isinstance(entry.action.expr, ast.MethodCallExpression):
                decl = entry.action.expr.call.target if entry.action.expr.call is not None else None
            action_name, action_id = self.get_action(decl, entry.action)
            args = self.action_args(entry.action)
            cp_entry = self.cp_entry(match_key, widths, decl, action_name, args)
            self.cp_entries.append(cp_entry)
            item: dict = {}
            info = self.ctx.source_info(entry)
            if info is not None:
                item["source_info"] = info
            explicit = entry.priority.const_value if entry.priority is not None else None
            if explicit is None:
                explicit = annotation_int(entry.annotations, "priority")
            if explicit is not None:
                cp_entry.priority = int(explicit)
            item.update(
                {
                    "match_key": match_key,
                    "action_entry": {"action_id": action_id, "action_data": [hexstr(v) for v in args]},
                    "priority": int(explicit) if explicit is not None else priority,
                }
            )
            out.append(item)
        return out

    def cp_entry(self, match_key: list[dict], widths: list[tuple[str, int]], decl: ast.ActionDeclaration,
                 action: str, args: list[int]) -> CpEntry:
        """The P4Runtime view of one entry: wildcard fields omitted, values as integers."""
        matches = []
        for position, (key, (kind, width)) in enumerate(zip(match_key, widths, strict=True), start=1):
            if kind == "exact":
                matches.append((position, kind, (int(key["key"], 16),), width))
            elif kind in ("ternary", "optional"):
                mask = int(key["mask"], 16)
                if mask:
                    matches.append((position, kind, (int(key["key"], 16), mask), width))
            elif kind == "lpm":
                if key["prefix_length"]:
                    matches.append((position, kind, (int(key["key"], 16), key["prefix_length"]), width))
            elif kind == "range":
                low, high = int(key["start"], 16), int(key["end"], 16)
                if (low, high) != (0, (1 << width) - 1):
                    matches.append((position, kind, (low, high), width))
        return CpEntry(matches, action, cp_action_args(decl, args), 0)

    def entry_key(self, k: ast.Expression, kind: str, width: int) -> dict:
        """One `match_key` element of a const entry."""
        full = (1 << width) - 1
        wildcard = isinstance(k, ast.DefaultExpression | ast.DontCareExpression)

        def const(e: ast.Expression) -> int:
            return constant_int(e, "entry keys must be compile-time constants") & full

        if kind == "exact":
            if wildcard:
                raise CompileError(k.pos, "exact keys cannot be wildcards")
            if isinstance(k, ast.MaskExpression | ast.RangeExpression):
                raise CompileError(k.pos, "an exact key takes a single value, not a mask or a range")
            return {"match_type": "exact", "key": hexstr(const(k), width)}
        if kind in ("ternary", "optional"):
            if wildcard:
                value, mask = 0, 0
            elif isinstance(k, ast.MaskExpression):
                mask = const(k.mask)
                value = const(k.value) & mask
            else:
                value, mask = const(k), full
            return {"match_type": "ternary", "key": hexstr(value, width), "mask": hexstr(mask, width)}
        if kind == "lpm":
            if wildcard:
                return {"match_type": "lpm", "key": hexstr(0, width), "prefix_length": 0}
            if isinstance(k, ast.MaskExpression):
                mask = const(k.mask)
                length = bin(mask).count("1")
                return {"match_type": "lpm", "key": hexstr(const(k.value) & mask, width), "prefix_length": length}
            return {"match_type": "lpm", "key": hexstr(const(k), width), "prefix_length": width}
        if kind == "range":
            if wildcard:
                low, high = 0, full
            elif isinstance(k, ast.RangeExpression):
                low, high = const(k.low), const(k.high)
            else:
                low = high = const(k)
            return {"match_type": "range", "start": hexstr(low, width), "end": hexstr(high, width)}
        raise CompileError(k.pos, f"match kind {kind} in entries is not supported")

    def direct_instance(self, e: ast.Expression, known: dict[str, dict], what: str) -> dict:
        """The direct counter/meter array a `counters`/`meters` property names."""
        binding = self.exprs.resolve(e, self.env)
        if not isinstance(binding, InstanceRef) or binding.name not in known:
            raise CompileError(e.pos, f"{what} must name a direct_{what[:-1]} instance")
        return known[binding.name]

    def implementation(self, selector_inputs: list[dict]) -> dict | None:
        """The action profile/selector of an indirect table (emitted once per pipeline)."""
        e = self.value_prop("implementation")
        if e is None:
            if selector_inputs:
                raise CompileError(self.decl.pos, "selector keys need an action_selector implementation")
            return None
        stateful = self.control.stateful
        if isinstance(e, ast.MethodCallExpression):
            name = f"{self.tref.name}_{'selector' if 'selector' in key_text(e.callee) else 'profile'}"
            fake = ast.Instantiation(pos=e.pos, name=name, type_node=ast.NamedType(pos=e.pos, name=key_text(e.callee)),
                                     args=e.args)
            handler = stateful.new_action_selector if "selector" in key_text(e.callee) else stateful.new_action_profile
            handler(fake, name)
        else:
            binding = self.exprs.resolve(e, self.env)
            if isinstance(binding, InstanceRef) and binding.name in getattr(stateful, "algorithmic", ()):
                # TNA's Alpm/Atcam: an algorithmic layout of a direct LPM/ternary table.
                return None
            if not isinstance(binding, InstanceRef) or binding.name not in stateful.profiles:
                raise CompileError(e.pos, "implementation must be an action_profile or action_selector")
            name = binding.name
        profile = stateful.profiles[name]
        existing = next((p for p in self.control.action_profiles if p["name"] == name), None)
        if existing is None:
            existing = {"name": name, "id": self.ctx.next_id("action_profiles")}
            info = self.ctx.source_info(profile["decl"])
            if info is not None:
                existing["source_info"] = info
            existing["max_size"] = profile["size"]
            if profile["selector"] is not None:
                existing["selector"] = {"algo": profile["selector"], "input": selector_inputs}
            self.control.action_profiles.append(existing)
            self.ctx.cp.action_profiles.append(
                CpActionProfile(name, [], profile["selector"] is not None, profile["size"],
                                annotation_int(getattr(profile["decl"], "annotations", []), "id"))
            )
        return {"name": name, "selector": profile["selector"]}
