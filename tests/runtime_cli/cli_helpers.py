"""Helpers for the runtime CLI tests: compiled programs, running lines, sending frames."""

import json
from functools import cache
from pathlib import Path

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch.runtime_cli import Executor

P4_DIR = Path(__file__).resolve().parents[1] / "p4"
TABLES_JSON = Path(__file__).resolve().parents[1] / "engine" / "fixtures" / "tables.json"


@cache
def program_json(name: str) -> str:
    """BMv2 JSON text of tests/p4/<name>.p4."""
    doc, _ = compile_p4(P4_DIR / f"{name}.p4")
    return json.dumps(doc)


def run_ok(executor: Executor, *lines: str) -> str:
    """Runs lines that must succeed; returns the last answer's text."""
    text = ""
    for line in lines:
        answer = executor.execute(line)
        assert answer.ok, f"{line!r} failed: {answer.text}"
        text = answer.text
    return text


def run_err(executor: Executor, line: str) -> str:
    """Runs a line that must fail; returns its error text."""
    answer = executor.execute(line)
    assert not answer.ok, f"{line!r} unexpectedly succeeded: {answer.text}"
    return answer.text


def send(executor: Executor, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """Sends one frame at the engine's current time, drains, returns (port, frame) outputs."""
    engine = executor.engine
    engine.send(port, frame, engine.now())
    engine.drain()
    return [(p, bytes(f)) for p, f, _ in engine.received()]
