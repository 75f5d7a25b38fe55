"""Fixtures for the live buffer_switch.p4 tests: the program compiled once per session and,
per test, a `BufferLab` (hosts A, B, C and a running bufferlab-switch) removed afterwards."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from buffer_live_lab import BufferLab, Build, compile_program  # noqa: E402


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """p4src/buffer_switch.p4 compiled by bufferlab-p4c into a temporary directory."""
    return compile_program(tmp_path_factory.mktemp("buffer_switch_build"))


@pytest.fixture
def lab(build: Build, tmp_path: Path):
    """A running BufferLab; the switch is stopped and the namespaces deleted at the end."""
    with BufferLab(build, tmp_path) as running:
        yield running
