"""Running a scenario in virtual time: program each switch over P4Runtime, build the
network, run it, and read what the switches counted."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

from bufferlab.controller.runtime_json import load_runtime, program_switch
from bufferlab.experiments.common.buffer_engine import (
    CompiledProgram,
    compiled_program,
    program_over_p4runtime,
    programmed_engine,
)
from bufferlab.experiments.scenario.spec import Scenario, SwitchSpec
from bufferlab.sim import Results, Simulator, SwitchEngine, build_from_topology

#: buffer_switch.p4's counters read after a run: name → how a cell is indexed (queue 0).
PROGRAM_COUNTERS = {"port_drops": "port", "bcn_frames": "port*8", "ecn_marked": "port*8", "pause_frames": "port",
                    "xon_frames": "port"}


@dataclass(frozen=True)
class ScenarioRun:
    """A finished run: the simulator's results, per switch and linked port the P4 program's
    counters and the port's peak queue (`{switch: {port: {"port_drops_frames": n,
    "max_queue_bytes": b, ...}}}`), and the wall time the run took."""

    results: Results
    ports: dict[str, dict[int, dict[str, int]]]
    wall_s: float


def _program(spec: SwitchSpec) -> CompiledProgram:
    return compiled_program(spec.program) if spec.program is not None else compiled_program()


def _engine(spec: SwitchSpec, seed: int) -> SwitchEngine:
    program = _program(spec)
    if spec.config is not None:
        return programmed_engine(spec.config, program, seed=seed, engine_class=SwitchEngine)
    engine = SwitchEngine(program.json_text, seed=seed)
    runtime = load_runtime(spec.runtime_json, program.p4info)
    program_over_p4runtime(engine, program, lambda connection: program_switch(
        connection, runtime, program.json_text.encode()))
    return engine


def build_simulation(scenario: Scenario, seed: int | None = None) -> Simulator:
    """The scenario's network with every switch programmed, sources added, ready to run."""
    seed = scenario.seed if seed is None else seed
    engines = {name: _engine(spec, seed) for name, spec in scenario.switches.items()}
    sim = build_from_topology(
        scenario.topology, engines, seed,
        latency_ns={name: spec.latency_ns for name, spec in scenario.switches.items()})
    for source in scenario.sources:
        # A Python reaction model keeps state: each run gets its own copy.
        sim.add_source(copy.deepcopy(source))
    for flow in scenario.tcp_flows:
        sim.add_tcp_flow(flow)
    if scenario.record_interval_ns:
        sim.record_every(scenario.record_interval_ns)
    return sim


def port_figures(sim: Simulator) -> dict[str, dict[int, dict[str, int]]]:
    """Per switch and linked port: the P4 program's drop and feedback counters (those of
    `PROGRAM_COUNTERS` the program has) and the traffic manager's peak queue. On the TNA
    port PAUSE/PFC is the TM's, not a P4 counter: a port's `pause_frames` are the non-zero
    ones its peer received (a host's count; a switch peer's every PAUSE received, which in
    the lab's topologies come from one neighbour)."""
    results = sim.results()
    out: dict[str, dict[int, dict[str, int]]] = {}
    for name, engine in sim.switches.items():
        peers = {p: peer for link in sim.links() for (n, p), peer in (link, link[::-1])
                 if n == name and p is not None}
        present = {counter.rsplit(".", 1)[-1] for counter in engine.counter_names()}
        tofino = bool(engine.tm_info()["cell_bytes"])
        figures: dict[int, dict[str, int]] = {}
        for port in sorted(peers):
            cells = {"max_queue_bytes": int(engine.port_stats(port)["max_occupancy_bytes"])}
            for counter, indexing in PROGRAM_COUNTERS.items():
                if counter in present:
                    index = port * 8 if indexing == "port*8" else port
                    cells[f"{counter.removesuffix('_frames')}_frames"] = int(
                        engine.counter_read(counter, index)[0])
            if tofino and "pause_frames" not in present:
                cells["pause_frames"] = _pause_received(sim, results, peers[port][0])
            figures[port] = cells
        out[name] = figures
    return out


def _pause_received(sim: Simulator, results: Results, peer: str) -> int:
    """Non-zero PAUSE/PFC frames node ``peer`` received."""
    if peer in sim.switches:
        stats = sim.switches[peer].stats()
        return int(stats["pause_frames"]) + int(stats["pause_frames_ignored"])
    return int(results.hosts[peer]["pause_frames"])


def run_scenario(scenario: Scenario, seed: int | None = None,
                 progress: Callable[[int], object] | None = None) -> ScenarioRun:
    """Builds and runs ``scenario`` for its duration; ``progress(now_ns)`` now and then."""
    sim = build_simulation(scenario, seed)
    start = time.monotonic()
    sim.run(scenario.duration_ns, progress)
    wall = time.monotonic() - start
    return ScenarioRun(sim.results(), port_figures(sim), wall)
