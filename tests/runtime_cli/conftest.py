"""Runtime CLI fixtures; puts this folder on sys.path so tests import cli_helpers."""

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cli_helpers import TABLES_JSON, program_json  # noqa: E402

from bufferlab.switch import Engine  # noqa: E402
from bufferlab.switch.runtime_cli import Executor  # noqa: E402


@pytest.fixture
def cli() -> Callable[[str], Executor]:
    """Makes an executor over a fresh engine loaded with tests/p4/<name>.p4."""

    def make(name: str) -> Executor:
        text = program_json(name)
        return Executor(Engine(text), text, ports=[1, 2])

    return make


@pytest.fixture
def tables_cli() -> Executor:
    """Executor over the engine's table fixture (tables chosen by IPv4 diffserv, result in identification)."""
    text = TABLES_JSON.read_text()
    return Executor(Engine(text), text)
