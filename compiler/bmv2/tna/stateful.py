"""TNA extern instances: register, counter and meter arrays, RegisterActions, hashes and
the instances BMv2 lists under `extern_instances` (README "TNA JSON")."""

from __future__ import annotations

from typing import Any

from ... import ast
from ... import types as t
from ...diagnostics import CompileError
from ..context import annotation_int, field_width, is_signed, strip_type
from ..externs import enum_member, instance_type_name
from ..hexstr import hexstr
from ..model import CpCounter, CpMeter, CpRegister
from ..stateful import Stateful, int_arg
from ..storage import Env, InstanceRef
from . import unsupported

COUNTER_UNITS = {"PACKETS": "PACKETS", "BYTES": "BYTES", "PACKETS_AND_BYTES": "BOTH"}
METER_UNITS = {"PACKETS": "packets", "BYTES": "bytes"}
CP_METER_UNITS = {"packets": "PACKETS", "bytes": "BYTES"}

# Tofino's meter colours (MeterColor_t), which differ from BMv2's (red is 3, not 2).
METER_COLORS = {"GREEN": 0, "YELLOW": 1, "RED": 3}

# The predefined hash algorithms as CRC parameter sets (width, polynomial, reflected,
# initial value, final xor), so that an engine computes every one with one routine.
CRC_ALGORITHMS = {
    "CRC8": (8, 0x07, False, 0x00, 0x00),
    "CRC16": (16, 0x8005, True, 0x0000, 0x0000),
    "CRC32": (32, 0x04C11DB7, True, 0xFFFFFFFF, 0xFFFFFFFF),
    "CRC64": (64, 0x42F0E1EBA9EA3693, False, 0, 0),
}
OTHER_ALGORITHMS = {"IDENTITY": "identity", "RANDOM": "random", "XOR8": "xor8", "XOR16": "xor16",
                    "XOR32": "xor32"}

# The `calculations` algorithms of TNA JSON: every CRC is "crc" with its parameters.
CALCULATION_ALGORITHMS = {name: name for name in ("crc", *OTHER_ALGORITHMS.values())}

# Instances with nothing to lower: they describe a table's implementation.
TABLE_IMPLEMENTATIONS = ("Atcam", "Alpm", "IdleTimeout")


def constructor_args(decl: ast.Instantiation) -> list[ast.Expression]:
    """Constructor arguments in parameter order (`Register<T, I>(size=..., initial_value=...)`
    may name them, in any order)."""
    if not any(a.name is not None for a in decl.args):
        return [a.value for a in decl.args]
    named = {a.name: a.value for a in decl.args}
    node = decl.type_node.base if isinstance(decl.type_node, ast.SpecializedTypeNode) else decl.type_node
    extern = getattr(node, "ref", None)
    for ctor in (m for m in getattr(extern, "methods", []) if m.is_constructor):
        names = [p.name for p in ctor.params]
        if set(named) <= set(names):
            return [named[n] for n in names if n in named]
    return list(named.values())


def attribute(name: str, kind: str, value: Any) -> dict:
    """One BMv2 `attribute_values` entry."""
    return {"name": name, "type": kind, "value": value}


def int_attribute(name: str, value: int, width: int = 32) -> dict:
    """An integer attribute as a hexstr."""
    return attribute(name, "hexstr", hexstr(value, width))


class TnaStateful(Stateful):
    """Creates the JSON of TNA extern instances; RegisterAction bodies are lowered by the
    gress lowering (`register_actions`), which this hands them to."""

    def __init__(self, ctx: Any, arch: Any, lower_register_action: Any) -> None:
        super().__init__(ctx)
        self.arch = arch
        self.lower_register_action = lower_register_action
        self.extern_instances: list[dict] = []
        self.register_actions: list[dict] = []
        self.hashes: dict[str, dict] = {}
        self.polynomials: dict[str, dict] = {}
        self.registers: dict[str, dict] = {}
        self.direct_registers: dict[str, dict] = {}
        self.algorithmic: set[str] = set()
        self.env: Env | None = None

    def instantiate(self, decl: ast.Instantiation, env: Env) -> InstanceRef:
        """Create `decl`'s instance (handlers see the environment through `self.env`)."""
        kind = instance_type_name(decl)
        target = getattr(decl.type_node, "ref", None)
        family = self.arch.extern_family(kind)
        if not isinstance(target, ast.ParserDeclaration | ast.ControlDeclaration) and (
                family in (None, "unsupported") or not hasattr(self, f"new_{kind}")):
            raise unsupported(decl, f"the extern {kind}")
        saved, self.env = self.env, env
        try:
            return super().instantiate(decl, env)
        finally:
            self.env = saved

    def _instance(self, decl: ast.Instantiation, name: str, kind: str, attributes: list[dict]) -> dict:
        """Append an `extern_instances` entry."""
        entry: dict = {"name": name, "id": len(self.extern_instances), "type": kind,
                       "attribute_values": attributes}
        self._info(entry, decl)
        self.extern_instances.append(entry)
        return entry

    # ---------------------------------------------------------------- registers

    def register_cell(self, decl: ast.Instantiation) -> tuple[t.P4Type, int, list[dict]]:
        """A register's cell type, its width, and its layout (fields of a struct cell)."""
        elem = self.element_type(decl)
        if isinstance(elem, t.Bits):
            return elem, elem.width, []
        if isinstance(elem, t.Struct) and all(isinstance(strip_type(ft), t.Bits) for _, ft in elem.fields):
            layout = [{"name": n, "bitwidth": field_width(strip_type(ft))} for n, ft in elem.fields]
            return elem, sum(f["bitwidth"] for f in layout), layout
        raise CompileError(decl.pos, f"{decl.name}: a Register holds bit<W>, int<W> or a struct of "
                                     f"them, not {elem}")

    def new_Register(self, decl: ast.Instantiation, name: str) -> None:
        """`Register<T, I>(size[, initial_value])`."""
        args = constructor_args(decl)
        elem, width, layout = self.register_cell(decl)
        size = int_arg(args[0])
        entry: dict = {"name": name, "id": self.ctx.next_id("register_arrays")}
        self._info(entry, decl)
        entry["size"] = size
        entry["bitwidth"] = width
        if layout:
            entry["layout"] = layout
        if len(args) > 1:
            entry["initial_value"] = self.initial(args[1], elem, width, decl)
        self.ctx.register_arrays.append(entry)
        self.registers[name] = entry
        self.ctx.cp.registers.append(
            CpRegister(name, width, size, is_signed(elem), annotation_int(decl.annotations, "id"))
        )

    def new_DirectRegister(self, decl: ast.Instantiation, name: str) -> None:
        """`DirectRegister<T>([initial_value])`: one cell per entry of the table naming it."""
        args = constructor_args(decl)
        elem, width, layout = self.register_cell(decl)
        entry: dict = {"name": name, "id": self.ctx.next_id("register_arrays")}
        self._info(entry, decl)
        entry.update({"size": 0, "bitwidth": width, "is_direct": True, "binding": None})
        if layout:
            entry["layout"] = layout
        if args:
            entry["initial_value"] = self.initial(args[0], elem, width, decl)
        self.ctx.register_arrays.append(entry)
        self.registers[name] = entry
        self.direct_registers[name] = entry

    def initial(self, e: ast.Expression, elem: t.P4Type, width: int, decl: Any) -> str:
        """A register's initial value as one hexstr (a struct cell's fields concatenated)."""
        if isinstance(elem, t.Struct):
            items = e.components if isinstance(e, ast.ListExpression) else \
                [f.value for f in e.fields] if isinstance(e, ast.StructExpression) else None
            if items is None:
                raise CompileError(e.pos, f"{decl.name}: give the initial value as {{...}}")
            value = 0
            for item, (_, ft) in zip(items, elem.fields, strict=True):
                w = field_width(strip_type(ft))
                value = (value << w) | (int_arg(item) & ((1 << w) - 1))
            return hexstr(value, width)
        return hexstr(int_arg(e) & ((1 << width) - 1), width)

    def new_RegisterParam(self, decl: ast.Instantiation, name: str) -> None:
        """`RegisterParam<T>(initial)`: a control-plane-set value RegisterActions read."""
        elem = self.element_type(decl)
        width = field_width(elem)
        self._instance(decl, name, "RegisterParam", [
            int_attribute("bitwidth", width), int_attribute("initial_value", int_arg(constructor_args(decl)[0]), width)])

    def new_RegisterAction(self, decl: ast.Instantiation, name: str) -> None:
        """Any RegisterAction/DirectRegisterAction/MinMaxAction: its apply body as primitives."""
        target = constructor_args(decl)[0] if decl.args else None
        reg = self.env.lookup(getattr(target, "ref", None)) if target is not None and self.env else None
        if not isinstance(reg, InstanceRef) or reg.name not in self.registers:
            raise CompileError(getattr(target, "pos", decl.pos),
                               f"{decl.name}: the argument must be a Register declared before it")
        if decl.initializer is None or not any(
            isinstance(d, ast.FunctionDeclaration) and d.name == "apply" for d in decl.initializer
        ):
            raise CompileError(decl.pos, f"{decl.name}: a {instance_type_name(decl)} needs an apply "
                                         "implementation: = {{ void apply(inout T value, ...) {{ ... }} }};")
        self.register_actions.append(self.lower_register_action(decl, name, reg.name, self.env))

    def register_action_used(self, name: str, method: str, node: Any) -> None:
        """Record which methods call a RegisterAction (an engine checks FIFO/stack uses)."""
        for entry in self.register_actions:
            if entry["name"] == name:
                methods = entry.setdefault("methods", [])
                if method not in methods:
                    methods.append(method)
                return

    def new_MathUnit(self, decl: ast.Instantiation, name: str) -> None:
        """`MathUnit<T>(...)`: its constructor arguments as attributes."""
        attrs = []
        for index, arg in enumerate(decl.args):
            value = arg.value.const_value
            if isinstance(value, t.EnumValue):
                attrs.append(attribute(f"arg{index}", "string", value.member))
            elif isinstance(value, bool):
                attrs.append(int_attribute(f"arg{index}", int(value), 1))
            elif isinstance(value, int):
                attrs.append(attribute(f"arg{index}", "hexstr", hex(value) if value >= 0 else str(value)))
            else:
                raise unsupported(arg, "this MathUnit argument")
        self._instance(decl, name, "MathUnit", attrs)

    # ---------------------------------------------------------------- counters and meters

    def new_Counter(self, decl: ast.Instantiation, name: str) -> None:
        """`Counter<W, I>(size, type)`."""
        args = constructor_args(decl)
        size = int_arg(args[0])
        entry: dict = {"name": name, "id": self.ctx.next_id("counter_arrays")}
        self._info(entry, decl)
        entry.update({"size": size, "is_direct": False})
        self.egress_accounting(entry, args, 2)
        self.ctx.counter_arrays.append(entry)
        self.ctx.cp.counters.append(CpCounter(name, COUNTER_UNITS[enum_member(args[1])], size, None,
                                              annotation_int(decl.annotations, "id")))

    def new_DirectCounter(self, decl: ast.Instantiation, name: str) -> None:
        """`DirectCounter<W>(type)`: bound to the table whose `counters` names it."""
        args = constructor_args(decl)
        entry: dict = {"name": name, "id": self.ctx.next_id("counter_arrays"), "is_direct": True,
                       "binding": None}
        self._info(entry, decl)
        self.egress_accounting(entry, args, 1)
        self.ctx.counter_arrays.append(entry)
        self.direct_counters[name] = entry
        self.direct_decls[name] = decl
        self.ctx.cp.direct_counters.append(CpCounter(name, COUNTER_UNITS[enum_member(args[0])], 0, None,
                                                     annotation_int(decl.annotations, "id")))

    @staticmethod
    def egress_accounting(entry: dict, args: list[ast.Expression], position: int) -> None:
        """Tofino 2's `true_egress_accounting`: count the bytes the egress deparser sends."""
        flag = args[position].const_value if len(args) > position else None
        if flag is True:
            entry["true_egress_accounting"] = True

    def meter_colors(self, args: list[ast.Expression], first: int) -> dict:
        """The colour values a meter writes (Tofino's, or the constructor's red/yellow/green)."""
        if len(args) >= first + 3 and all(isinstance(a.const_value, int) for a in args[first:first + 3]):
            red, yellow, green = (int_arg(a) for a in args[first:first + 3])
            return {"green": green, "yellow": yellow, "red": red}
        return {k.lower(): v for k, v in METER_COLORS.items()}

    def new_Meter(self, decl: ast.Instantiation, name: str) -> None:
        """`Meter<I>(size, type[, red, yellow, green])`."""
        args = constructor_args(decl)
        size = int_arg(args[0])
        unit = METER_UNITS[enum_member(args[1])]
        entry: dict = {"name": name, "id": self.ctx.next_id("meter_arrays")}
        self._info(entry, decl)
        entry.update({"is_direct": False, "size": size, "rate_count": 2, "type": unit,
                      "color_values": self.meter_colors(args, 2)})
        self.egress_accounting(entry, args, len(args) - 1)
        self.ctx.meter_arrays.append(entry)
        self.ctx.cp.meters.append(CpMeter(name, CP_METER_UNITS[unit], size, None,
                                          annotation_int(decl.annotations, "id")))

    def new_DirectMeter(self, decl: ast.Instantiation, name: str) -> None:
        """`DirectMeter(type[, red, yellow, green])`: bound to its table's `meters`."""
        args = constructor_args(decl)
        unit = METER_UNITS[enum_member(args[0])]
        entry: dict = {"name": name, "id": self.ctx.next_id("meter_arrays")}
        self._info(entry, decl)
        entry.update({"is_direct": True, "rate_count": 2, "type": unit, "size": 0, "binding": None,
                      "result_target": None, "color_values": self.meter_colors(args, 1)})
        self.egress_accounting(entry, args, len(args) - 1)
        self.ctx.meter_arrays.append(entry)
        self.direct_meters[name] = entry
        self.direct_decls[name] = decl
        self.ctx.cp.direct_meters.append(CpMeter(name, CP_METER_UNITS[unit], 0, None,
                                                 annotation_int(decl.annotations, "id")))

    def new_Lpf(self, decl: ast.Instantiation, name: str) -> None:
        """`Lpf<T, I>(size)`: time constants and mode are control-plane settings per cell."""
        self._instance(decl, name, "Lpf", [int_attribute("size", int_arg(constructor_args(decl)[0])),
                                           int_attribute("bitwidth", field_width(self.element_type(decl)))])

    def new_DirectLpf(self, decl: ast.Instantiation, name: str) -> None:
        """`DirectLpf<T>()`."""
        self._instance(decl, name, "DirectLpf", [int_attribute("bitwidth", field_width(self.element_type(decl)))])

    def new_Wred(self, decl: ast.Instantiation, name: str) -> None:
        """`Wred<T, I>(size, drop_value, no_drop_value)`."""
        args = constructor_args(decl)
        self._instance(decl, name, "Wred", [
            int_attribute("size", int_arg(args[0])), int_attribute("drop_value", int_arg(args[1]), 8),
            int_attribute("no_drop_value", int_arg(args[2]), 8),
            int_attribute("bitwidth", field_width(self.element_type(decl)))])

    def new_DirectWred(self, decl: ast.Instantiation, name: str) -> None:
        """`DirectWred<T>(drop_value, no_drop_value)`."""
        args = constructor_args(decl)
        self._instance(decl, name, "DirectWred", [
            int_attribute("drop_value", int_arg(args[0]), 8), int_attribute("no_drop_value", int_arg(args[1]), 8),
            int_attribute("bitwidth", field_width(self.element_type(decl)))])

    # ---------------------------------------------------------------- hashing

    def new_CRCPolynomial(self, decl: ast.Instantiation, name: str) -> None:
        """`CRCPolynomial<T>(coeff, reversed, msb, extended, init, xor)`."""
        args = constructor_args(decl)
        width = field_width(self.element_type(decl))
        coeff, reversed_, msb, extended, init, xor = (a.const_value for a in args)
        self.polynomials[name] = {"width": width, "coeff": hexstr(int(coeff), width), "reversed": bool(reversed_),
                                  "msb": bool(msb), "extended": bool(extended), "init": hexstr(int(init), width),
                                  "xor": hexstr(int(xor), width)}

    def new_Hash(self, decl: ast.Instantiation, name: str) -> None:
        """`Hash<W>(algo[, poly])`: the calculation is made where `get` is called."""
        args = constructor_args(decl)
        algo = enum_member(args[0])
        width = field_width(self.element_type(decl))
        poly = None
        if len(args) > 1:
            ref = self.env.lookup(getattr(args[1], "ref", None)) if self.env else None
            if not isinstance(ref, InstanceRef) or ref.name not in self.polynomials:
                raise CompileError(args[1].pos, f"{decl.name}: the polynomial must be a CRCPolynomial instance")
            poly = self.polynomials[ref.name]
        elif algo == "CUSTOM":
            raise CompileError(decl.pos, f"{decl.name}: HashAlgorithm_t.CUSTOM needs a CRCPolynomial argument")
        self.hashes[name] = {"algo": algo, "width": width, "polynomial": poly}

    def hash_width(self, name: str) -> int:
        """Width W of a `Hash<W>` instance."""
        return self.hashes[name]["width"]

    def hash_algorithm(self, name: str) -> str:
        """The `calculations` algorithm name of a Hash instance."""
        spec = self.hashes[name]
        if spec["polynomial"] is not None or spec["algo"] in CRC_ALGORITHMS:
            return "crc"
        return OTHER_ALGORITHMS[spec["algo"]]

    def attach_polynomial(self, calc: str, name: str) -> None:
        """Give a CRC calculation its parameters (predefined ones spelled out)."""
        spec = self.hashes[name]
        poly = self.crc_parameters(name)
        for entry in self.ctx.calculations:
            if entry["name"] == calc:
                entry["output_width"] = spec["width"]
                entry["tofino_algorithm"] = spec["algo"]
                if poly is not None:
                    entry["polynomial"] = poly

    def crc_parameters(self, name: str) -> dict | None:
        """The CRC parameters of a Hash instance (None for identity, xor and random)."""
        spec = self.hashes[name]
        poly = spec["polynomial"]
        if poly is None and spec["algo"] in CRC_ALGORITHMS:
            width, coeff, reflected, init, xor = CRC_ALGORITHMS[spec["algo"]]
            poly = {"width": width, "coeff": hexstr(coeff, width), "reversed": reflected, "msb": False,
                    "extended": False, "init": hexstr(init, width), "xor": hexstr(xor, width)}
        return poly

    def new_Random(self, decl: ast.Instantiation, name: str) -> None:
        """`Random<W>()`: no state; `get` is BMv2's uniform random primitive."""
        self._instance(decl, name, "Random", [int_attribute("bitwidth", field_width(self.element_type(decl)))])

    # ---------------------------------------------------------------- parser and deparser externs

    def new_Checksum(self, decl: ast.Instantiation, name: str) -> None:
        """`Checksum()`: ones'-complement 16-bit sum, one accumulator per packet."""
        self._instance(decl, name, "Checksum", [])

    def new_ParserCounter(self, decl: ast.Instantiation, name: str) -> None:
        """`ParserCounter()`: an 8-bit signed counter (with a 4-deep stack on Tofino 2)."""
        self._instance(decl, name, "ParserCounter", [])

    def new_ParserPriority(self, decl: ast.Instantiation, name: str) -> None:
        """`ParserPriority()`."""
        self._instance(decl, name, "ParserPriority", [])

    def _typed(self, decl: ast.Instantiation, name: str, kind: str, field: str) -> None:
        """Mirror/Resubmit/Digest: the deparser metadata value that selects the instance."""
        attrs = []
        if decl.args:
            attrs.append(int_attribute(field, int_arg(constructor_args(decl)[0]), 8))
        self._instance(decl, name, kind, attrs)

    def new_Mirror(self, decl: ast.Instantiation, name: str) -> None:
        """`Mirror([mirror_type])`."""
        self._typed(decl, name, "Mirror", "mirror_type")

    def new_Resubmit(self, decl: ast.Instantiation, name: str) -> None:
        """`Resubmit([resubmit_type])`."""
        self._typed(decl, name, "Resubmit", "resubmit_type")

    def new_Digest(self, decl: ast.Instantiation, name: str) -> None:
        """`Digest<T>([digest_type])`."""
        self._typed(decl, name, "Digest", "digest_type")

    def new_Pktgen(self, decl: ast.Instantiation, name: str) -> None:
        """`Pktgen()` (Tofino 2)."""
        self._instance(decl, name, "Pktgen", [])

    # ---------------------------------------------------------------- table implementations

    def new_ActionProfile(self, decl: ast.Instantiation, name: str) -> None:
        """`ActionProfile(size)`."""
        self.profiles[name] = {"decl": decl, "size": int_arg(constructor_args(decl)[0]), "selector": None}

    def new_ActionSelector(self, decl: ast.Instantiation, name: str) -> None:
        """`ActionSelector(profile, hash, mode, [reg,] max_group_size, num_groups)` (or the
        deprecated `(size, hash, mode[, reg])`): a selector over its profile's members."""
        args = constructor_args(decl)
        first = args[0]
        profile = self.env.lookup(getattr(first, "ref", None)) if self.env else None
        if isinstance(profile, InstanceRef) and profile.name in self.profiles:
            size = self.profiles[profile.name]["size"]
        else:
            size = int_arg(first)
        hash_ref = self.env.lookup(getattr(args[1], "ref", None)) if self.env else None
        if not isinstance(hash_ref, InstanceRef) or hash_ref.name not in self.hashes:
            raise CompileError(args[1].pos, f"{decl.name}: the selector's hash must be a Hash instance")
        algo = self.hash_algorithm(hash_ref.name)
        counts = [int_arg(a) for a in args[3:] if isinstance(a.const_value, int)
                  and not isinstance(a.const_value, bool)]
        self.profiles[name] = {"decl": decl, "size": size, "selector": algo, "hash": hash_ref.name,
                               "mode": enum_member(args[2]), "counts": counts}

    def selector_details(self, name: str) -> dict:
        """What a TNA selector adds to BMv2's: its hash's CRC parameters and output width,
        the mode (FAIR or RESILIENT), and max_group_size/num_groups when given."""
        profile = self.profiles[name]
        spec = self.hashes[profile["hash"]]
        details: dict = {"output_width": spec["width"], "mode": profile["mode"]}
        poly = self.crc_parameters(profile["hash"])
        if poly is not None:
            details["polynomial"] = poly
        if len(profile["counts"]) == 2:
            details["max_group_size"], details["num_groups"] = profile["counts"]
        return details

    def new_Atcam(self, decl: ast.Instantiation, name: str) -> None:
        """`Atcam(...)`: the table runs as a ternary table."""
        self.algorithmic.add(name)

    def new_Alpm(self, decl: ast.Instantiation, name: str) -> None:
        """`Alpm(...)`: the table runs as an LPM table."""
        self.algorithmic.add(name)

    def new_IdleTimeout(self, decl: ast.Instantiation, name: str) -> None:
        """`IdleTimeout()` (Tofino 2): entry ageing, as `idle_timeout = true`."""
        self.algorithmic.add(name)


# Every stateful-ALU action type lowers alike: its apply body becomes a register action.
for _kind in ("DirectRegisterAction", "MinMaxAction"):
    setattr(TnaStateful, f"new_{_kind}", TnaStateful.new_RegisterAction)
for _n in (2, 3, 4):
    for _kind in ("RegisterAction", "DirectRegisterAction", "MinMaxAction"):
        setattr(TnaStateful, f"new_{_kind}{_n}", TnaStateful.new_RegisterAction)
