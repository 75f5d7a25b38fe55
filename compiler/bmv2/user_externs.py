"""User-declared extern objects and extern functions (`extern Tally { ... }` in the program).

p4c-bm2-ss compiles them only with `--emit-externs`, the way its default extern converter
does: each instance is an `extern_instances` entry whose `attribute_values` are the
constructor's constant arguments (`hexstr`) and strings (`string`); a method call is the
primitive `_<Type>_<method>` whose first parameter names the instance (`{"type": "extern"}`)
and whose other parameters are the call's arguments; an extern function call is a primitive
named after the function. Without the option p4c refuses them, and so does this back end.
simple_switch registers no such extern type or primitive, so it refuses the JSON at load
("Invalid reference to extern type 'Tally'", "Unknown primitive action: trace_value"), as
the bufferlab switch does: the JSON is for a BMv2 target built with the extern.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError
from ..preprocess import P4INCLUDE
from .context import Context, strip_type, unsupported
from .expressions import primitive_arg, to_data
from .hexstr import hexstr
from .storage import Env, FieldRef, HeaderRef, InstanceRef

EMIT_EXTERNS_HINT = "p4c-bm2-ss and bufferlab-p4c compile user-declared externs only with --emit-externs"


def user_extern(decl: Any) -> ast.ExternDeclaration | None:
    """The extern type an instantiation `decl` makes when the program itself declares it
    (not our declaration files, which declare the architecture's externs)."""
    node = getattr(decl, "type_node", None)
    if isinstance(node, ast.SpecializedTypeNode):
        node = node.base
    extern = getattr(node, "ref", None)
    if not isinstance(extern, ast.ExternDeclaration) or extern.pos is None:
        return None
    return None if Path(extern.pos.file).resolve().parent == P4INCLUDE else extern


def is_user_function(decl: Any) -> bool:
    """Whether extern function `decl` is declared by the program, not the architecture."""
    pos = getattr(decl, "pos", None)
    return pos is not None and Path(pos.file).resolve().parent != P4INCLUDE


def constructor_parameters(extern: ast.ExternDeclaration, args: list[ast.Argument]) -> list[ast.Parameter]:
    """The parameters of the constructor of `extern` that `args` call."""
    named = {a.name for a in args if a.name is not None}
    for method in extern.methods:
        if not method.is_constructor or len(method.params) < len(args):
            continue
        if named <= {p.name for p in method.params}:
            return method.params
    return []


class UserExterns:
    """Lowers instances and calls of externs the architecture does not define."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def refuse(self, node: Any, what: str) -> CompileError:
        """p4c's refusal without `--emit-externs`, located at `node`."""
        return CompileError(node.pos, f"unknown {what} ({EMIT_EXTERNS_HINT})")

    def instance(self, decl: ast.Instantiation, extern: ast.ExternDeclaration, name: str) -> None:
        """An `extern_instances` entry for instance `decl` of user extern type `extern`."""
        if not self.ctx.emit_externs:
            raise self.refuse(decl, f"extern instance {extern.name}")
        params = constructor_parameters(extern, decl.args)
        values = {a.name: a.value for a in decl.args if a.name is not None}
        values.update({p.name: a.value for p, a in zip(params, decl.args, strict=False) if a.name is None})
        attributes = []
        for param in params:
            value = values.get(param.name)
            if value is None:
                continue
            if isinstance(value, ast.StringLiteral):
                attributes.append({"name": param.name, "type": "string", "value": value.value})
            elif isinstance(value.const_value, int) and not isinstance(value.const_value, bool):
                attributes.append({"name": param.name, "type": "hexstr", "value": hexstr(value.const_value)})
            else:
                # p4c-bm2-ss: "parameter type not unsupported" for anything else.
                raise CompileError(value.pos, f"{extern.name}: constructor argument {param.name} must be an "
                                              "integer constant or a string for the BMv2 back end")
        self.ctx.extern_instances.append({
            "name": name,
            "id": len(self.ctx.extern_instances),
            "type": extern.name,
            "attribute_values": attributes,
        })

    def method(self, sl: Any, inst: InstanceRef, type_name: str, method: str, call: ast.CallInfo,
               env: Env, node: Any) -> None:
        """`inst.method(args)` as the primitive `_<Type>_<method>`."""
        if not self.ctx.emit_externs:
            raise self.refuse(node, f"extern method {method} from type {type_name}")
        params = [{"type": "extern", "value": inst.name}]
        params += [self.argument(sl, a, env, node) for a in call.args]
        sl.emit(f"_{type_name}_{method}", params, node)

    def function(self, sl: Any, name: str, call: ast.CallInfo, env: Env, node: Any) -> None:
        """A user extern function call as the primitive named after the function."""
        if not self.ctx.emit_externs:
            raise self.refuse(node, f"extern function {name}")
        sl.emit(name, [self.argument(sl, a, env, node) for a in call.args], node)

    def argument(self, sl: Any, arg: ast.Expression | None, env: Env, node: Any) -> dict:
        """One call argument as a primitive parameter: a header by name, a field, a constant
        or a computed value (in an `expression` wrapper)."""
        if arg is None or isinstance(arg, ast.DontCareExpression):
            raise unsupported(node, "an omitted or `_` argument of a user-declared extern")
        if isinstance(arg, ast.PathExpression | ast.MemberExpression | ast.IndexExpression) \
                and arg.const_value is None:
            binding = sl.exprs.resolve(arg, env)
            if isinstance(binding, HeaderRef) and isinstance(strip_type(arg.type), t.Header):
                return {"type": "header", "value": binding.name}
            if isinstance(binding, FieldRef):
                return binding.operand()
        if not isinstance(strip_type(arg.type), t.Bits | t.Bool | t.Error | t.Enum):
            raise unsupported(arg, "an argument of this type to a user-declared extern")
        return primitive_arg(to_data(sl.exprs.value(arg, env)))
