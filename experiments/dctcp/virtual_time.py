"""A cell in virtual time: one switch running `p4src/buffer_switch.p4` (programmed by the
controller over P4Runtime), the receiver `r` on port 1, the long-flow hosts `l1`, `l2`, …
and the incast servers `q1` … `qN` on the ports after it, every link at the config's rate
and propagation delay, every host running `traffic/hosts`' TCP with the cell's algorithm.

DCTCP cells program the switch to mark CE above K bytes (`ecn_k_bytes`, the
`ecn_threshold` table) and run the `dctcp` profile (ECN, DCTCP's α, g = 1/16); CUBIC cells
run `linux-today` (CUBIC, SACK, RACK-TLP) through the same switch with no marking, so the
buffer's tail drop is their only signal. Every response of an incast query is a fresh
connection (SYN, initial window 10) opened at the query's instant.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bufferlab.controller.config import parse_config
from bufferlab.experiments.common.buffer_engine import host_mac
from bufferlab.experiments.dctcp.backend import (
    INCAST,
    TRACE_POINTS,
    Cell,
    CellResult,
    Query,
    QueueStats,
)
from bufferlab.experiments.dctcp.config import ALGORITHMS, DctcpConfig
from bufferlab.experiments.scenario import Scenario, SwitchSpec, build_simulation
from bufferlab.experiments.scenario.run import port_figures
from bufferlab.mininet.topology import parse_topology
from bufferlab.sim import Results, TcpFlow

SWITCH = "s1"
SWITCH_ID = 1
RECEIVER, RECEIVER_PORT = "r", 1
WIRE_OVERHEAD_BYTES = 24


def hosts(cell: Cell) -> dict[str, int]:
    """Host name → its switch port: the receiver, the long-flow hosts, the servers."""
    long = {f"l{i + 1}": 2 + i for i in range(cell.config.long_flows)}
    first = 2 + cell.config.long_flows
    servers = {f"q{j + 1}": first + j for j in range(cell.senders)}
    return {RECEIVER: RECEIVER_PORT, **long, **servers}


def query_starts_ns(config: DctcpConfig) -> list[int]:
    """When each query's responses start, ns."""
    return [config.warmup_ns + q * config.query_interval_ns for q in range(config.queries)]


def response_bytes(config: DctcpConfig, senders: int) -> list[int]:
    """Each server's share of a query's bytes (the remainder to the first ones)."""
    base, extra = divmod(config.query_bytes, senders)
    return [base + (1 if j < extra else 0) for j in range(senders)]


def duration_ns(cell: Cell) -> int:
    """How long the cell runs, ns."""
    c = cell.config
    if cell.kind == INCAST:
        return c.warmup_ns + c.queries * c.query_interval_ns + c.tail_ns
    return c.warmup_ns + c.long_window_ns


def window_ns(cell: Cell) -> tuple[int, int]:
    """The measured window: the long flows' goodput and the queue, ns."""
    c = cell.config
    if cell.kind == INCAST:
        return c.warmup_ns, c.warmup_ns + c.queries * c.query_interval_ns
    return c.warmup_ns, c.warmup_ns + c.long_window_ns


def cell_scenario(cell: Cell) -> Scenario:
    """The cell as a scenario: the network, the switch's config, every TCP flow."""
    c = cell.config
    ports = hosts(cell)
    topology = parse_topology({
        "hosts": {h: {"ip": f"10.0.{SWITCH_ID}.{p}/24", "mac": host_mac(SWITCH_ID, p)}
                  for h, p in ports.items()},
        "switches": {SWITCH: {}},
        "links": [{"a": h, "b": f"{SWITCH}-p{p}", "rate_bps": c.link_bps,
                   "delay_ns": c.link_delay_ns, "wire_overhead_bytes": WIRE_OVERHEAD_BYTES}
                  for h, p in ports.items()],
    })
    config = parse_config({
        "switch_id": SWITCH_ID, "pool_bytes": c.pool_bytes,
        "ecn_k_bytes": c.k_bytes if cell.algorithm == "dctcp" else None,
        "ports": {str(p): {} for p in ports.values()},
        "forwarding": {"l2": [{"mac": host_mac(SWITCH_ID, p), "port": p}
                              for p in ports.values()]},
    }, Path("."))
    profile = ALGORITHMS[cell.algorithm]
    common = {"profile": profile, "mss_bytes": c.mss_bytes, "rto_min_ns": c.rto_min_ns}
    if cell.algorithm == "cubic":
        # The paper's CUBIC fills the buffer in steady state. HyStart (on in linux-today,
        # as in Linux) ends slow start at 100 us RTTs on its ACK train, long before the
        # buffer is full, and CUBIC's growth after it takes longer than these windows.
        common["hystart"] = False
    flows = [TcpFlow(f"long{i + 1}", f"l{i + 1}", RECEIVER, start_ns=i * 10_000, **common)
             for i in range(c.long_flows)]
    if cell.kind == INCAST:
        sizes = response_bytes(c, cell.senders)
        flows += [TcpFlow(f"q{q}r{j + 1}", f"q{j + 1}", RECEIVER, bytes=sizes[j],
                          start_ns=start, **common)
                  for q, start in enumerate(query_starts_ns(c)) for j in range(cell.senders)]
    sample = c.incast_sample_ns if cell.kind == INCAST else c.long_sample_ns
    return Scenario(topology=topology, switches={SWITCH: SwitchSpec(SWITCH, config)},
                    sources=[], duration_ns=duration_ns(cell), record_interval_ns=sample,
                    seed=c.seed, name=cell.name, tcp_flows=flows)


def _queue_samples(results: Results, window: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    times = results.times_ns
    queue = results.series[f"switch/{SWITCH}/port/{RECEIVER_PORT}/queue_bytes"]
    inside = (times >= window[0]) & (times < window[1])
    if not inside.any():
        raise RuntimeError(f"no queue sample in {window} ns")
    return times[inside], queue[inside].astype(np.float64)


def queue_stats(results: Results, window: tuple[int, int]) -> QueueStats:
    """The receiver port's queue over ``window``, from the recorded samples."""
    _, queue = _queue_samples(results, window)
    p50, p95, p99 = np.percentile(queue, [50, 95, 99])
    return QueueStats(float(queue.mean()), float(p50), float(p95), float(p99),
                      float(queue.max()), int(queue.size))


def queue_trace(results: Results, window: tuple[int, int]) -> tuple[tuple[int, ...],
                                                                    tuple[int, ...]]:
    """Every k-th queue sample of ``window`` (at most TRACE_POINTS): times ns, bytes."""
    times, queue = _queue_samples(results, window)
    step = max(1, -(-times.size // TRACE_POINTS))
    return (tuple(int(t) for t in times[::step]), tuple(int(b) for b in queue[::step]))


def queries(cell: Cell, results: Results) -> tuple[Query, ...]:
    """Each query's completion time and its responses' timeouts and retransmissions."""
    out = []
    for q, start in enumerate(query_starts_ns(cell.config)):
        rows = [results.tcp[f"q{q}r{j + 1}"] for j in range(cell.senders)]
        done = [r["last_byte_received_ns"] for r in rows]
        complete = all(r["delivered_bytes"] == r["flow_bytes"] for r in rows)
        qct = max(done) - start if complete else None
        out.append(Query(start, qct, sum(r["timeouts"] for r in rows),
                         sum(r["retransmitted_segments"] for r in rows)))
    return tuple(out)


def run_cell(cell: Cell) -> CellResult:
    """Runs one cell (module-level, so grid workers can run it)."""
    sim = build_simulation(cell_scenario(cell))
    start = time.monotonic()
    sim.run(duration_ns(cell))
    wall = time.monotonic() - start
    results = sim.results()
    window = window_ns(cell)
    seconds = (window[1] - window[0]) / 1e9
    longs = [f"long{i + 1}" for i in range(cell.config.long_flows)]
    goodput = sum(results.between(f"tcp/{f}/delivered_bytes", *window) for f in longs)
    carried = results.between(f"link/{SWITCH}-p{RECEIVER_PORT}>{RECEIVER}/bytes", *window)
    port = port_figures(sim)[SWITCH][RECEIVER_PORT]
    tm = results.switches[SWITCH]["dropped_by_tm_frames"]
    return CellResult(
        cell=cell,
        bottleneck_bps=8 * carried / seconds,
        long_goodput_bps=8 * goodput / seconds,
        queue=queue_stats(results, window),
        drops_frames=int(port["port_drops_frames"]) + int(tm),
        marked_frames=int(port["ecn_marked_frames"]),
        max_queue_bytes=int(port["max_queue_bytes"]),
        queries=queries(cell, results) if cell.kind == INCAST else (),
        long_timeouts=sum(results.tcp[f]["timeouts"] for f in longs),
        wall_s=wall,
        queue_trace=queue_trace(results, window),
    )
