"""JSON text in p4c's exact layout, so our BMv2 JSON diffs cleanly against p4c-bm2-ss output.

p4c's writer (formats.md §1.1): objects keep insertion order with one `"key" : value`
per line, two-space indentation, arrays of scalars on one line separated by `", "`,
arrays holding any object or array one element per line, and a final newline.
"""

from __future__ import annotations

import json
from typing import Any

_INDENT = "  "


def _scalar(value: Any) -> str:
    """Text of one scalar: null, booleans, integers and strings as p4c writes them."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"no JSON form for {type(value).__name__}")


def _write(value: Any, depth: int, out: list[str]) -> None:
    """Append the text of `value`, nested `depth` levels deep, to `out`."""
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = _INDENT * (depth + 1)
        out.append("{")
        first = True
        for key, item in value.items():
            out.append("\n" if first else ",\n")
            first = False
            out.append(f"{inner}{_scalar(str(key))} : ")
            _write(item, depth + 1, out)
        out.append("\n" + _INDENT * depth + "}")
        return
    if isinstance(value, (list, tuple)):
        if all(not isinstance(item, (dict, list, tuple)) for item in value):
            out.append("[" + ", ".join(_scalar(item) for item in value) + "]")
            return
        inner = _INDENT * (depth + 1)
        out.append("[")
        first = True
        for item in value:
            out.append("\n" if first else ",\n")
            first = False
            out.append(inner)
            _write(item, depth + 1, out)
        out.append("\n" + _INDENT * depth + "]")
        return
    out.append(_scalar(value))


def dumps(document: Any) -> str:
    """Serialise `document` (dicts, lists, scalars) as p4c's JSON writer does, newline-terminated."""
    out: list[str] = []
    _write(document, 0, out)
    out.append("\n")
    return "".join(out)
