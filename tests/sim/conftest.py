"""Fixtures of the simulator tests: seed 003's scenario, shortened so a run takes ~0.1 s."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from bufferlab.experiments.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]
#: Seed 003 at 50 % load: ep0..ep3 (EP0..EP3) → s1 → ep4 at 10 Gbit/s, bare frames.
SEED003 = ROOT / "experiments" / "bcn" / "scenarios" / "seed003_50pct.json"


def shortened(duration_ns: int, stop_ns: int | None = None, **fields: object) -> Scenario:
    """Seed 003's scenario run for ``duration_ns``; the sources that stop (EP0, EP1) stop at
    ``stop_ns`` instead of 95 ms; ``fields`` replace fields of every source."""
    scenario = load_scenario(SEED003)
    scenario.duration_ns = duration_ns
    sources = []
    for source in scenario.sources:
        changes = dict(fields)
        if source.stop_ns is not None:
            changes["stop_ns"] = stop_ns
        sources.append(dataclasses.replace(source, **changes))
    scenario.sources = sources
    return scenario


@pytest.fixture
def seed003() -> Callable[..., Scenario]:
    """`shortened`: seed 003's scenario with a shorter run."""
    return shortened
