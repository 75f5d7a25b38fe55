"""A scenario in virtual time (`bufferlab-sim`, the TCP host models), measured as the live
world measures it: goodput between ``omit_s`` after each flow's start and the end, as
iperf3 counts after -O; the P4 admission's drops over the whole run."""

from __future__ import annotations

from bufferlab.experiments.scenario import Scenario, build_simulation
from bufferlab.experiments.tcp_validation.measure import FlowResult, RunResult
from bufferlab.sim import Simulator

NS_PER_S = 1_000_000_000
#: buffer_switch.p4's per-port admission drop counter.
ADMISSION_COUNTER = "port_drops"


def counted_from_ns(scenario: Scenario, omit_s: int) -> int:
    """Where the counted window begins: ``omit_s`` after the last flow's start, ns."""
    starts = [f.start_ns for f in scenario.tcp_flows] or [0]
    begin = max(starts) + omit_s * NS_PER_S
    if begin >= scenario.duration_ns:
        raise ValueError(f"omit_s: {omit_s} s after the flows start leaves nothing of the "
                         f"{scenario.duration_ns / 1e9:g}-s run to count")
    return begin


def _ports(sim: Simulator, switch: str) -> list[int]:
    return sorted({p for link in sim.links() for n, p in link if n == switch and p is not None})


def admission_and_losses(sim: Simulator) -> tuple[int, dict[str, int]]:
    """Frames the P4 admission dropped (every switch and port), and every other loss."""
    results = sim.results()
    admission = 0
    losses: dict[str, int] = {}
    for name, engine in sim.switches.items():
        dropped = sum(int(engine.counter_read(ADMISSION_COUNTER, p)[0])
                      for p in _ports(sim, name))
        admission += dropped
        counters = results.switches[name]
        for where, n in (("P4 drops other than admission",
                          counters["dropped_by_program_frames"] - dropped),
                         ("traffic manager", counters["dropped_by_tm_frames"]),
                         ("unconnected port", counters["unconnected_port_frames"])):
            if n:
                losses[f"{name} {where}"] = n
    for name, source in results.sources.items():
        if source["dropped_frames"]:
            losses[f"{name} host queue"] = source["dropped_frames"]
    return admission, losses


def run_virtual(scenario: Scenario, omit_s: int) -> RunResult:
    """Runs ``scenario`` in virtual time; bulk flows' goodput over the counted window,
    finite flows' over their lifetime (first SYN to last byte)."""
    begin = counted_from_ns(scenario, omit_s)
    sim = build_simulation(scenario)
    sim.run(begin)
    before = {name: row["delivered_bytes"] for name, row in sim.results().tcp.items()}
    retrans = {name: row["retransmitted_segments"] for name, row in sim.results().tcp.items()}
    sim.run(scenario.duration_ns)
    results = sim.results()
    flows = []
    for flow in scenario.tcp_flows:
        row = results.tcp[flow.name]
        if flow.bytes is None:
            flows.append(FlowResult(flow.name, row["delivered_bytes"] - before[flow.name],
                                    (scenario.duration_ns - begin) / NS_PER_S,
                                    row["retransmitted_segments"] - retrans[flow.name]))
        else:
            end = row["last_byte_received_ns"]
            seconds = ((end - flow.start_ns) / NS_PER_S if end is not None else
                       (scenario.duration_ns - flow.start_ns) / NS_PER_S)
            flows.append(FlowResult(flow.name, row["delivered_bytes"], seconds,
                                    row["retransmitted_segments"]))
    admission, losses = admission_and_losses(sim)
    timeouts = sum(r["timeouts"] for r in results.tcp.values())
    return RunResult("virtual", tuple(flows), admission, losses,
                     {"tcp_timeouts": float(timeouts)})
