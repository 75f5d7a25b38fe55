"""The runs of the BCN study: seed 003 at two loads, seed 001 with and without 802.3x.

Each study is a scenario file under `scenarios/` and a list of seeds. Seed 003 reports one
run per load (its figures are one simulation's counts); seed 001's table has ten runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class Study:
    """A scenario run once per seed."""

    key: str
    title: str
    scenario: Path
    seeds: tuple[int, ...]


def studies(seeds_001: int = 10, seeds_003: int = 1) -> list[Study]:
    """Seed 003 at 50 % and 49 % load, seed 001 baseline and + 802.3x."""
    s003 = tuple(range(1, seeds_003 + 1))
    s001 = tuple(range(1, seeds_001 + 1))
    return [
        Study("003_50", "seed 003, 50 % offered load", SCENARIOS / "seed003_50pct.json", s003),
        Study("003_49", "seed 003, 49 % offered load", SCENARIOS / "seed003_49pct.json", s003),
        Study("001_baseline", "seed 001 baseline (BCN)", SCENARIOS / "seed001_baseline.json",
              s001),
        Study("001_8023x", "seed 001, BCN + 802.3x PAUSE", SCENARIOS / "seed001_8023x.json",
              s001),
    ]


# The seeds' figures.
SEED_003 = {  # (transmitted, received, dropped) frames in 5–95 ms
    "003_50": (149_978, 74_945, 74_611),
    "003_49": (146_966, 74_945, 71_598),
}
SEED_001_MEAN_FI = 0.97
SEED_001_MEAN_MAX_DEVIATION = 0.24
SEED_001_DROPS = {"001_baseline": (1406, 1380), "001_8023x": (0, 0)}
FAIR_SHARE_BPS = 2.5e9
LINK_BPS = 10e9
XOFF_BYTES = 140_800

WINDOW_003_NS = (5 * NS_PER_MS, 95 * NS_PER_MS)
WINDOW_001_NS = (5 * NS_PER_MS, 85 * NS_PER_MS)
# The congested link is judged from here on: the first millisecond after the sources start
# fills the queue and installs the limiters.
EGRESS_FROM_NS = 6 * NS_PER_MS
