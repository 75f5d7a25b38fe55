"""Writing P4Info files in the format their suffix names, as p4c's `--p4runtime-files`."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import json_format, text_format
from google.protobuf.message import Message
from p4.config.v1 import p4info_pb2

from ..diagnostics import CompileError, CompileWarning

TEXT_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"


def message_text(message: Message) -> str:
    """Text format of any message with p4c's two header comment lines naming its type."""
    name = message.DESCRIPTOR.full_name
    proto = message.DESCRIPTOR.file.name
    return f"# proto-file: {proto}\n# proto-message: {name}\n\n" + text_format.MessageToString(message)


def p4info_text(info: p4info_pb2.P4Info) -> str:
    """The text form p4c writes: two comment lines, a blank line, protobuf text format."""
    return TEXT_HEADER + text_format.MessageToString(info)


FORMAT_SUFFIX = {"binary": ".bin", "json": ".json", "text": ".txtpb"}


def write_p4info(info: Message, path: str | Path, fmt: str | None = None) -> list[CompileWarning]:
    """Write `info` (P4Info or the entries WriteRequest) to `path`.

    The format is `fmt` (`binary`, `json`, `text`) when given, else the one the suffix names.
    """
    path = Path(path)
    warnings: list[CompileWarning] = []
    suffix = FORMAT_SUFFIX[fmt] if fmt is not None else path.suffix
    if suffix in (".txtpb", ".txt"):
        if suffix == ".txt":
            warnings.append(CompileWarning(None, f"{path}: the .txt suffix is deprecated, use .txtpb"))
        data: str | bytes = p4info_text(info) if isinstance(info, p4info_pb2.P4Info) else message_text(info)
    elif suffix == ".json":
        data = json_format.MessageToJson(info) + "\n"
    elif suffix == ".bin":
        data = info.SerializeToString()
    else:
        raise CompileError(None, f"{path}: unknown P4Info file suffix (use .txtpb, .txt, .json or .bin)")
    try:
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
    except OSError as exc:
        raise CompileError(None, f"cannot write {path}: {exc.strerror}") from exc
    return warnings
