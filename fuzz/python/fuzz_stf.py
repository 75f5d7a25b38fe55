"""Fuzz target: STF text against tests/p4/basic_l2_forward.p4 (bufferlab-stf's parser and
runner). Bad STF must end in an StfError naming the line (`<stf>:N: ...`), never another
exception."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).parent))
from harness import Finding, main  # noqa: E402

with atheris.instrument_imports(include=["bufferlab.switch.stf"]):
    from bufferlab.compiler import compile as compile_p4
    from bufferlab.switch import Engine
    from bufferlab.switch.stf import Runner, StfError

PROGRAM = Path(__file__).resolve().parents[2] / "tests" / "p4" / "basic_l2_forward.p4"
JSON_TEXT = json.dumps(compile_p4(PROGRAM)[0])
LOCATED = re.compile(r"<stf>:\d+: ")


def test_one_input(data: bytes) -> None:
    """One STF text; only located StfErrors may come out."""
    text = data.decode("utf-8", errors="replace")
    try:
        Runner(Engine(JSON_TEXT), JSON_TEXT, "<stf>").run(text)
    except StfError as error:
        if not LOCATED.match(str(error)):
            raise Finding(f"StfError without a line: {error}") from error


if __name__ == "__main__":
    main(test_one_input)
