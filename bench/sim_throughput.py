"""Simulator benchmark: frame-hops per second of wall time through buffer_switch.p4 in
`bufferlab-sim`, and each seed scenario's wall time.

A frame-hop is one frame handed to one switch (a frame crossing three switches is three).
Switch programming (P4Runtime) is outside the timed part; the run itself is inside. Prints
one JSON line of figures.
"""

import json
import sys
import time
from pathlib import Path

from bufferlab.experiments.scenario import build_simulation, load_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "experiments" / "bcn" / "scenarios"
RUNS = ("seed003_50pct", "seed003_49pct", "seed001_baseline", "seed001_8023x")


def main() -> int:
    """Run each scenario once and print one JSON line."""
    figures: dict[str, float] = {}
    hops_total = 0
    wall_total = 0.0
    for name in RUNS:
        scenario = load_scenario(SCENARIOS / f"{name}.json")
        sim = build_simulation(scenario)
        start = time.perf_counter()
        sim.run(scenario.duration_ns)
        wall = time.perf_counter() - start
        hops = sim.results().run["frame_hops"]
        figures[f"{name}_wall_s"] = round(wall, 3)
        figures[f"{name}_frame_hops_per_s"] = round(hops / wall)
        hops_total += hops
        wall_total += wall
    figures["frame_hops_per_s"] = round(hops_total / wall_total)
    print(json.dumps({"bench": "sim_throughput", **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
