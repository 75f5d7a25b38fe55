"""Fixtures for the live switch tests: compiled programs, an engine behind a P4Runtime server
(in-process, no live ports) and a primary controller connection."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from google.protobuf import text_format

from bufferlab.compiler import compile
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.switch.engine import Engine
from bufferlab.switch.p4runtime import serve
from bufferlab.switch.target import EngineTarget

ROOT = Path(__file__).resolve().parents[2]
DEVICE_ID = 0


def compiled(name: str) -> types.SimpleNamespace:
    """A program of p4src/, tests/p4/ or tests/switch_live/p4/ compiled with bufferlab's compiler."""
    path = next(p for p in (ROOT / "p4src" / name, ROOT / "tests" / "p4" / name,
                            Path(__file__).parent / "p4" / name) if p.exists())
    document, p4info = compile(path)
    return types.SimpleNamespace(json=json.dumps(document), p4info=p4info,
                                 index=P4InfoIndex(p4info),
                                 p4info_text=text_format.MessageToString(p4info))


@pytest.fixture(scope="session")
def programs():
    """Compile on first use: programs("forward.p4")."""
    cache: dict[str, types.SimpleNamespace] = {}

    def get(name: str) -> types.SimpleNamespace:
        if name not in cache:
            cache[name] = compiled(name)
        return cache[name]

    return get


@pytest.fixture
def switch(programs):
    """An engine (started with forward.p4, as a switch started with a JSON), its target
    adapter with CPU port 255, and a P4Runtime server on a free port."""
    start = programs("forward.p4")
    engine = Engine(start.json)
    engine.set_cpu_port(255)
    target = EngineTarget(engine, start.json, cpu_port=255)
    running = serve(target, DEVICE_ID, "127.0.0.1:0")
    yield types.SimpleNamespace(engine=engine, target=target, server=running,
                                address=f"127.0.0.1:{running.port}")
    running.stop(0)


@pytest.fixture
def connect(switch):
    """Open controller connections to the switch; closed at the end."""
    opened: list[SwitchConnection] = []

    def open_one(election_id: tuple[int, int] = (0, 1)) -> SwitchConnection:
        connection = SwitchConnection(switch.address, DEVICE_ID, election_id)
        opened.append(connection)
        connection.connect()
        return connection

    yield open_one
    for connection in opened:
        connection.close()


def _load_live_helpers() -> types.ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location("switch_live_helpers",
                                                  Path(__file__).with_name("live_helpers.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Dataclasses look their module up in sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def live():
    """The helpers of live_helpers.py (importlib mode has no sibling imports)."""
    return _load_live_helpers()
