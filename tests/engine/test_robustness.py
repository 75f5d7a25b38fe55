"""Bad input never crashes the engine: random frames (any length, any port)
through every fixture program, and randomly damaged JSON documents."""

import json
import random

import pytest
from engine_helpers import FIXTURES

from bufferlab.switch import Engine, LoadError

FIXTURE_NAMES = ["l3", "meta", "tables", "parser"]


def random_frames(rng, n):
    for _ in range(n):
        size = rng.choice([0, 1, 5, 13, 14, 15, 20, 34, 40, 60, 64, 200, 1500])
        yield bytes(rng.getrandbits(8) for _ in range(size))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_random_frames_never_crash(name):
    rng = random.Random(name)
    e = Engine(FIXTURES / f"{name}.json")
    for i, frame in enumerate(random_frames(rng, 300)):
        e.send(rng.randrange(0, 512), frame, i * 100)
    e.drain()
    out = e.received()
    s = e.stats()
    assert s["received"] == 300
    assert len(out) == s["transmitted"]


def damage(doc, rng):
    """Replaces one random value deep in the document with a wrong-typed one."""
    node = doc
    path = []
    while isinstance(node, dict | list) and node:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
        if rng.random() < 0.25:
            break
    parent, key = path[-1]
    parent[key] = rng.choice([None, 7, -1, "nope", [], {}, [1, 2], {"type": "field"}, True, "0xzz"])


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_damaged_json_loads_or_fails_cleanly(name):
    rng = random.Random(f"damage-{name}")
    text = (FIXTURES / f"{name}.json").read_text()
    failures = 0
    for _ in range(150):
        doc = json.loads(text)
        damage(doc, rng)
        try:
            e = Engine(json.dumps(doc))
        except LoadError as exc:
            failures += 1
            assert str(exc)
            continue
        # What loads must also run.
        for i, frame in enumerate(random_frames(rng, 5)):
            e.send(1, frame, i)
        e.drain()
    assert failures > 0


def test_random_frames_through_compiled_programs():
    from pathlib import Path

    from bufferlab.compiler import compile as compile_p4

    rng = random.Random("compiled")
    for program in sorted((Path(__file__).resolve().parents[2] / "tests" / "p4").glob("*.p4")):
        doc, _ = compile_p4(program)
        e = Engine(json.dumps(doc))
        e.set_cpu_port(255)
        for i, frame in enumerate(random_frames(rng, 40)):
            e.send(rng.choice([0, 1, 2, 3, 255]), frame, i * 1000)
        e.drain()
        assert e.stats()["received"] == 40, program.name
