"""Extern instances: register, counter, meter arrays (direct ones too), action profiles,
and sub-parser/sub-control instances (formats.md §1.11)."""

from __future__ import annotations

from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from .context import (
    Context,
    annotation_int,
    annotation_string,
    is_signed,
    strip_type,
    unsupported,
)
from .externs import enum_member, instance_type_name
from .model import CpCounter, CpMeter, CpRegister
from .storage import ConstRef, Env, InstanceRef
from .user_externs import UserExterns, user_extern

COUNTER_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}
METER_UNITS = {"packets": "PACKETS", "bytes": "BYTES"}


def cp_name(decl: Any, env: Env) -> str:
    """Control-plane name: `@name` (global when it starts with `.`) or prefix.name."""
    name = annotation_string(getattr(decl, "annotations", []), "name") or decl.name
    if name.startswith("."):
        return name[1:]
    return f"{env.prefix}.{name}" if env.prefix else name


def constructor_args(decl: ast.Instantiation) -> list[ast.Expression]:
    """The constructor argument expressions of an instantiation."""
    return [a.value for a in decl.args]


def constructor_bindings(
    target: ast.ParserDeclaration | ast.ControlDeclaration, args: list[ast.Argument], env: Env, prefix: str
) -> tuple[tuple[Any, Any], ...]:
    """What each constructor parameter of a parser or control instance is bound to.

    Constants become `ConstRef`s; parser/control constructor calls (`I(Swap())`) become
    instances named `prefix.param`, inlined where the parameter is applied; a name
    passes on whatever it is bound to in `env`.
    """
    params = target.constructor_params
    named = {a.name: a.value for a in args if a.name is not None}
    pairs = []
    for index, param in enumerate(params):
        value = named.get(param.name) if named else (args[index].value if index < len(args) else None)
        if value is None:
            continue
        pairs.append((param, _constructor_binding(param, value, env, f"{prefix}.{param.name}")))
    return tuple(pairs)


def _constructor_binding(param: ast.Parameter, value: ast.Expression, env: Env, name: str) -> Any:
    """The binding of one constructor argument."""
    if value.const_value is not None:
        return ConstRef(value.const_value, param.p4type or value.type)
    call = getattr(value, "call", None)
    if isinstance(value, ast.MethodCallExpression) and call is not None and isinstance(
        call.target, ast.ParserDeclaration | ast.ControlDeclaration
    ):
        inner = constructor_bindings(call.target, value.args, env, name)
        return InstanceRef(value, name, call.target, inner)
    if isinstance(value, ast.PathExpression):
        bound = env.lookup(value.ref)
        if bound is not None:
            return bound
    raise unsupported(value, "this constructor argument")


def int_arg(e: ast.Expression) -> int:
    """A constant integer constructor argument."""
    value = e.const_value
    if not isinstance(value, int) or isinstance(value, bool):
        raise CompileError(e.pos, "a compile-time constant is required here")
    return value


class Stateful:
    """Creates the JSON arrays and control-plane entries of extern instances."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.direct_counters: dict[str, dict] = {}
        self.direct_meters: dict[str, dict] = {}
        self.direct_decls: dict[str, ast.Instantiation] = {}
        self.profiles: dict[str, dict] = {}
        # Extern instances made so far, by declaration and control-plane name.
        self.made: dict[tuple[int, str], InstanceRef] = {}
        self.user = UserExterns(ctx)

    def instantiate(self, decl: ast.Instantiation, env: Env) -> InstanceRef:
        """Create whatever `decl` instantiates and bind it in `env`."""
        kind = instance_type_name(decl)
        target = getattr(decl.type_node, "ref", None)
        if isinstance(decl.type_node, ast.SpecializedTypeNode):
            target = getattr(decl.type_node.base, "ref", None)
        if isinstance(target, ast.ParserDeclaration | ast.ControlDeclaration):
            name = f"{env.prefix}.{decl.name}" if env.prefix else decl.name
            ref = InstanceRef(decl, name, target, constructor_bindings(target, decl.args, env, name))
            env.bind(decl, ref)
            return ref
        name = cp_name(decl, env)
        made = self.made.get((id(decl), name))
        if made is not None:
            # One control instance applied from two places (`C1() c1; C2(c1) c2; C3(c1)
            # c3;`) is inlined twice; its externs are still one instance, one state.
            env.bind(decl, made)
            return made
        handler = getattr(self, f"new_{kind}", None)
        extern = user_extern(decl)
        if extern is not None:
            self.user.instance(decl, extern, name)
        elif handler is None:
            raise unsupported(decl, f"the extern {kind}")
        else:
            handler(decl, name)
        ref = InstanceRef(decl, name, kind)
        self.made[(id(decl), name)] = ref
        env.bind(decl, ref)
        return ref

    def _info(self, entry: dict, decl: Any) -> None:
        """Add `source_info` for `decl` to `entry`."""
        info = self.ctx.source_info(decl)
        if info is not None:
            entry["source_info"] = info

    def new_register(self, decl: ast.Instantiation, name: str) -> None:
        """`register<T>(size)`."""
        args = constructor_args(decl)
        elem = self.element_type(decl)
        size = int_arg(args[0])
        if size == 0:
            raise CompileError(decl.pos, "direct registers (size 0) are not supported by BMv2")
        if not isinstance(elem, t.Bits):
            # p4c-bm2-ss rejects these too: a BMv2 register array holds one bit string per cell.
            raise CompileError(
                decl.pos,
                f"{name}: registers with types other than bit<> or int<> are not supported by BMv2 "
                f"(this one holds {elem})",
            )
        entry: dict = {"name": name, "id": self.ctx.next_id("register_arrays")}
        self._info(entry, decl)
        entry["size"] = size
        entry["bitwidth"] = elem.width
        self.ctx.register_arrays.append(entry)
        self.ctx.cp.registers.append(
            CpRegister(
                name, elem.width, size, is_signed(elem), annotation_int(decl.annotations, "id")
            )
        )

    def element_type(self, decl: ast.Instantiation) -> t.P4Type:
        """The element type T of `extern<T>` instances."""
        p4type = decl.p4type
        if isinstance(p4type, t.Specialized) and p4type.args:
            return strip_type(p4type.args[0])
        node = decl.type_node
        if isinstance(node, ast.SpecializedTypeNode) and node.args:
            return strip_type(node.args[0].resolved)
        raise CompileError(decl.pos, f"{decl.name}: missing element type")

    def new_counter(self, decl: ast.Instantiation, name: str) -> None:
        """`counter(size, type)`."""
        args = constructor_args(decl)
        size = int_arg(args[0])
        entry: dict = {"name": name, "id": self.ctx.next_id("counter_arrays")}
        self._info(entry, decl)
        entry["size"] = size
        entry["is_direct"] = False
        self.ctx.counter_arrays.append(entry)
        unit = COUNTER_UNITS[enum_member(args[1])]
        self.ctx.cp.counters.append(
            CpCounter(name, unit, size, None, annotation_int(decl.annotations, "id"))
        )

    def new_direct_counter(self, decl: ast.Instantiation, name: str) -> None:
        """`direct_counter(type)`: bound to its table later."""
        args = constructor_args(decl)
        entry: dict = {
            "name": name,
            "id": self.ctx.next_id("counter_arrays"),
            "is_direct": True,
            "binding": None,
        }
        self._info(entry, decl)
        self.ctx.counter_arrays.append(entry)
        self.direct_counters[name] = entry
        self.direct_decls[name] = decl
        unit = COUNTER_UNITS[enum_member(args[0])]
        self.ctx.cp.direct_counters.append(
            CpCounter(name, unit, 0, None, annotation_int(decl.annotations, "id"))
        )

    def new_meter(self, decl: ast.Instantiation, name: str) -> None:
        """`meter(size, type)`."""
        args = constructor_args(decl)
        size = int_arg(args[0])
        unit = enum_member(args[1])
        entry: dict = {"name": name, "id": self.ctx.next_id("meter_arrays")}
        self._info(entry, decl)
        entry.update({"is_direct": False, "size": size, "rate_count": 2, "type": unit})
        self.ctx.meter_arrays.append(entry)
        self.ctx.cp.meters.append(
            CpMeter(name, METER_UNITS[unit], size, None, annotation_int(decl.annotations, "id"))
        )

    def new_direct_meter(self, decl: ast.Instantiation, name: str) -> None:
        """`direct_meter<T>(type)`: size and binding come from its table."""
        args = constructor_args(decl)
        unit = enum_member(args[0])
        entry: dict = {"name": name, "id": self.ctx.next_id("meter_arrays")}
        self._info(entry, decl)
        entry.update(
            {
                "is_direct": True,
                "rate_count": 2,
                "type": unit,
                "size": 0,
                "binding": None,
                "result_target": None,
            }
        )
        self.ctx.meter_arrays.append(entry)
        self.direct_meters[name] = entry
        self.direct_decls[name] = decl
        self.ctx.cp.direct_meters.append(
            CpMeter(name, METER_UNITS[unit], 0, None, annotation_int(decl.annotations, "id"))
        )

    def drop_unused_direct(self) -> None:
        """Direct counters and meters no table uses: a warning, and nothing in the outputs.

        p4c-bm2-ss does the same ("not used; ignoring"): without a table such an
        instance has nothing to count, and P4Info has no table to attach it to.
        """
        for kind, found, arrays, cp_list in (
            ("counter", self.direct_counters, self.ctx.counter_arrays, self.ctx.cp.direct_counters),
            ("meter", self.direct_meters, self.ctx.meter_arrays, self.ctx.cp.direct_meters),
        ):
            unused = {name for name, entry in found.items() if entry["binding"] is None}
            if not unused:
                continue
            for name in sorted(unused):
                self.ctx.warn(self.direct_decls[name].pos, f"direct {kind} {name} is not used by any table; ignoring it")
                del found[name]
            arrays[:] = [a for a in arrays if a["name"] not in unused]
            cp_list[:] = [c for c in cp_list if c.name not in unused]
            for number, array in enumerate(arrays):
                array["id"] = number

    def new_action_profile(self, decl: ast.Instantiation, name: str) -> None:
        """`action_profile(size)`: emitted in the pipeline of the table using it."""
        args = constructor_args(decl)
        self.profiles[name] = {"decl": decl, "size": int_arg(args[0]), "selector": None}

    def new_action_selector(self, decl: ast.Instantiation, name: str) -> None:
        """`action_selector(algo, size, output_width)`."""
        args = constructor_args(decl)
        self.profiles[name] = {
            "decl": decl,
            "size": int_arg(args[1]),
            "selector": enum_member(args[0]),
        }
