"""TCP in the simulator: TCP segments (data and ACKs, SYNs included) per second of wall
time through buffer_switch.p4 in `bufferlab-sim`, for the example scenario
(experiments/scenario/examples/tcp_ecn.json: two DCTCP flows and a CUBIC one at
10 Gbit/s with ECN marking), for a seed-004-shaped path (one CUBIC linux-2010 bulk
flow, 10 Gbit/s, 50 ms RTT, 1 s of virtual time), and one trial of the seed-004 study in
virtual time (`esnet_buffer --backend virtual`: buffer_2g at 36 MB, linux-2010, 1 s of
background lead, 0.5 s left out, 2 s measured), switch programming included.

Switch programming is outside the timed part; the run is inside. Prints one JSON line.
"""

import json
import sys
import time
from pathlib import Path

from bufferlab.experiments.scenario import build_simulation, load_scenario, parse_scenario

EXAMPLE = Path(__file__).resolve().parent.parent / "experiments" / "scenario" / "examples" / "tcp_ecn.json"


def timed(scenario) -> tuple[float, int, int, float]:
    """Wall seconds, TCP segments both ways, frame-hops, virtual seconds of one run."""
    sim = build_simulation(scenario)
    start = time.perf_counter()
    sim.run(scenario.duration_ns)
    wall = time.perf_counter() - start
    results = sim.results()
    segments = sum(row["segments_sent"] + row["acks_received"] + 1 for row in results.tcp.values())
    return wall, segments, results.run["frame_hops"], scenario.duration_ns / 1e9


def seed004_trial() -> dict[str, float]:
    """Wall time of one short seed-004 trial in virtual time, and virtual s per wall s."""
    from dataclasses import replace

    from bufferlab.experiments.esnet_buffer.config import VIRTUAL_QUICK
    from bufferlab.experiments.esnet_buffer.runner import virtual_trials
    from bufferlab.experiments.esnet_buffer.virtual_time import run_virtual_trial

    config = replace(VIRTUAL_QUICK, trial_s=2.0, omit_s=0.5, profiles=("linux-2010",))
    trial = next(t for t in virtual_trials(config)
                 if t.spec.table == "buffer_2g" and t.spec.seed_setting == 36_000_000)
    start = time.perf_counter()
    run_virtual_trial(trial)
    wall = time.perf_counter() - start
    return {"seed004_trial_wall_s": round(wall, 3),
            "seed004_trial_virtual_per_wall": round(trial.end_ns / 1e9 / wall, 3)}


def main() -> int:
    """Run both cases once and print one JSON line."""
    figures: dict[str, float] = {}
    dctcp = load_scenario(EXAMPLE)
    wall, segments, hops, virtual = timed(dctcp)
    figures["dctcp_example_wall_s"] = round(wall, 3)
    figures["dctcp_example_tcp_segments_per_s"] = round(segments / wall)
    figures["dctcp_example_frame_hops_per_s"] = round(hops / wall)
    data = json.loads(EXAMPLE.read_text())
    for link in data["topology"]["links"]:
        link["delay_ns"] = 12_500_000  # two links each way: RTT 50 ms
    data["tcp_flows"] = [{"name": "bulk", "sender": "h1", "receiver": "h3",
                          "profile": "linux-2010", "receive_window_bytes": 64 << 20}]
    data["duration_ns"] = 1_000_000_000
    long_path = parse_scenario(data, EXAMPLE.parent, "cubic_50ms_rtt")
    wall, segments, hops, virtual = timed(long_path)
    figures["cubic_50ms_rtt_wall_s"] = round(wall, 3)
    figures["cubic_50ms_rtt_tcp_segments_per_s"] = round(segments / wall)
    figures["cubic_50ms_rtt_virtual_per_wall"] = round(virtual / wall, 3)
    figures.update(seed004_trial())
    print(json.dumps({"bench": "sim_tcp", **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
