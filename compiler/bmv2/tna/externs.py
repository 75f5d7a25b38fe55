"""TNA/T2NA extern calls as primitives (README "TNA JSON", section Primitives).

Standard BMv2 primitives where Tofino's extern means the same thing (`count`,
`execute_meter`, `register_read`/`register_write`, `modify_field_with_hash_based_offset`,
`modify_field_rng_uniform`); otherwise BMv2's extern-method form: op `_<Type>_<method>`
with the instance `{"type": "extern", "value": name}` first, then the arguments, and
for a value-returning method the destination field(s) last.
"""

from __future__ import annotations

from typing import Any

from ... import ast
from ... import types as t
from ..context import field_width, strip_type
from ..expressions import expr_op, primitive_arg, to_bool, to_data
from ..externs import Externs, instance_type_name
from ..hexstr import hexstr
from ..model import CpDigest, CpParam
from ..storage import Env, FieldRef, HeaderRef, InstanceRef, StructRef, header_leaves
from ..tables import key_text
from . import misplaced, unsupported

# Extern methods lowered to `_<Type>_<method>` primitives, by where they may run.
PARSER_METHODS = {
    "Checksum": ("add", "subtract", "verify", "get", "subtract_all_and_deposit"),
    "ParserCounter": ("set", "increment", "decrement", "is_zero", "is_negative", "push", "pop"),
    "ParserPriority": ("set",),
}
DEPARSER_METHODS = {
    "Checksum": ("update",),
    "Mirror": ("emit",),
    "Resubmit": ("emit",),
    "Digest": ("pack",),
    "Pktgen": ("emit",),
}
CONTROL_METHODS = {
    "Lpf": ("execute",),
    "DirectLpf": ("execute",),
    "Wred": ("execute",),
    "DirectWred": ("execute",),
    "RegisterParam": ("read",),
    "MathUnit": ("execute",),
}
# The widest port-metadata slot (Tofino 2's); program.py checks a program against its
# target's and sets how far each port_metadata_unpack moves (`phase0_advances`).
PORT_METADATA_MAX_BITS = 192

REGISTER_ACTIONS = ("RegisterAction", "DirectRegisterAction", "MinMaxAction") + tuple(
    f"{kind}{n}" for kind in ("RegisterAction", "DirectRegisterAction", "MinMaxAction") for n in (2, 3, 4)
)
REGISTER_ACTION_METHODS = ("execute", "execute_log", "enqueue", "dequeue", "push", "pop")
# What an apply body may ask of its own stateful ALU through `this`.
ALU_HELPERS = ("predicate", "address", "min8", "max8", "min16", "max16")


def extern_operand(inst: InstanceRef) -> dict:
    """The `{"type": "extern"}` operand naming an extern instance."""
    return {"type": "extern", "value": inst.name}


def is_packet_out(call: ast.CallInfo) -> bool:
    """Whether a method call is on a `packet_out` (a deparser's `pkt.emit`)."""
    receiver_type = getattr(call.receiver, "type", None)
    return getattr(strip_type(receiver_type), "name", "") == "packet_out" if receiver_type else False


def symmetric_pairs(decl: Any, data: ast.Expression) -> list[list[int]]:
    """`@symmetric("a", "b")` on a Hash: the positions of a and b among the data's inputs."""
    items = data.components if isinstance(data, ast.ListExpression) else [data]
    texts = [key_text(item) for item in items]
    pairs = []
    for ann in getattr(decl, "annotations", []):
        if ann.name != "symmetric":
            continue
        names = [tok.text[1:-1] for tok in ann.body or [] if tok.text.startswith('"')]
        if len(names) != 2 or not all(n in texts for n in names):
            raise unsupported(ann, "@symmetric naming other than two inputs of the hash's get()")
        pairs.append([texts.index(names[0]), texts.index(names[1])])
    return pairs


class TnaExterns(Externs):
    """Lowers the calls of TNA's externs; `where` is parser, control or deparser."""

    def __init__(self, ctx: Any, calcs: Any, lists: Any, stateful: Any) -> None:
        super().__init__(ctx, calcs, lists)
        self.stateful = stateful
        self.where = "control"
        self.in_register_action = False
        self.direct_colours: dict[str, FieldRef] = {}

    # ---------------------------------------------------------------- dispatch

    def call(self, sl: Any, e: ast.MethodCallExpression, env: Env, node: Any) -> None:
        """A call statement."""
        call = e.call
        name = getattr(call.target, "name", "")
        if call.kind == ast.CallKind.EXTERN_METHOD and is_packet_out(call):
            raise misplaced(node, "emit() inside a condition or a nested block of a TNA deparser: "
                                  "Tofino's deparser emits every valid header it lists, unconditionally")
        if call.kind == ast.CallKind.EXTERN_METHOD and call.receiver is not None and not (
            sl.in_parser and name in ("extract", "advance", "lookahead")
        ):
            inst = sl.exprs.resolve(call.receiver, env)
            if isinstance(inst, InstanceRef):
                self.tna_method(sl, inst, name, call, env, node, None)
                return
        if call.kind == ast.CallKind.EXTERN_FUNCTION and name in ("invalidate",):
            target = sl.exprs.resolve(call.args[0], env)
            if not isinstance(target, FieldRef):
                raise unsupported(node, "invalidate() of this value")
            sl.emit("_invalidate", [primitive_arg(target.operand())], node)
            return
        super().call(sl, e, env, node)

    def value_call(self, sl: Any, e: ast.MethodCallExpression, env: Env, result: Any, node: Any) -> None:
        """A value-returning call whose value lands in binding `result`."""
        call = e.call
        name = getattr(call.target, "name", "")
        if call.kind == ast.CallKind.EXTERN_FUNCTION:
            handler = getattr(self, f"value_{name}", None)
            if handler is None:
                raise unsupported(node, f"the value of {name}()")
            handler(sl, call, env, result, node)
            return
        if name == "lookahead" and sl.in_parser:
            super().value_call(sl, e, env, result, node)
            return
        inst = sl.exprs.resolve(call.receiver, env) if call.receiver is not None else None
        if not isinstance(inst, InstanceRef):
            raise unsupported(node, f"the value of {name}()")
        self.tna_method(sl, inst, name, call, env, node, result)

    # ---------------------------------------------------------------- helpers

    def dest(self, result: Any, node: Any) -> dict:
        """The destination operand of a value-returning extern call."""
        if not isinstance(result, FieldRef):
            raise unsupported(node, "this destination of an extern's value")
        return primitive_arg(result.operand())

    def flatten(self, sl: Any, e: ast.Expression, env: Env) -> list[tuple[dict, int]]:
        """Fields and constants of a data list; other values (slices, arithmetic, casts) are
        computed into a temporary first, as a Tofino hash or deparser list takes them."""
        if isinstance(e, ast.SliceExpression | ast.BinaryExpression | ast.UnaryExpression | ast.CastExpression) \
                and e.const_value is None:
            p4type = strip_type(e.type)
            temp = self.ctx.temporary(p4type)
            sl.store(temp, to_data(sl.exprs.value(e, env)), e)
            return [(temp.operand(), field_width(p4type))]
        if isinstance(e, ast.ListExpression):
            out: list[tuple[dict, int]] = []
            for item in e.components:
                out += self.flatten(sl, item, env)
            return out
        return super().flatten(sl, e, env)

    def data_args(self, sl: Any, data: ast.Expression, env: Env) -> list[dict]:
        """A data list or header as primitive arguments: each field (or constant) in order."""
        return [primitive_arg(item) for item, _ in self.flatten(sl, data, env)]

    def given(self, args: list[Any]) -> list[Any]:
        """Arguments actually passed (an omitted @optional parameter binds None)."""
        return [a for a in args if a is not None]

    def require(self, node: Any, kind: str, name: str, table: dict[str, tuple[str, ...]], where: str) -> None:
        """Refuse a method called outside the block kind that runs it on Tofino."""
        if name in table.get(kind, ()):
            return
        homes = [block for block, methods in (("parser", PARSER_METHODS), ("deparser", DEPARSER_METHODS),
                                              ("control", CONTROL_METHODS)) if name in methods.get(kind, ())]
        if not homes:
            raise unsupported(node, f"{kind}.{name}()")
        raise misplaced(node, f"{kind}.{name}() cannot be called in a TNA {where}, only in a {' or '.join(homes)}")

    # ---------------------------------------------------------------- methods

    def tna_method(
        self, sl: Any, inst: InstanceRef, name: str, call: ast.CallInfo, env: Env, node: Any, result: Any
    ) -> None:
        """One method call on a TNA extern instance (`result`: where its value goes, or None)."""
        kind = inst.p4type if isinstance(inst.p4type, str) else instance_type_name(inst.decl)
        args = self.given(call.args)
        if kind in REGISTER_ACTIONS:
            self.register_action_call(sl, inst, kind, name, call, env, node, result)
            return
        if kind == "Register":
            self.register_method(sl, inst, name, call.args, env, node, result)
            return
        if kind in ("Counter", "DirectCounter"):
            if kind == "DirectCounter":
                return  # counted on every hit of its table, as BMv2's direct counters
            params = [{"type": "counter_array", "value": inst.name}, self.arg(sl, call.args[0], env)]
            if len(call.args) > 1 and call.args[1] is not None:
                params.append(self.arg(sl, call.args[1], env))
            sl.emit("count", params, node)
            return
        if kind in ("Meter", "DirectMeter"):
            self.meter_call(sl, inst, kind, call, env, node, result)
            return
        if kind == "Hash" and name == "get":
            self.hash_get(sl, inst, call, env, node, result)
            return
        if kind == "Random" and name == "get":
            width = field_width(strip_type(result.p4type)) if isinstance(result, FieldRef) else 0
            params = [self.dest(result, node), primitive_arg(to_data({"type": "hexstr", "value": "0x0"})),
                      {"type": "hexstr", "value": hexstr((1 << width) - 1, width)}]
            sl.emit("modify_field_rng_uniform", params, node)
            return
        where = "parser" if sl.in_parser else self.where
        table = {"parser": PARSER_METHODS, "deparser": DEPARSER_METHODS, "control": CONTROL_METHODS}[where]
        self.require(node, kind, name, table, where)
        if kind == "Digest":
            self.digest_pack(sl, inst, call, env, node)
            return
        params = [extern_operand(inst)]
        if name == "subtract_all_and_deposit":
            sl.emit(f"_{kind}_{name}", [*params, self.lvalue(sl, call.args[0], env)], node)
            return
        if kind in ("Mirror",) and args:
            params.append(self.arg(sl, call.args[0], env))
            if len(args) > 1:
                params += self.data_args(sl, call.args[1], env)
        elif kind in ("Resubmit", "Pktgen", "Checksum") and name in ("emit", "add", "subtract", "update"):
            if args:
                params += self.data_args(sl, args[0], env)
            if kind == "Checksum" and name == "update":
                zeros_as_ones = call.args[1] if len(call.args) > 1 else None
                flag = 1 if zeros_as_ones is not None and zeros_as_ones.const_value else 0
                params.insert(1, {"type": "hexstr", "value": hexstr(flag)})
        else:
            params += [self.arg(sl, a, env) for a in args]
        if result is not None:
            if isinstance(result, StructRef | HeaderRef):
                raise unsupported(node, f"a composite result of {kind}.{name}()")
            params.append(self.dest(result, node))
        sl.emit(f"_{kind}_{name}", params, node)

    def register_method(
        self, sl: Any, inst: InstanceRef, name: str, args: list, env: Env, node: Any, result: Any
    ) -> None:
        """`Register.read(i)` / `write(i, v)` outside a RegisterAction (one-shot ALU uses)."""
        if name == "read":
            if result is None:
                return
            sl.emit("register_read", [self.dest(result, node), {"type": "register_array", "value": inst.name},
                                      self.arg(sl, args[0], env)], node)
            return
        if name == "write":
            sl.emit("register_write", [{"type": "register_array", "value": inst.name},
                                       self.arg(sl, args[0], env), self.arg(sl, args[1], env)], node)
            return
        raise unsupported(node, f"Register.{name}()")

    def register_action_call(
        self, sl: Any, inst: InstanceRef, kind: str, name: str, call: ast.CallInfo, env: Env, node: Any,
        result: Any,
    ) -> None:
        """`ra.execute(i)` and friends: the whole apply body runs atomically on one cell."""
        if name in ALU_HELPERS:
            self.alu_helper(sl, inst, name, call, env, node, result)
            return
        if name not in REGISTER_ACTION_METHODS:
            raise unsupported(node, f"{kind}.{name}() outside its apply body")
        if self.in_register_action:
            raise misplaced(node, f"{kind}.{name}() inside a RegisterAction's apply: the stateful ALU "
                                  "runs one register action per packet and register")
        params = [extern_operand(inst)]
        args = list(call.args)
        params_decl = list(call.params)
        index_given = False
        for param, arg in zip(params_decl, args, strict=False):
            if param.direction is ast.Direction.IN and param.name in ("index",):
                if arg is not None:
                    params.append(self.arg(sl, arg, env))
                    index_given = True
        if name == "execute" and not index_given and not kind.startswith("Direct"):
            params.append({"type": "hexstr", "value": "0x0"})
        outs = [self.dest(result, node) if result is not None else {"type": "hexstr", "value": "0x0"}]
        for param, arg in zip(params_decl, args, strict=False):
            if param.direction is ast.Direction.OUT:
                outs.append(self.lvalue(sl, arg, env) if arg is not None else {"type": "hexstr", "value": "0x0"})
        while len(outs) > 1 and outs[-1] == {"type": "hexstr", "value": "0x0"}:
            outs.pop()
        if result is None and len(outs) == 1:
            outs = []
        self.stateful.register_action_used(inst.name, name, node)
        family = "DirectRegisterAction" if kind.startswith("Direct") else "RegisterAction"
        sl.emit(f"_{family}_{name}", params + outs, node)

    def alu_helper(
        self, sl: Any, inst: InstanceRef, name: str, call: ast.CallInfo, env: Env, node: Any, result: Any
    ) -> None:
        """`this.predicate(...)`, `this.address()`, `this.min8(...)`...: values the stateful ALU
        computes inside an apply body (their operands: README "TNA JSON", Primitives)."""
        if not self.in_register_action:
            raise misplaced(node, f"{name}() can only be called on `this` inside a RegisterAction's apply")
        params = [extern_operand(inst)]
        named = {p.name: a for p, a in zip(call.params, call.args, strict=False)}
        if name == "predicate":
            conds = [a for p, a in zip(call.params, call.args, strict=False) if p.direction is ast.Direction.IN]
            for cond in conds:
                value = to_bool(sl.exprs.value(cond, env)) if cond is not None else None
                params.append(primitive_arg(expr_op("b2d", None, value)) if value is not None
                              else {"type": "hexstr", "value": "0x0"})
        elif name == "address":
            subword = named.get("subword")
            params.append(self.arg(sl, subword, env) if subword is not None else {"type": "hexstr", "value": "0x0"})
        else:
            if named.get("postmod") is not None:
                raise unsupported(node, f"{name}() with a postmod")
            params += [self.arg(sl, named["val"], env), self.arg(sl, named["mask"], env)]
        temp = result if result is not None else self.ctx.temporary(t.Bits(16))
        params.append(self.dest(temp, node))
        index = named.get("index")
        if index is not None:
            params.append(self.lvalue(sl, index, env))
        sl.emit(f"_RegisterAction_{name}", params, node)

    def meter_call(
        self, sl: Any, inst: InstanceRef, kind: str, call: ast.CallInfo, env: Env, node: Any, result: Any
    ) -> None:
        """`Meter.execute(i[, color][, adjust])`; a DirectMeter's colour goes where its table says."""
        args = call.args
        params = call.params
        named = {p.name: a for p, a in zip(params, args, strict=False) if a is not None}
        if kind == "DirectMeter":
            # The engine meters on the table hit, before the action runs (BMv2's direct
            # meter), into one colour field per meter; each execute() reads that field.
            colour = self.direct_colours.get(inst.name)
            if colour is None:
                colour = self.ctx.scalar(f"{inst.name.split('.')[-1]}_color",
                                         t.Bits(8), metadata=True)
                self.direct_colours[inst.name] = colour
                self.direct_meter_targets[inst.name] = [colour.header, colour.field]
            if result is not None:
                sl.store(result, colour.operand(), node)
            return
        out = self.dest(result, node) if result is not None else None
        if out is None:
            temp = self.ctx.temporary(t.Bits(8))
            out = primitive_arg(temp.operand())
        ps = [{"type": "meter_array", "value": inst.name}, self.arg(sl, named["index"], env), out]
        if "color" in named:
            ps.append(self.arg(sl, named["color"], env))
        if "adjust_byte_count" in named:
            if "color" not in named:
                ps.append({"type": "hexstr", "value": "0x0"})
            ps.append(self.arg(sl, named["adjust_byte_count"], env))
        sl.emit("execute_meter", ps, node)

    def hash_get(self, sl: Any, inst: InstanceRef, call: ast.CallInfo, env: Env, node: Any, result: Any) -> None:
        """`h.get(data)`: a calculation over the data with the instance's algorithm, cut to W bits."""
        if not isinstance(result, FieldRef):
            raise unsupported(node, "Hash.get() whose value is not stored in a field")
        width = self.stateful.hash_width(inst.name)
        inputs = self.flatten(sl, call.args[0], env)
        calc = self.calcs.add(self.stateful.hash_algorithm(inst.name), inputs, node)
        self.stateful.attach_polynomial(calc, inst.name)
        pairs = symmetric_pairs(inst.decl, call.args[0])
        if pairs:
            next(c for c in self.ctx.calculations if c["name"] == calc)["symmetric"] = pairs
        params = [
            self.dest(result, node),
            {"type": "hexstr", "value": "0x0"},
            {"type": "calculation", "value": calc},
            {"type": "hexstr", "value": hexstr(1 << width, width + 1)},
        ]
        sl.emit("modify_field_with_hash_based_offset", params, node)

    def digest_pack(self, sl: Any, inst: InstanceRef, call: ast.CallInfo, env: Env, node: Any) -> None:
        """`Digest.pack(data)`: a learn list named after the instance, sent with its fields."""
        data = call.args[0]
        data_type = strip_type(data.type)
        elements = [item for item, _ in self.flatten(sl, data, env)]
        list_id = self.lists.learn_list(inst.name, elements, node)
        if not any(d.name == inst.name for d in self.ctx.cp.digests):
            fields = []
            if isinstance(data_type, t.StructLike):
                fields = [CpParam(n, field_width(strip_type(ft))) for n, ft in data_type.fields]
            type_name = getattr(data_type, "name", None) or inst.name
            self.ctx.cp.digests.append(CpDigest(inst.name, type_name, fields))
        sl.emit("_Digest_pack", [extern_operand(inst), {"type": "hexstr", "value": hexstr(list_id)}], node)

    # ---------------------------------------------------------------- extern functions with values

    def value_max(self, sl: Any, call: ast.CallInfo, env: Env, result: Any, node: Any) -> None:
        """`max(a, b)`."""
        self._min_max(sl, call, env, result, node, ">")

    def value_min(self, sl: Any, call: ast.CallInfo, env: Env, result: Any, node: Any) -> None:
        """`min(a, b)`."""
        self._min_max(sl, call, env, result, node, "<")

    def _min_max(self, sl: Any, call: ast.CallInfo, env: Env, result: Any, node: Any, op: str) -> None:
        a = to_data(sl.exprs.value(call.args[0], env))
        b = to_data(sl.exprs.value(call.args[1], env))
        sl.store(result, expr_op("?", a, b, expr_op(op, a, b)), node)

    def value_port_metadata_unpack(self, sl: Any, call: ast.CallInfo, env: Env, result: Any, node: Any) -> None:
        """`port_metadata_unpack<T>(pkt)`: the port-metadata slot's first bits into T's fields."""
        if not sl.in_parser:
            raise misplaced(node, "port_metadata_unpack() can only be called in the ingress parser")
        fields = self.flatten_binding(result, node) if not isinstance(result, FieldRef) else \
            [(result.operand(), field_width(strip_type(result.p4type)))]
        bits = sum(width for _, width in fields)
        if bits > PORT_METADATA_MAX_BITS:
            raise unsupported(node, f"port metadata wider than {PORT_METADATA_MAX_BITS} bits")
        # T's width for now; program.py sets how far the parser moves (phase0_advances).
        sl.emit("_port_metadata_unpack",
                [{"type": "hexstr", "value": hexstr(bits, 32)},
                 *(primitive_arg(f) for f, _ in fields)], node)

    def value_sizeInBytes(self, sl: Any, call: ast.CallInfo, env: Env, result: Any, node: Any) -> None:
        """`sizeInBytes(h)`: a header's size (its fixed width) as a value."""
        self._size(sl, call, result, node, 8)

    def value_sizeInBits(self, sl: Any, call: ast.CallInfo, env: Env, result: Any, node: Any) -> None:
        """`sizeInBits(h)`."""
        self._size(sl, call, result, node, 1)

    def _size(self, sl: Any, call: ast.CallInfo, result: Any, node: Any, unit: int) -> None:
        data_type = strip_type(call.args[0].type)
        bits = t.bit_width(data_type)
        if isinstance(data_type, t.Header) and any(
            isinstance(strip_type(ft), t.Varbit) for _, ft, _ in header_leaves(data_type)
        ):
            raise unsupported(node, "the size of a header with a varbit field")
        sl.store(result, {"type": "hexstr", "value": hexstr(bits // unit, 32)}, node)
