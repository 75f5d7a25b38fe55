"""A whole TNA/T2NA program: its pipes, each gress lowered, one document and one
control-plane model with bf-p4c's names (README "TNA JSON", "TNA P4Info")."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ... import ast
from ... import types as t
from ...arch import Architecture
from ...diagnostics import CompileError, SourcePos
from ...preprocess import P4INCLUDE
from ..context import annotation_text, strip_type
from ..hexstr import hexstr
from ..model import ControlPlane
from .gress import GressLowering

# Annotations of the language and of p4c's front end; every other annotation in the
# program (bf-p4c's @pa_*, @stage, @placement_priority, ...) is kept under "pragmas".
STANDARD_ANNOTATIONS = frozenset((
    "name", "id", "hidden", "defaultonly", "tableonly", "optional", "deprecated", "priority",
    "field_list", "pkginfo", "controller_header", "noWarn", "metadata", "alias", "atomic", "pure",
    "noSideEffects", "synchronous", "match", "brief", "description", "padding", "__intrinsic_metadata",
    "__ghost_metadata",
))


@dataclasses.dataclass
class Pipe:
    """One Pipeline instance of the Switch: its name and blocks by role."""

    name: str
    blocks: dict[str, list[tuple[Any, list]]]
    types: dict[str, Any]
    decl: Any


def _arguments(decl: Any) -> tuple[list[ast.Argument], Any]:
    """The constructor arguments and package type of a package instance or constructor call."""
    if isinstance(decl, ast.Instantiation):
        return decl.args, decl.p4type
    if isinstance(decl, ast.MethodCallExpression):
        return decl.args, decl.type
    raise CompileError(getattr(decl, "pos", None), "expected a package instance here")


def _by_param(args: list[ast.Argument], params: list[ast.Parameter]) -> dict[str, ast.Expression]:
    """Package parameter name -> argument expression (positional or named)."""
    if args and all(a.name is not None for a in args):
        return {a.name: a.value for a in args}
    return {p.name: a.value for p, a in zip(params, args, strict=False)}


def _block(value: ast.Expression) -> tuple[Any, list]:
    """The parser/control declaration an argument names, with its constructor arguments."""
    if isinstance(value, ast.MethodCallExpression) and value.call is not None:
        target = value.call.target
        if isinstance(target, ast.ParserDeclaration | ast.ControlDeclaration):
            return target, value.args
    ref = getattr(value, "ref", None)
    if isinstance(ref, ast.Instantiation):
        target = getattr(ref.type_node, "ref", None)
        if isinstance(target, ast.ParserDeclaration | ast.ControlDeclaration):
            return target, ref.args
    raise CompileError(value.pos, "expected a parser or control instance here")


def _instance(value: ast.Expression) -> Any:
    """The package instance (declared or constructed in place) an argument names."""
    ref = getattr(value, "ref", None)
    return ref if isinstance(ref, ast.Instantiation) else value


def find_pipes(checked: Any, arch: Architecture) -> list[Pipe]:
    """The Switch's pipes, in pipe order, each with its blocks and bound types."""
    main = checked.main
    package = checked.package
    if main is None:
        raise CompileError(None, "the program has no `main` package instantiation")
    if package is None or package.name not in arch.packages:
        raise CompileError(main.pos, f"main must be one of {', '.join(arch.packages)} for {arch.name}, "
                                     f"not {getattr(package, 'name', '?')}")
    pipes = []
    switch_args = _by_param(main.args, package.params)
    for param in package.params:
        value = switch_args.get(param.name)
        if value is None:
            continue
        pipe_decl = _instance(value)
        args, p4type = _arguments(pipe_decl)
        base = p4type.base if isinstance(p4type, t.Specialized) else p4type
        if base.name not in (arch.pipeline, f"MultiParser{arch.pipeline}"):
            raise CompileError(value.pos, f"{package.name}'s pipes are {arch.pipeline} packages, not {base.name}")
        bindings = p4type.bindings() if isinstance(p4type, t.Specialized) else {}
        name = pipe_decl.name if isinstance(pipe_decl, ast.Instantiation) else param.name
        blocks: dict[str, list[tuple[Any, list]]] = {}
        for role_name, arg in _by_param(args, base.decl.params).items():
            role = arch.block(role_name)
            if role is None and role_name in ("ig_prsr", "eg_prsr"):
                # MultiParserPipeline: a package of up to 18 parsers for the gress.
                inner_args, inner_type = _arguments(_instance(arg))
                inner_base = inner_type.base if isinstance(inner_type, t.Specialized) else inner_type
                gress = "ingress" if role_name == "ig_prsr" else "egress"
                for _, parser_arg in _by_param(inner_args, inner_base.decl.params).items():
                    blocks.setdefault(f"{gress}:parser", []).append(_block(parser_arg))
                continue
            if role is None:
                raise CompileError(arg.pos, f"{base.name} has no block {role_name}")
            kind = role.kind
            blocks.setdefault(f"{role.gress}:{kind}", []).append(_block(arg))
        pipes.append(Pipe(name, blocks, bindings, pipe_decl))
    names = [p.name for p in pipes]
    for pipe in pipes:
        if names.count(pipe.name) > 1:
            raise CompileError(main.pos, f"pipe {pipe.name} is given more than once: each pipe of a "
                                         "Switch needs its own Pipeline instance")
    return pipes


def _gress_blocks(pipe: Pipe, gress: str) -> dict[str, list[tuple[Any, list]]]:
    """The blocks of one gress of a pipe, keyed by kind."""
    return {key.split(":")[1]: value for key, value in pipe.blocks.items() if key.startswith(gress + ":")}


def lower_tna(checked: Any, program_path: str, arch: Architecture, target: str) -> tuple[dict, ControlPlane, list]:
    """Lower a checked TNA/T2NA program: (JSON document, control-plane model, warnings)."""
    pipes = find_pipes(checked, arch)
    warnings: list = []
    pipe_docs = []
    merged = ControlPlane()
    for pipe_id, pipe in enumerate(pipes):
        doc: dict = {"name": pipe.name, "id": pipe_id}
        for gress, h, m in (("ingress", "IH", "IM"), ("egress", "EH", "EM")):
            blocks = _gress_blocks(pipe, gress)
            if not blocks:
                continue
            hdr_type = strip_type(pipe.types.get(h))
            meta_type = strip_type(pipe.types.get(m))
            lowering = GressLowering(checked, program_path, arch, gress, blocks, hdr_type, meta_type)
            gress_doc, cp = lowering.lower()
            warnings += lowering.ctx.warnings
            doc[gress] = gress_doc
            merge_control_plane(merged, cp, pipe.name)
        pipe_docs.append(doc)
    merged.pkg_info = pkg_info(checked, arch)
    info = arch.target_info[target]
    for doc in pipe_docs:
        if "ingress" in doc:
            phase0_advances(doc["ingress"], info.port_metadata_bits)
    document = {
        "program": program_path,
        "__meta__": {"version": [2, 23], "compiler": "bufferlab-p4c", "arch": arch.name},
        "arch": arch.name,
        "target": target,
        "target_info": info.as_json(),
        "pipes": pipe_docs,
        "pragmas": pragmas(checked, arch),
    }
    return document, merged, _unique_warnings(warnings)


def phase0_advances(gress: dict, slot_bits: int) -> None:
    """How far each `port_metadata_unpack` moves the parser, as bf-p4c's phase-0 state
    does: the state that unpacks consumes the whole port-metadata slot (`slot_bits`: 64
    on Tofino 1, 192 on Tofino 2). When the state advances past the rest itself (as
    open-p4studio's tna_resubmit does on Tofino 2), the unpack moves past T only, so
    the state as a whole still ends at the slot's end. T wider than the slot is an error."""
    for parser in gress.get("parsers", []):
        for state in parser.get("parse_states", []):
            ops = state.get("parser_ops", [])
            for i, op in enumerate(ops):
                prim = op.get("parameters", [{}])[0] if op.get("op") == "primitive" else {}
                if prim.get("op") != "_port_metadata_unpack":
                    continue
                width = int(prim["parameters"][0]["value"], 16)
                if width > slot_bits:
                    info = prim.get("source_info", {})
                    pos = SourcePos(info.get("filename", ""), info.get("line", 0), info.get("column", 0))
                    raise CompileError(pos, f"port metadata of {width} bits does not fit the target's "
                                            f"{slot_bits}-bit port-metadata slot")
                advances_itself = any(later.get("op") == "advance" for later in ops[i + 1:])
                moved = width if advances_itself else slot_bits
                prim["parameters"][0] = {"type": "hexstr", "value": hexstr(moved, 32)}


def _unique_warnings(warnings: list) -> list:
    """Each warning once (a top-level declaration is lowered once per gress)."""
    seen: set[str] = set()
    out = []
    for warning in warnings:
        text = warning.format()
        if text not in seen:
            seen.add(text)
            out.append(warning)
    return out


def merge_control_plane(merged: ControlPlane, cp: ControlPlane, pipe: str) -> None:
    """Add one gress's control-plane objects under bf-p4c's names: tables and extern
    instances prefixed with the pipe (`pipe.SwitchIngress.forward`), actions not
    (`SwitchIngress.hit`, listed once however many pipes use them)."""

    def prefixed(name: str | None) -> str | None:
        return None if name is None else f"{pipe}.{name}"

    for table in cp.tables:
        table.name = prefixed(table.name)
        table.implementation = prefixed(table.implementation)
        table.direct_resources = [(kind, prefixed(name)) for kind, name in table.direct_resources]
        merged.tables.append(table)
    known = {a.name for a in merged.actions}
    for action in cp.actions:
        if action.name not in known:
            merged.actions.append(action)
            known.add(action.name)
    for profile in cp.action_profiles:
        profile.name = prefixed(profile.name)
        profile.tables = [prefixed(name) for name in profile.tables]
        merged.action_profiles.append(profile)
    for group in ("counters", "direct_counters", "meters", "direct_meters"):
        for item in getattr(cp, group):
            item.name = prefixed(item.name)
            item.table = prefixed(item.table)
            getattr(merged, group).append(item)
    for group in ("registers", "digests", "value_sets"):
        for item in getattr(cp, group):
            item.name = prefixed(item.name)
            getattr(merged, group).append(item)
    known_headers = {h.type_name for h in merged.controller_headers}
    merged.controller_headers += [h for h in cp.controller_headers if h.type_name not in known_headers]
    known_enums = {e[0] for e in merged.serializable_enums}
    merged.serializable_enums += [e for e in cp.serializable_enums if e[0] not in known_enums]
    merged.errors = cp.errors


def pkg_info(checked: Any, arch: Architecture) -> dict[str, str]:
    """P4Info's pkg_info: the architecture, and `@pkginfo` keys on main."""
    out = {"arch": arch.pkginfo_arch}
    ann = ast.find_annotation(checked.main.annotations, "pkginfo") if checked.main else None
    for item in (ann.kv or []) if ann is not None else []:
        value = item.value.const_value
        if isinstance(value, str):
            out[item.key] = value
    return out


def pragmas(checked: Any, arch: Architecture) -> list[dict]:
    """Every annotation outside the standard set, where the program wrote it."""
    out: list[dict] = []

    def visit(node: Any, owner: str) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item, owner)
            return
        if not (dataclasses.is_dataclass(node) and isinstance(node, ast.Node)):
            return
        pos = getattr(node, "pos", None)
        if pos is not None and _in_arch_file(pos.file, arch):
            return
        name = getattr(node, "name", None)
        here = f"{type(node).__name__.replace('Declaration', '').lower()} {name}" \
            if isinstance(name, str) and isinstance(node, ast.Declaration | ast.TableDeclaration) else owner
        for ann in getattr(node, "annotations", None) or []:
            if ann.name in STANDARD_ANNOTATIONS:
                continue
            entry: dict = {"name": ann.name, "body": annotation_text(ann), "on": here}
            if ann.pos is not None:
                entry["source_info"] = {"filename": ann.pos.file, "line": ann.pos.line,
                                        "column": ann.pos.column}
            out.append(entry)
        for f in dataclasses.fields(node):
            if f.compare and f.name != "annotations":
                visit(getattr(node, f.name), here)

    visit(checked.program.declarations, "program")
    return out


def _in_arch_file(path: str, arch: Architecture) -> bool:
    """Whether `path` is one of our declaration files."""
    return os.path.basename(path) in arch.arch_files and os.path.dirname(os.path.abspath(path)) == str(P4INCLUDE)
