"""Fuzz target: the compiler (front end and back end) on mutations of valid programs.
A bad program must get a located `file:line:col: error: ...`; RecursionError is allowed
too (bufferlab-p4c reports it as "program nesting is too deep"); anything else is a finding."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).parent))
from harness import Finding, main  # noqa: E402

with atheris.instrument_imports(include=["bufferlab.compiler"]):
    from bufferlab.compiler.api import compile_program
    from bufferlab.compiler.diagnostics import CompileError

SOURCE = Path(tempfile.mkdtemp(prefix="bufferlab-fuzz-p4c-")) / "fuzzed.p4"
# The seeds are tests/p4 programs: their `#include "include/..."` resolve there.
INCLUDE = Path(__file__).resolve().parents[2] / "tests" / "p4"


def test_one_input(data: bytes) -> None:
    """One program text; only located CompileErrors (or too deep nesting) may come out."""
    SOURCE.write_bytes(data)
    try:
        compile_program(SOURCE, [INCLUDE])
    except CompileError as error:
        if error.pos is None:
            raise Finding(f"error without a location: {error.format()}") from error
    except RecursionError:
        pass


if __name__ == "__main__":
    main(test_one_input)
