"""Fixtures for buffer_switch.p4 on the in-process engine: the program is compiled once per
session; each test gets a freshly loaded engine set up as the controller would set it up."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from buffer_switch_helpers import PROGRAM, programmed  # noqa: E402

from bufferlab.compiler import compile as compile_p4  # noqa: E402
from bufferlab.switch import Engine  # noqa: E402


@pytest.fixture(scope="session")
def program_json() -> str:
    """p4src/buffer_switch.p4 compiled by bufferlab-p4c, as BMv2 JSON text."""
    document, _p4info = compile_p4(PROGRAM)
    return json.dumps(document)


@pytest.fixture
def switch(program_json: str) -> Engine:
    """The program on three ports (hosts H1..H3 on ports 1..3), switch id 1, 100,000 B pool."""
    return programmed(program_json)
