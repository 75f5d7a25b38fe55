"""Python API of bufferlab-p4c: source file to (BMv2 JSON document, P4Info message)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .bmv2.program import lower_to_bmv2
from .bmv2.tna.program import lower_tna
from .diagnostics import CompileWarning
from .frontend import load
from .p4info.build import build_p4info
from .p4info.entries import build_entries


@dataclass
class Compiled:
    """Everything one compilation produces."""

    json: dict
    p4info: p4info_pb2.P4Info
    entries: p4runtime_pb2.WriteRequest
    warnings: list[CompileWarning] = field(default_factory=list)
    arch: str = "v1model"
    target: str = "bmv2"


def compile_program(
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Iterable[str] = (),
    arch: str | None = None,
    target: str | None = None,
    emit_externs: bool = False,
) -> Compiled:
    """Compile one program for `arch` (None: the architecture it includes, else v1model);
    `emit_externs` compiles user-declared externs (v1model) as p4c-bm2-ss's `--emit-externs`;
    raises `CompileError` on any error."""
    checked = load(path, include_dirs, defines, arch, target)
    if checked.arch.name == "v1model":
        document, cp, warnings = lower_to_bmv2(checked, str(path), emit_externs)
    else:
        document, cp, warnings = lower_tna(checked, str(path), checked.arch, checked.target)
    info = build_p4info(cp)
    return Compiled(document, info, build_entries(cp, info), [*checked.warnings, *warnings],
                    checked.arch.name, checked.target)


def compile(  # noqa: A001 - the name users know from p4c's Python wrappers
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Iterable[str] = (),
    arch: str | None = None,
) -> tuple[dict, p4info_pb2.P4Info]:
    """Compile `path` to `(JSON document, P4Info)` like p4c-bm2-ss (or bf-p4c for TNA)."""
    result = compile_program(path, include_dirs, defines, arch)
    return result.json, result.p4info
