"""Shared state of one lowering run: id counters, unique names, header layout, diagnostics."""

from __future__ import annotations

import linecache
import os
import re
from typing import Any

from .. import ast
from .. import types as t
from ..diagnostics import CompileError, CompileWarning, SourcePos
from .model import ControlPlane
from .storage import FieldRef, HeaderRef, StackRef, StructRef, UnionRef, header_leaves


def unsupported(node: Any, what: str) -> CompileError:
    """The error for a construct the back end cannot lower (named, never dropped)."""
    return CompileError(getattr(node, "pos", None), f"{what} is not supported by the BMv2 back end")


def field_width(p4type: t.P4Type) -> int:
    """Bits a scalar of `p4type` occupies in a BMv2 field (bool 1, error and enums 32)."""
    if isinstance(p4type, t.Error | t.Enum):
        return 32
    width = t.bit_width(p4type)
    if width == 0 and not isinstance(p4type, t.Bits):
        raise CompileError(None, f"type {p4type} has no BMv2 field representation")
    return width


def is_signed(p4type: t.P4Type) -> bool:
    """Whether values of `p4type` are two's-complement signed."""
    if isinstance(p4type, t.NewType) and p4type.underlying is not None:
        return is_signed(p4type.underlying)
    return isinstance(p4type, t.Bits) and p4type.signed


def strip_type(p4type: t.P4Type) -> t.P4Type:
    """`p4type` with new types and serializable enums replaced by their representation."""
    if isinstance(p4type, t.NewType) and p4type.underlying is not None:
        return strip_type(p4type.underlying)
    if isinstance(p4type, t.SerEnum):
        return p4type.underlying
    if isinstance(p4type, t.Specialized):
        return p4type
    return p4type


def balanced_prefix(text: str) -> str:
    """The leading expression of `text`: up to an unmatched closing bracket or a `;`."""
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return text[:index].strip()
            depth -= 1
        elif char == ";" and depth == 0:
            return text[:index].strip()
    return text.strip()


def annotation_string(annotations: list[ast.Annotation], name: str) -> str | None:
    """The string argument of `@name("...")`-style annotations, or None."""
    ann = ast.find_annotation(annotations, name)
    if ann is None:
        return None
    if ann.args:
        value = ann.args[0]
        if isinstance(value, ast.StringLiteral):
            return value.value
    text = "".join(getattr(tok, "text", "") for tok in ann.body).strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text or None


def annotation_text(ann: ast.Annotation) -> str:
    """An annotation as P4Info lists it: `@name` or `@name(body)`."""
    if not ann.body:
        return f"@{ann.name}"
    body = "".join(", " if tok.text == "," else tok.text for tok in ann.body)
    return f"@{ann.name}({body})"


def annotation_int(annotations: list[ast.Annotation], name: str) -> int | None:
    """The integer argument of `@id(n)`-style annotations, or None."""
    ann = ast.find_annotation(annotations, name)
    if ann is None:
        return None
    if ann.args:
        value = ann.args[0]
        if isinstance(value, ast.IntLiteral):
            return value.value
        if isinstance(value.const_value, int) and not isinstance(value.const_value, bool):
            return value.const_value
    text = "".join(getattr(tok, "text", "") for tok in ann.body).strip()
    try:
        return int(text.replace("_", ""), 0)
    except ValueError as exc:
        raise CompileError(ann.pos, f"@{name} needs an integer argument") from exc


def _has_flexible(p4type: t.StructLike) -> bool:
    """Whether a header declares a field `@flexible`."""
    fields = getattr(p4type.decl, "fields", None) or []
    return any(ast.find_annotation(f.annotations, "flexible") is not None for f in fields)


class Context:
    """Everything one lowering run accumulates before the JSON is assembled."""

    def __init__(self, program_path: str) -> None:
        self.program_path = program_path
        self.warnings: list[CompileWarning] = []
        self.cp = ControlPlane()
        self._ids: dict[str, int] = {}
        self._names: dict[str, int] = {}
        self.header_types: list[dict] = []
        self._header_type_names: dict[int, str] = {}
        self.headers: list[dict] = []
        self.header_stacks: list[dict] = []
        self.header_union_types: list[dict] = []
        self._union_type_names: dict[int, str] = {}
        self.header_unions: list[dict] = []
        self.header_union_stacks: list[dict] = []
        self.scalar_locals: list[list] = []
        self.scalar_metadata: list[list] = []
        self.field_lists: list[dict] = []
        self.learn_lists: list[dict] = []
        self.errors: dict[str, int] = {}
        self.enums: list[dict] = []
        self.enum_values: dict[tuple[str, str], int] = {}
        self.parse_vsets: list[dict] = []
        self.meter_arrays: list[dict] = []
        self.counter_arrays: list[dict] = []
        self.register_arrays: list[dict] = []
        self.calculations: list[dict] = []
        self.checksums: list[dict] = []
        # User-declared extern instances (`--emit-externs`, user_externs.py).
        self.extern_instances: list[dict] = []
        self.emit_externs = False
        # Computed data of update_checksum: (temporary, expression, env), computed at the end
        # of egress and before every `exit` (checksums.py).
        self.checksum_data: list[tuple[Any, Any, Any]] = []
        self.actions: list[dict] = []
        self.field_aliases: list[list] = []
        self.action_order: dict[str, tuple] = {}
        self.table_order: dict[str, tuple] = {}
        self.field_list_members: dict[int, list[FieldRef]] = {}
        self._scalar_names: set[str] = set()
        # Architecture match kinds -> the table match type an engine runs (TNA's
        # atcam_partition_index is exact); empty for v1model.
        self.match_kinds: dict[str, str] = {}
        # Pad headers with @flexible fields to whole bytes (TNA); v1model refuses them.
        self.pad_flexible = False
        # Table properties that ask for entry ageing (TNA adds `idle_timeout`).
        self.timeout_properties: tuple[str, ...] = ("support_timeout",)
        # Header instance names the program's own instances may not take (TNA: the
        # architecture's intrinsic metadata, which keeps its names whatever a program
        # calls its own members); empty for v1model.
        self.reserved_instance_names: frozenset[str] = frozenset()

    # ---------------------------------------------------------------- ids and names

    def next_id(self, group: str) -> int:
        """Next id of `group` (one counter per group, as p4c's `nextId`)."""
        value = self._ids.get(group, 0)
        self._ids[group] = value + 1
        return value

    def unique(self, base: str) -> str:
        """`base`, then `base_0`, `base_1`, … for later requests of the same base."""
        count = self._names.get(base)
        self._names[base] = 0 if count is None else count + 1
        return base if count is None else f"{base}_{count}"

    def warn(self, pos: SourcePos | None, message: str) -> None:
        """Record a warning (printed by the CLI)."""
        self.warnings.append(CompileWarning(pos, message))

    def source_info(self, node: Any) -> dict | None:
        """p4c's `source_info` object for a node (None when it has no position)."""
        pos: SourcePos | None = getattr(node, "pos", None)
        if pos is None:
            return None
        line = linecache.getline(pos.file, pos.line).rstrip("\r\n")
        column = pos.column
        rest = line[max(column - 1, 0) :]
        if isinstance(node, ast.Expression):
            fragment = balanced_prefix(rest)
        elif isinstance(node, ast.Declaration) and not isinstance(node, ast.Instantiation) and node.name in rest:
            # p4c points declarations at their name.
            column += rest.index(node.name)
            fragment = node.name
        else:
            fragment = rest.strip()
            end = fragment.find(";")
            if end >= 0:
                fragment = fragment[: end + 1]
        return {
            "filename": pos.file,
            "line": pos.line,
            "column": column,
            "source_fragment": fragment,
        }

    def hidden_action_base(self, node: Any) -> str:
        """p4c's name for a synthesized action: file base name + line (`act` if unknown)."""
        pos: SourcePos | None = getattr(node, "pos", None)
        if pos is None:
            return "act"
        base = os.path.splitext(os.path.basename(pos.file))[0]
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
        if base and base[-1].isdigit():
            base += "l"
        return f"{base}{pos.line}"

    # ---------------------------------------------------------------- header layout

    def header_type(self, p4type: t.StructLike, name: str | None = None) -> str:
        """Name of the JSON header type for `p4type`, created on first use."""
        key = id(p4type.decl) if p4type.decl is not None else hash(p4type.name)
        known = self._header_type_names.get(key)
        if known is not None:
            return known
        type_name = name or p4type.name
        fields: list[list] = []
        total = 0
        leaves = header_leaves(p4type) if isinstance(p4type, t.Header) else \
            [(fname, ftype, (fname,)) for fname, ftype in p4type.fields]
        for fname, ftype, _ in leaves:
            ftype = strip_type(ftype)
            if isinstance(ftype, t.Varbit):
                fields.append([fname, "*"])
                continue
            if isinstance(ftype, t.StructLike | t.Stack):
                raise CompileError(
                    getattr(p4type.decl, "pos", None),
                    f"field {fname} of {p4type.name}: nested {ftype} fields are not supported "
                    "by the BMv2 back end",
                )
            width = field_width(ftype)
            signed = is_signed(ftype)
            fields.append([fname, width, 0 if isinstance(ftype, t.Bool) else signed])
            total += width
        is_header = isinstance(p4type, t.Header)
        if is_header and total % 8 != 0 and self.pad_flexible and _has_flexible(p4type):
            # TNA's @flexible fields (bridged metadata): the compiler chooses their layout,
            # which only its own deparser and parser see; padding at the end keeps bytes whole.
            fields.append(["_flexible_padding", 8 - total % 8, False])
            total += 8 - total % 8
        if is_header and total % 8 != 0:
            raise CompileError(
                getattr(p4type.decl, "pos", None),
                f"header {p4type.name} is {total} bits wide, not a multiple of 8",
            )
        if not is_header and total % 8 != 0:
            fields.append(["_padding", 8 - total % 8, False])
        entry: dict = {"name": type_name, "id": self.next_id("header_types"), "fields": fields}
        varbits = [f for f in fields if f[1] == "*"]
        if varbits:
            varbit_type = next(
                strip_type(ft) for _, ft in p4type.fields if isinstance(strip_type(ft), t.Varbit)
            )
            entry["max_length"] = (total + varbit_type.max_width) // 8
        self.header_types.append(entry)
        self._header_type_names[key] = type_name
        return type_name

    def add_header(self, name: str, p4type: t.StructLike, metadata: bool) -> HeaderRef:
        """Create header instance `name` of `p4type`."""
        type_name = self.header_type(p4type)
        self.headers.append(
            {
                "name": name,
                "id": self.next_id("headers"),
                "header_type": type_name,
                "metadata": metadata,
                "pi_omit": True,
            }
        )
        return HeaderRef(name, p4type, metadata)

    def add_union(self, name: str, p4type: t.HeaderUnion) -> UnionRef:
        """Create header union `name`: one header instance per member."""
        key = id(p4type.decl)
        if key not in self._union_type_names:
            members = []
            for mname, mtype in p4type.fields:
                members.append([mname, self.header_type(mtype)])
            self.header_union_types.append(
                {"name": p4type.name, "id": self.next_id("header_union_types"), "headers": members}
            )
            self._union_type_names[key] = p4type.name
        refs = {m: self.add_header(f"{name}.{m}", mt, False) for m, mt in p4type.fields}
        self.header_unions.append(
            {
                "name": name,
                "id": self.next_id("header_unions"),
                "union_type": p4type.name,
                "header_ids": [self._header_id(r.name) for r in refs.values()],
            }
        )
        return UnionRef(name, p4type, refs)

    def add_stack(self, name: str, p4type: t.Stack) -> StackRef:
        """Create a header stack (or union stack) `name` with its elements `name[i]`."""
        element = p4type.element
        if isinstance(element, t.HeaderUnion):
            elems = tuple(self.add_union(f"{name}[{i}]", element) for i in range(p4type.size))
            self.header_union_stacks.append(
                {
                    "name": name,
                    "id": self.next_id("union_stack"),
                    "union_type": element.name,
                    "header_union_ids": [self._union_id(e.name) for e in elems],
                }
            )
            return StackRef(name, p4type, elems)
        if not isinstance(element, t.Header):
            raise CompileError(None, f"stack {name}: element type {element} is not a header")
        elems = tuple(self.add_header(f"{name}[{i}]", element, False) for i in range(p4type.size))
        self.header_stacks.append(
            {
                "name": name,
                "id": self.next_id("stack"),
                "size": p4type.size,
                "header_type": self.header_type(element),
                "header_ids": [self._header_id(e.name) for e in elems],
            }
        )
        return StackRef(name, p4type, elems)

    def _header_id(self, name: str) -> int:
        """Id of header instance `name`."""
        return next(h["id"] for h in self.headers if h["name"] == name)

    def _union_id(self, name: str) -> int:
        """Id of header union `name`."""
        return next(u["id"] for u in self.header_unions if u["name"] == name)

    def scalar(self, base: str, p4type: t.P4Type, metadata: bool = False) -> FieldRef:
        """A new field of the `scalars` instance (a local, temporary or user-metadata field);
        a varbit gets a header of its own (`varbit_storage`)."""
        if isinstance(strip_type(p4type), t.Varbit):
            return self.varbit_storage(base.replace(".", "_"), strip_type(p4type))
        name = base
        if name in self._scalar_names:
            name = self.unique_scalar(base)
        self._scalar_names.add(name)
        ftype = strip_type(p4type)
        entry = [name, field_width(ftype), False if isinstance(ftype, t.Bool) else is_signed(ftype)]
        (self.scalar_metadata if metadata else self.scalar_locals).append(entry)
        return FieldRef("scalars", name, p4type)

    def unique_scalar(self, base: str) -> str:
        """A scalar name from `base` not used yet (`base_0`, `base_1`, …)."""
        n = 0
        while f"{base}_{n}" in self._scalar_names:
            n += 1
        return f"{base}_{n}"

    def temporary(self, p4type: t.P4Type) -> FieldRef:
        """A compiler temporary (`tmp`, `tmp_0`, …)."""
        name = "tmp" if "tmp" not in self._scalar_names else self.unique_scalar("tmp")
        return self.scalar(name, p4type)

    def local_name(self, name: str) -> str:
        """p4c's unique name for a user local: `name_0`, `name_1`, … (the source name is taken)."""
        taken = self._scalar_names | {h["name"] for h in self.headers}
        n = 0
        while f"{name}_{n}" in taken or any(x.startswith(f"{name}_{n}_") for x in taken):
            n += 1
        return f"{name}_{n}"

    def local_storage(self, base: str, p4type: t.P4Type, metadata: bool = False) -> Any:
        """Storage for a local variable (or metadata member) named from `base`."""
        p4type = p4type if not isinstance(p4type, t.NewType) else strip_type(p4type)
        if isinstance(strip_type(p4type), t.Varbit):
            return self.varbit_storage(base, strip_type(p4type))
        if isinstance(p4type, t.Header):
            return self.add_header(self._free_instance_name(base), p4type, metadata)
        if isinstance(p4type, t.HeaderUnion):
            return self.add_union(self._free_instance_name(base), p4type)
        if isinstance(p4type, t.Stack):
            return self.add_stack(self._free_instance_name(base), p4type)
        if isinstance(p4type, t.Struct) and not metadata and all(
            not isinstance(strip_type(ftype), t.StructLike | t.Stack | t.Tuple | t.Varbit)
            for _, ftype in p4type.fields
        ):
            # p4c keeps a struct-typed local as a metadata header instance of the struct type.
            return self.add_header(self._free_instance_name(base), p4type, True)
        if isinstance(p4type, t.Struct):
            return StructRef(
                p4type,
                {
                    fname: self.local_storage(f"{base}_{fname}", ftype, metadata)
                    for fname, ftype in p4type.fields
                },
            )
        if isinstance(p4type, t.Tuple):
            return StructRef(
                t.Struct(
                    name="tuple", fields=tuple((f"f{i}", e) for i, e in enumerate(p4type.elements))
                ),
                {
                    f"f{i}": self.local_storage(f"{base}_f{i}", e, metadata)
                    for i, e in enumerate(p4type.elements)
                },
            )
        return self.scalar(base, p4type, metadata)

    def varbit_storage(self, base: str, p4type: t.Varbit) -> FieldRef:
        """A varbit local: field `value` of a metadata header of its own. BMv2 keeps a
        varbit's length beside its bytes only in a header field (`*`), one per header type,
        so each varbit local is a one-field metadata header (`varbit_<W>` types)."""
        type_name = f"varbit_{p4type.max_width}"
        if not any(h["name"] == type_name for h in self.header_types):
            self.header_types.append(
                {
                    "name": type_name,
                    "id": self.next_id("header_types"),
                    "fields": [["value", "*"]],
                    "max_length": (p4type.max_width + 7) // 8,
                }
            )
        name = self._free_instance_name(base)
        self.headers.append(
            {
                "name": name,
                "id": self.next_id("headers"),
                "header_type": type_name,
                "metadata": True,
                "pi_omit": True,
            }
        )
        return FieldRef(name, "value", p4type)

    def member_instance_name(self, name: str) -> str:
        """The instance name of headers-struct member `name`: its own unless reserved."""
        return self._free_instance_name(name) if name in self.reserved_instance_names else name

    def _free_instance_name(self, base: str) -> str:
        """A header instance name not used yet nor reserved."""
        taken = {h["name"] for h in self.headers} | {u["name"] for u in self.header_unions}
        taken |= {s["name"] for s in self.header_stacks} | self.reserved_instance_names
        if base not in taken:
            return base
        n = 0
        while f"{base}_{n}" in taken:
            n += 1
        return f"{base}_{n}"

    def scalars_type(self) -> dict:
        """The `scalars_0` header type: locals first, then user metadata, padded to bytes."""
        fields = self.scalar_locals + self.scalar_metadata
        total = sum(f[1] for f in fields)
        fields = list(fields)
        if total % 8:
            fields.append(["_padding_0", 8 - total % 8, False])
        return {"name": "scalars_0", "id": 0, "fields": fields}

    def renumber_actions(self, pipelines: list[dict]) -> None:
        """Order actions as p4c lists them and rewrite every action id the pipelines use."""
        ordered = sorted(self.actions, key=lambda a: self.action_order.get(a["name"], (9,)))
        remap = {a["id"]: new for new, a in enumerate(ordered)}
        for a in ordered:
            a["id"] = remap[a["id"]]
        self.actions[:] = ordered
        self.cp.actions.sort(key=lambda a: self.action_order.get(a.name, (9,)))
        self.cp.tables.sort(key=lambda t: self.table_order.get(t.name, (9,)))
        for pipeline in pipelines:
            for table in pipeline["tables"]:
                table["action_ids"] = [remap[i] for i in table["action_ids"]]
                if "default_entry" in table:
                    table["default_entry"]["action_id"] = remap[table["default_entry"]["action_id"]]
                for entry in table.get("entries", []):
                    entry["action_entry"]["action_id"] = remap[entry["action_entry"]["action_id"]]
