"""Fixed workloads whose machine instructions `instructions.py` counts: the same work every
run, so the count is the same every run and a busy machine cannot move it.

`python bench/tools/workload.py NAME SCALE` runs workload NAME SCALE times as long and
prints one JSON line with the units of work done (`{"units": N}`): frame-hops for `sim`,
packets for the engine's. The counted functions are the simulator's `run_until` and the
engine's `send_repeated` and `advance`, so set-up (compiling, loading, table entries) is
outside the count.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

# Functions whose instructions count (callgrind's --toggle-collect patterns), per workload.
# Each pattern toggles collection on entry and again on return, so no counted function may
# run inside another: the engine's are the Python entry points (pyo3's wrappers), which
# Python calls one at a time. Patterns matching the Rust methods too (`*send_repeated*`)
# switched collection off inside them, and which half of the packet path counted then
# depended on the compiler's inlining.
ENGINE = ["*__pymethod_send_repeated__*", "*__pymethod_advance__*"]
COUNTED = {
    "sim": ["*Simulator*run_until*"],
    "engine_l2_64B": ENGINE,
    "engine_l3_64B": ENGINE,
}
# What one unit of each workload is.
UNIT = {"sim": "frame-hop", "engine_l2_64B": "packet", "engine_l3_64B": "packet"}
# 15 ms of seed003_50pct (200 ms, 161,000 frame-hops through buffer_switch.p4): about
# 12,000 frame-hops per scale step.
SIM_SLICE_NS = 15_000_000
BATCH = 5_000


def sim(scale: int) -> int:
    """Runs seed003_50pct for `scale` slices; the frame-hops."""
    from bufferlab.experiments.scenario import build_simulation, load_scenario

    scenario = load_scenario(ROOT / "experiments" / "bcn" / "scenarios" / "seed003_50pct.json")
    simulation = build_simulation(scenario)
    simulation.run(SIM_SLICE_NS * scale)
    return int(simulation.results().run["frame_hops"])


def engine(frame: bytes, scale: int) -> int:
    """Sends `scale` batches of `frame` through engine_pps's router; the packets sent."""
    import engine_pps

    e = engine_pps.engine()
    for r in range(scale):
        e.send_repeated(1, frame, BATCH, r * BATCH * 1000, 1000)
        e.advance((r + 1) * BATCH * 1000)
        e.discard_received()
    return scale * BATCH


def main() -> int:
    """Run the workload named on the command line and print its units."""
    name, scale = sys.argv[1], int(sys.argv[2])
    if name == "sim":
        units = sim(scale)
    else:
        import engine_pps

        build = engine_pps.l2_frame if name == "engine_l2_64B" else engine_pps.ipv4_frame
        units = engine(build(64), scale)
    print(json.dumps({"units": units}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
