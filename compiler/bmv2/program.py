"""Whole-program lowering: v1model package arguments to the BMv2 JSON document."""

from __future__ import annotations

import os
from typing import Any

from .. import ast
from .. import types as t
from ..arch import v1model
from ..diagnostics import CompileError, SourcePos
from .actions import Actions, DeclaredIn
from .calculations import Calculations
from .checksums import checksum_temporaries, lower_checksum_control
from .context import (
    Context,
    annotation_int,
    annotation_string,
    field_width,
    strip_type,
    unsupported,
)
from .deparser import lower_deparser
from .externs import Externs
from .lists import FieldLists
from .model import ControlPlane, CpControllerHeader, CpParam
from .parsers import ParserLowering
from .pipelines import ControlLowering
from .stateful import Stateful, constructor_bindings
from .storage import Env, StructRef

P4INCLUDE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "p4include")

V1SWITCH_ARGS = v1model.PACKAGE_ARGS


def from_arch_file(node: Any, arch_files: tuple[str, ...] = v1model.ARCH.arch_files) -> bool:
    """Whether `node` was declared in one of our declaration files `arch_files`."""
    pos = getattr(node, "pos", None)
    if pos is None:
        return False
    return os.path.basename(pos.file) in arch_files and (
        P4INCLUDE in os.path.abspath(pos.file) or not os.path.exists(pos.file)
        or os.path.dirname(os.path.abspath(pos.file)) == P4INCLUDE
    )


def field_list_indices(annotations: list[ast.Annotation]) -> list[int]:
    """The list numbers of a `@field_list(n, ...)` annotation."""
    ann = ast.find_annotation(annotations, "field_list")
    if ann is None:
        return []
    out = []
    for arg in ann.args or []:
        value = arg.const_value if arg.const_value is not None else getattr(arg, "value", None)
        if isinstance(value, int):
            out.append(value)
    return out


def package_arguments(checked: Any) -> dict[str, Any]:
    """V1Switch parameter name -> parser/control declaration, honouring named arguments."""
    found = dict(checked.main_args)
    found.update({name: decl for name, (decl, _) in _block_arguments(checked).items()})
    return found


def constructor_arguments(checked: Any) -> dict[str, list[ast.Argument]]:
    """V1Switch parameter name -> the constructor arguments of the block passed there."""
    return {name: args for name, (_, args) in _block_arguments(checked).items()}


def _block_arguments(checked: Any) -> dict[str, tuple[Any, list[ast.Argument]]]:
    """Each V1Switch argument that names a parser or control: its declaration and arguments."""
    found = {}
    for position, arg in enumerate(checked.main.args):
        value = arg.value
        call = getattr(value, "call", None)
        decl = getattr(call, "target", None) if call is not None else getattr(value, "ref", None)
        args = value.args if isinstance(value, ast.MethodCallExpression) else []
        if isinstance(decl, ast.Instantiation):
            args = decl.args
            decl = getattr(decl.type_node, "ref", None)
        if not isinstance(decl, ast.ParserDeclaration | ast.ControlDeclaration):
            continue
        name = arg.name if arg.name is not None else (
            V1SWITCH_ARGS[position] if position < len(V1SWITCH_ARGS) else None)
        if name is not None:
            found[name] = (decl, args)
    return found


class ProgramLowering:
    """Lowers one checked v1model program."""

    # The architecture's declaration files: their enums are not the program's.
    arch_files: tuple[str, ...] = v1model.ARCH.arch_files

    def __init__(self, checked: Any, program_path: str) -> None:
        self.checked = checked
        self.ctx = Context(program_path)
        self.ctx.next_id("header_types")
        self.ctx.next_id("headers")
        self.root = Env()
        self.calcs = Calculations(self.ctx)
        self.lists = FieldLists(self.ctx)
        self.externs = Externs(self.ctx, self.calcs, self.lists)
        self.stateful = Stateful(self.ctx)
        self.actions = Actions(self.ctx, self.externs)

    def lower(self) -> tuple[dict, ControlPlane]:
        """The JSON document and the control-plane model."""
        checked = self.checked
        ctx = self.ctx
        if checked.main is None:
            raise CompileError(_end_of(ctx.program_path),
                               "the program has no `main` package instantiation")
        package = getattr(checked.package, "name", "")
        if package not in v1model.ARCH.packages:
            raise CompileError(checked.main.pos, f"package {package} is not supported: only v1model's V1Switch")
        args = [package_arguments(checked).get(name) for name in V1SWITCH_ARGS]
        if any(a is None for a in args):
            raise CompileError(checked.main.pos, "V1Switch needs six arguments")
        parser, verify, ingress, egress, compute, deparser = args
        for index, name in enumerate(checked.errors):
            ctx.errors[name] = index
        ctx.cp.errors = list(checked.errors)
        self.declarations()
        std_type = self.std_metadata_type()
        hdr_type = strip_type(checked.type_args.get("H"))
        meta_type = strip_type(checked.type_args.get("M"))
        ctx.header_type(std_type, v1model.STANDARD_METADATA)
        std = ctx.add_header(v1model.STANDARD_METADATA, std_type, True)
        headers = self.headers_storage(hdr_type)
        meta = self.metadata_storage(meta_type)
        storages = {"H": (hdr_type, headers), "M": (meta_type, meta), "S": (std_type, std)}
        self.block_args = constructor_arguments(checked)
        parser_env = self.block_env(parser, storages, "p")
        parsers = [ParserLowering(ctx, self.externs, self.stateful.instantiate).lower(parser, parser_env)]
        compute_env = self.block_env(compute, storages, "ck")
        temps = checksum_temporaries(ctx, compute, compute_env)
        pipelines = []
        for rank, (name, decl, kind) in enumerate((("ingress", ingress, "ig"), ("egress", egress, "eg")), start=1):
            self.actions.control_rank = rank
            env = self.block_env(decl, storages, kind)
            epilogue = ctx.checksum_data if name == "egress" else []
            pipelines.append(
                ControlLowering(ctx, self.actions, self.stateful, self.externs).lower(name, decl, env, epilogue))
        ctx.renumber_actions(pipelines)
        self.check_unique_names(pipelines)
        lower_checksum_control(ctx, self.calcs, self.externs, compute, compute_env, False, temps)
        lower_checksum_control(ctx, self.calcs, self.externs, verify, self.block_env(verify, storages, "vr"), True)
        deparsers = [lower_deparser(ctx, deparser, self.block_env(deparser, storages, "dep"))]
        self.controller_headers()
        self.pkg_info()
        self.stateful.drop_unused_direct()
        document = self.sections(parsers, deparsers, pipelines, ctx.extern_instances)
        document["program"] = ctx.program_path
        # Format 2.23 as p4c writes it; the compiler field names us, not p4c (BMv2 ignores it).
        document["__meta__"] = {"version": [2, 23], "compiler": "bufferlab-p4c"}
        return document, ctx.cp

    def sections(self, parsers: list[dict], deparsers: list[dict], pipelines: list[dict],
                 extern_instances: list[dict]) -> dict:
        """The BMv2 JSON sections in p4c's order, from what lowering gathered in the context."""
        ctx = self.ctx
        return {
            "header_types": [ctx.scalars_type(), *ctx.header_types],
            "headers": [
                {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True, "pi_omit": True},
                *ctx.headers,
            ],
            "header_stacks": ctx.header_stacks,
            "header_union_types": ctx.header_union_types,
            "header_unions": ctx.header_unions,
            "header_union_stacks": ctx.header_union_stacks,
            "field_lists": ctx.field_lists,
            "errors": [[name, code] for name, code in ctx.errors.items()],
            "enums": ctx.enums,
            "parsers": parsers,
            "parse_vsets": ctx.parse_vsets,
            "deparsers": deparsers,
            "meter_arrays": [self.meter_json(m) for m in ctx.meter_arrays],
            "counter_arrays": [self.counter_json(c) for c in ctx.counter_arrays],
            "register_arrays": ctx.register_arrays,
            "calculations": ctx.calculations,
            "learn_lists": ctx.learn_lists,
            "actions": ctx.actions,
            "pipelines": pipelines,
            "checksums": ctx.checksums,
            "force_arith": [],
            "extern_instances": extern_instances,
            "field_aliases": ctx.field_aliases,
        }

    # ---------------------------------------------------------------- declarations

    def declarations(self) -> None:
        """Top-level actions, enums, `NoAction`."""
        ctx = self.ctx
        for decl in self.checked.program.declarations:
            if isinstance(decl, ast.ActionDeclaration):
                self.root.bind(decl, DeclaredIn(self.root))
                if decl.name == "NoAction":
                    ctx.noaction = decl
            elif isinstance(decl, ast.EnumDeclaration) and not from_arch_file(decl, self.arch_files):
                entries = []
                for code, member in enumerate(decl.members):
                    entries.append([member.name, code])
                    ctx.enum_values[(decl.name, member.name)] = code
                ctx.enums.append({"name": decl.name, "entries": entries})
            elif isinstance(decl, ast.SerEnumDeclaration) and not from_arch_file(decl, self.arch_files):
                enum_type = decl.p4type
                if isinstance(enum_type, t.SerEnum):
                    ctx.cp.serializable_enums.append(
                        (decl.name, enum_type.underlying.width, list(enum_type.members))
                    )
            elif isinstance(decl, ast.Instantiation) and decl.name != "main":
                self.stateful.instantiate(decl, self.root)
        if not hasattr(ctx, "noaction"):
            ctx.noaction = None

    def std_metadata_type(self) -> t.StructLike:
        """`standard_metadata_t` from v1model.p4, with its `@alias` field aliases recorded."""
        decl = self.checked.declaration(v1model.STANDARD_METADATA_TYPE)
        if not isinstance(decl, ast.StructDeclaration) or decl.p4type is None:
            raise CompileError(None, f"{v1model.STANDARD_METADATA_TYPE} is not declared (include v1model.p4)")
        for f in decl.fields:
            alias = annotation_string(f.annotations, "alias")
            if alias:
                self.ctx.field_aliases.append([alias, [v1model.STANDARD_METADATA, f.name]])
        return decl.p4type

    def headers_storage(self, hdr_type: t.P4Type) -> StructRef:
        """Header instances for every member of the headers struct H."""
        if not isinstance(hdr_type, t.Struct):
            raise CompileError(None, f"the headers type {hdr_type} must be a struct")
        fields: dict[str, Any] = {}
        for name, ftype in hdr_type.fields:
            ftype = strip_type(ftype)
            instance = self.ctx.member_instance_name(name)
            if isinstance(ftype, t.Header):
                fields[name] = self.ctx.add_header(instance, ftype, False)
            elif isinstance(ftype, t.Stack):
                fields[name] = self.ctx.add_stack(instance, ftype)
            elif isinstance(ftype, t.HeaderUnion):
                fields[name] = self.ctx.add_union(instance, ftype)
            else:
                raise unsupported(hdr_type.decl, f"headers struct member {name} of type {ftype}")
        return StructRef(hdr_type, fields)

    def metadata_storage(self, meta_type: t.P4Type) -> StructRef:
        """User metadata: scalars `userMetadata.<f>`, nested structs flattened as p4c does."""
        if not isinstance(meta_type, t.Struct):
            raise CompileError(None, f"the metadata type {meta_type} must be a struct")
        counter = [0]
        decl = meta_type.decl
        annotations = {f.name: f.annotations for f in getattr(decl, "fields", [])}

        def build(struct: t.Struct, path: list[str]) -> StructRef:
            fields: dict[str, Any] = {}
            for name, ftype in struct.fields:
                ftype_s = strip_type(ftype)
                if isinstance(ftype_s, t.Struct):
                    fields[name] = build(ftype_s, [*path, name])
                elif isinstance(ftype_s, t.Header | t.HeaderUnion | t.Stack):
                    fields[name] = self.ctx.local_storage("_".join([*path, name]), ftype_s, metadata=False)
                elif not path:
                    fields[name] = self.ctx.scalar(f"userMetadata.{name}", ftype, metadata=True)
                    for index in field_list_indices(annotations.get(name, [])):
                        self.ctx.field_list_members.setdefault(index, []).append(fields[name])
                else:
                    flat = "_" + "_".join([*path, name]) + str(counter[0])
                    counter[0] += 1
                    fields[name] = self.ctx.scalar(f"userMetadata.{flat}", ftype, metadata=True)
            return StructRef(struct, fields)

        return build(meta_type, [])

    def block_env(self, decl: Any, storages: dict[str, tuple[t.P4Type, Any]], kind: str) -> Env:
        """Environment of the top-level block V1Switch takes as `kind`: parameters bound by
        type, constructor parameters to the arguments of its constructor call."""
        name = annotation_string(decl.annotations, "name") or decl.name
        env = Env(parent=self.root, prefix=name.lstrip("."))
        for param in decl.params:
            ptype = strip_type(param.p4type or param.type_node.resolved)
            for p4type, storage in storages.values():
                if ptype == p4type:
                    env.bind(param, storage)
                    break
        for param, bound in constructor_bindings(decl, self.block_args.get(kind, []), env, env.prefix):
            env.bind(param, bound)
        return env

    def check_unique_names(self, pipelines: list[dict]) -> None:
        """Tables and actions are looked up by name: the same name twice cannot be loaded."""
        seen: set[str] = set()
        for kind, names in (
            ("table", [table["name"] for p in pipelines for table in p["tables"]]),
            ("action", [a["name"] for a in self.ctx.actions if id(a) not in self.actions.copies]),
        ):
            seen.clear()
            for name in names:
                if name in seen:
                    # Control-plane names come from the control type, so two blocks of one type
                    # would give two objects one name: P4Runtime and BMv2 could not tell them
                    # apart, and p4c rejects such name collisions as well.
                    raise CompileError(
                        self.checked.main.pos,
                        f"{kind} {name} would appear twice in the BMv2 JSON and P4Info "
                        "(is one control type used for two pipeline blocks? declare a second control "
                        "type for the second block)",
                    )
                seen.add(name)

    def pkg_info(self) -> None:
        """`@pkginfo(key = "value", …)` on `main`: P4Info's pkg_info (name, version, …)."""
        ann = ast.find_annotation(self.checked.main.annotations, "pkginfo")
        if ann is None:
            return
        if ann.kv:
            for item in ann.kv:
                value = item.value.const_value
                if not isinstance(value, str):
                    raise CompileError(item.pos, f"@pkginfo {item.key} must be a string")
                self.ctx.cp.pkg_info[item.key] = value
            return
        # `@pkginfo(key = "value", ...)`: read the raw tokens.
        tokens = [tok for tok in ann.body if tok.text != ","]
        for index in range(0, len(tokens) - 2, 3):
            key, equals, value = tokens[index : index + 3]
            if equals.text != "=" or not value.text.startswith('"'):
                raise CompileError(ann.pos, "@pkginfo takes key = \"value\" pairs")
            self.ctx.cp.pkg_info[key.text] = value.text[1:-1]

    def controller_headers(self) -> None:
        """`@controller_header` headers for P4Info's controller_packet_metadata."""
        for decl in self.checked.program.declarations:
            if not isinstance(decl, ast.HeaderDeclaration):
                continue
            name = annotation_string(decl.annotations, "controller_header")
            if name is None:
                continue
            fields = []
            for f in decl.fields:
                ftype = strip_type(f.p4type or f.type_node.resolved)
                fields.append(CpParam(f.name, field_width(ftype), annotation_int(f.annotations, "id")))
            self.ctx.cp.controller_headers.append(
                CpControllerHeader(name, decl.name, fields, annotation_int(decl.annotations, "id"))
            )

    # ---------------------------------------------------------------- stateful JSON

    @staticmethod
    def counter_json(entry: dict) -> dict:
        """A counter array in p4c's key order."""
        if entry.get("is_direct"):
            out = {"name": entry["name"], "id": entry["id"], "is_direct": True, "binding": entry["binding"]}
            if "source_info" in entry:
                out["source_info"] = entry["source_info"]
            return out
        return entry

    @staticmethod
    def meter_json(entry: dict) -> dict:
        """A meter array in p4c's key order."""
        if not entry.get("is_direct"):
            return entry
        out = {"name": entry["name"], "id": entry["id"]}
        if "source_info" in entry:
            out["source_info"] = entry["source_info"]
        out.update(
            {
                "is_direct": True,
                "rate_count": 2,
                "type": entry["type"],
                "size": entry["size"],
                "binding": entry["binding"],
                "result_target": entry["result_target"],
            }
        )
        return out


def _end_of(path: str) -> SourcePos | None:
    """The last line of a program file: where a missing declaration would go (None if the
    file cannot be read again)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as source:
            lines = sum(1 for _ in source)
    except OSError:
        return None
    return SourcePos(path, max(lines, 1), 1)


def lower_to_bmv2(checked: Any, program_path: str, emit_externs: bool = False) -> tuple[dict, ControlPlane, list]:
    """Lower a checked program: (BMv2 JSON document, control-plane model, warnings);
    `emit_externs` compiles user-declared externs as p4c-bm2-ss's `--emit-externs` does."""
    lowering = ProgramLowering(checked, program_path)
    lowering.ctx.emit_externs = emit_externs
    document, cp = lowering.lower()
    return document, cp, lowering.ctx.warnings



