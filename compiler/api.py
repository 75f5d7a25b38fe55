"""Python API of bufferlab-p4c: source file to (BMv2 JSON document, P4Info message)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .bmv2.program import lower_to_bmv2
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


def compile_program(
    path: str | Path, include_dirs: Iterable[str | Path] = (), defines: Iterable[str] = ()
) -> Compiled:
    """Compile one v1model program; raises `CompileError` on any error."""
    checked = load(path, include_dirs, defines)
    document, cp, warnings = lower_to_bmv2(checked, str(path))
    info = build_p4info(cp)
    return Compiled(document, info, build_entries(cp, info), [*checked.warnings, *warnings])


def compile(  # noqa: A001 - the name users know from p4c's Python wrappers
    path: str | Path, include_dirs: Iterable[str | Path] = (), defines: Iterable[str] = ()
) -> tuple[dict, p4info_pb2.P4Info]:
    """Compile `path` to `(BMv2 JSON document, P4Info)` like p4c-bm2-ss."""
    result = compile_program(path, include_dirs, defines)
    return result.json, result.p4info
