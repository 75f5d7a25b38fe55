"""Engine test fixtures; puts this folder on sys.path so tests import engine_helpers."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from engine_helpers import FIXTURES  # noqa: E402

from bufferlab.switch import Engine  # noqa: E402


@pytest.fixture
def meta() -> Engine:
    """The metadata/primitive fixture program, loaded fresh."""
    return Engine(FIXTURES / "meta.json", seed=7)


@pytest.fixture
def l3() -> Engine:
    """The IPv4 router fixture program, loaded fresh."""
    return Engine(FIXTURES / "l3.json")
