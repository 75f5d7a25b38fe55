"""Lowering of TNA/T2NA programs to bufferlab's TNA JSON (README "TNA JSON").

`program.lower_tna` is the entry point: it finds the Switch's pipes (`program`), lowers
each gress of each pipe as a BMv2 document (`gress`) with TNA's extern instances
(`stateful`) and calls (`externs`), and merges the control-plane models with bf-p4c's
pipe-prefixed names.
"""

from typing import Any

from ...diagnostics import CompileError


def unsupported(node: Any, what: str) -> CompileError:
    """The error for a construct the TNA back end does not lower (named, never dropped)."""
    return CompileError(getattr(node, "pos", None), f"{what} is not supported by bufferlab's TNA back end")


def misplaced(node: Any, message: str) -> CompileError:
    """The error for a program that breaks a rule of the architecture."""
    return CompileError(getattr(node, "pos", None), message)
