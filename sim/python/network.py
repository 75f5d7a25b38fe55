"""Building and running a simulated network from Python.

    sim = Simulator(seed=1)
    s1 = SwitchEngine(json_text)          # program it over P4Runtime, like any Engine
    sim.add_switch("s1", s1, latency_ns=1_000)
    sim.add_host("h1", "08:00:00:00:01:01", "10.0.1.1")
    sim.connect(("h1", None), ("s1", 1), rate_bps=10**10, delay_ns=500)
    sim.add_source(Source("S1", "h1", "h5", pattern="bernoulli", load=0.45))
    sim.record_every(100_000)
    sim.capture("h5")                     # optional: every data frame h5 receives
    sim.run(200_000_000)
    results = sim.results()
    frames = sim.captured("h5")           # flow, seq, tx_ns, rx_ns per frame

`build_from_topology` does the hosts and links from a topology file (the tutorials'
`topology.json` with link rates, as `bufferlab.mininet` reads it for a live network).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bufferlab.mininet.topology import Topology
from bufferlab.sim import _sim
from bufferlab.sim.results import Results
from bufferlab.sim.tcp import TcpFlow
from bufferlab.switch.engine import EngineApi

#: Bytes a link adds to each frame by default: preamble and SFD 8, gap 12, FCS 4.
ETHERNET_WIRE_OVERHEAD_BYTES = 24

#: One captured frame as `Simulator.captured` returns it (the native layout, little-endian).
CAPTURED_FRAME = np.dtype([("flow", "<u4"), ("seq", "<u4"), ("tx_ns", "<u8"), ("rx_ns", "<u8")])


class SwitchEngine(EngineApi, _sim.Engine):
    """A switch engine the simulator can run; the same API as `bufferlab.switch.Engine`,
    so `EngineTarget` and P4Runtime program it as any switch."""


@dataclass(frozen=True)
class BcnReaction:
    """The BCN reaction point's parameters (congestion.md §1.4): Gi, Gd per 64-byte page,
    Ru in bit/s, |Fb| saturation in pages, the lowest regulated rate in bit/s; then the
    2006 features, each off when None (experiments/bcn/README.md has their sources):
    the largest cut and increase as fractions of R; self-increase of ``drift_step_bps``
    every ``drift_interval_ns``; ``severe="stop"`` for BCN(0,0) (stop up to
    ``backoff_max_ns``, restart at ``restart_rate_bps``); |Fb| in ``fb_bits`` bits over
    ``fb_range_pages`` (default Fbmax); ``positive_from="any"`` congestion point rather
    than the tagged one; ``initial_rate="current"`` (measured over ``rate_window_ns``)
    rather than the line rate."""

    gi: float = 0.53
    gd_per_page: float = 2.6e-4
    ru_bps: float = 1e6
    fb_max_pages: int = 1875
    min_rate_bps: float = 1e6
    max_decrease: float | None = None
    max_increase: float | None = None
    drift_interval_ns: int | None = None
    drift_step_bps: float | None = None
    severe: str | None = None
    backoff_max_ns: int | None = None
    restart_rate_bps: float | None = None
    fb_bits: int | None = None
    fb_range_pages: int | None = None
    positive_from: str | None = None
    initial_rate: str | None = None
    rate_window_ns: int | None = None

    def features(self) -> dict[str, Any]:
        """The features that are on, by keyword."""
        gains = {"gi", "gd_per_page", "ru_bps", "fb_max_pages", "min_rate_bps"}
        return {k: v for k, v in asdict(self).items() if k not in gains and v is not None}


@dataclass(frozen=True)
class Source:
    """A traffic source on a host and what it does with feedback.

    ``pattern`` is ``"constant"`` (frames back to back at ``rate_bps``, wire overhead
    counted) or ``"bernoulli"`` (each slot of one frame time at the host's link rate
    carries a frame with probability ``load``). ``sizes`` are (bytes, weight) pairs,
    bytes as the switch receives them (no FCS). ``on_ns``/``off_ns`` gate the pattern
    (``exponential`` periods with those means). The rate-limiter queue of ``rlq_bytes``
    is the host's buffer for this source: when full, a frame is dropped
    (``when_full="drop"``) or the source waits (``"backpressure"``). ``reaction`` is
    None, a `BcnReaction`, or a Python reaction model (see `bufferlab.sim.reaction`),
    applied ``response_ns`` after a feedback frame arrives.
    """

    name: str
    host: str
    destination: str
    pattern: str = "constant"
    rate_bps: int | None = None
    load: float | None = None
    sizes: Sequence[tuple[int, int]] = ((1500, 1),)
    on_ns: int | None = None
    off_ns: int | None = None
    exponential: bool = False
    start_ns: int = 0
    stop_ns: int | None = None
    dscp: int = 0
    priority: int = 0
    udp_ports: tuple[int, int] = (5000, 5000)
    rlq_bytes: int = 150_000
    when_full: str = "drop"
    reaction: BcnReaction | Any | None = None
    response_ns: int = 0

    def arguments(self) -> dict[str, Any]:
        """The native simulator's keyword arguments for this source."""
        args: dict[str, Any] = {
            "pattern": self.pattern, "sizes": [tuple(s) for s in self.sizes],
            "rate_bps": self.rate_bps, "load": self.load, "on_ns": self.on_ns,
            "off_ns": self.off_ns, "exponential": self.exponential, "start_ns": self.start_ns,
            "stop_ns": self.stop_ns, "dscp": self.dscp, "priority": self.priority,
            "udp_ports": tuple(self.udp_ports), "rlq_bytes": self.rlq_bytes,
            "when_full": self.when_full, "response_ns": self.response_ns,
        }
        if isinstance(self.reaction, BcnReaction):
            args.update(reaction="bcn", **asdict(self.reaction))
        elif self.reaction is not None:
            args["hook"] = self.reaction
        return args


class Simulator:
    """A network in virtual time: switches, hosts, links, sources; run, then read results."""

    def __init__(self, seed: int = 0) -> None:
        """An empty network; ``seed`` seeds every source's random stream."""
        self.seed = seed
        self._native = _sim.Simulator(seed)
        self.switches: dict[str, SwitchEngine] = {}
        self.sources: list[Source] = []
        self._links: list[tuple[tuple[str, int | None], tuple[str, int | None]]] = []

    @property
    def now_ns(self) -> int:
        """Virtual time, ns."""
        return self._native.now_ns

    def add_switch(self, name: str, engine: SwitchEngine, latency_ns: int = 0) -> None:
        """Adds a switch; frames enter its pipeline ``latency_ns`` after their last bit arrived."""
        self._native.add_switch(name, engine, latency_ns)
        self.switches[name] = engine

    def add_host(self, name: str, mac: str, ip: str) -> None:
        """Adds a host with a MAC and an IPv4 address."""
        self._native.add_host(name, mac, ip)

    def connect(self, a: tuple[str, int | None], b: tuple[str, int | None], rate_bps: int,
                delay_ns: int = 0, wire_overhead_bytes: int = ETHERNET_WIRE_OVERHEAD_BYTES,
                honour_pause: bool = True) -> None:
        """Links two ends, ``(switch, port)`` or ``(host, None)``, both ways alike."""
        self._native.connect(a, b, rate_bps, delay_ns, wire_overhead_bytes, honour_pause)
        self._links.append((a, b))

    def links(self) -> list[tuple[tuple[str, int | None], tuple[str, int | None]]]:
        """The linked ends, in the order they were connected."""
        return list(self._links)

    def add_source(self, source: Source) -> int:
        """Adds a source; returns its flow id."""
        flow = self._native.add_source(source.name, source.host, source.destination,
                                       **source.arguments())
        self.sources.append(source)
        return flow

    def add_tcp_flow(self, flow: TcpFlow) -> int:
        """Adds a TCP flow (its sender and receiver ends on two hosts); returns its index."""
        return _sim.add_tcp_flow(self._native, **flow.arguments())

    def record_every(self, interval_ns: int) -> None:
        """Samples every time series each ``interval_ns`` of virtual time."""
        self._native.record_every(interval_ns)

    def capture(self, host: str) -> None:
        """Makes ``host`` record every data frame it receives from now on (see `captured`)."""
        self._native.capture(host)

    def captured(self, host: str) -> np.ndarray:
        """The data frames ``host`` captured, in arrival order: a structured array of
        ``flow`` (the sending source's flow id), ``seq`` (its sequence number), ``tx_ns``
        (when the frame started onto its source's link) and ``rx_ns`` (when it arrived)."""
        return np.frombuffer(self._native.captured(host), dtype=CAPTURED_FRAME)

    def run(self, until_ns: int, progress: Callable[[int], object] | None = None) -> None:
        """Runs up to ``until_ns``; ``progress(now_ns)`` is called now and then."""
        self._native.run(until_ns, progress)

    def results(self) -> Results:
        """Counters and series as they stand."""
        times, series = self._native.series()
        events, hops, in_flight = self._native.run_stats()
        unconnected = dict(self._native.unconnected_frames())
        return Results.from_native(
            times_ns=times, series=series, sources=self._native.source_counters(),
            flows=self._native.flow_counters(), hosts=self._native.host_counters(),
            links=self._native.link_counters(),
            switches={name: _switch_counters(engine, unconnected[name])
                      for name, engine in self.switches.items()},
            run={"end_ns": self.now_ns, "events": events, "frame_hops": hops,
                 "frames_in_flight": in_flight, "seed": self.seed},
            tcp={row.pop("flow"): row for row in _sim.tcp_counters(self._native)})


def _switch_counters(engine: SwitchEngine, unconnected: int) -> dict[str, int]:
    stats = engine.stats()
    return {
        "received_frames": int(stats["received"]),
        "transmitted_frames": int(stats["transmitted"]),
        "dropped_by_program_frames": int(stats["dropped_by_program"]),
        "dropped_by_tm_frames": int(stats["dropped_by_tm"]),
        "pause_frames_honoured": int(stats["pause_frames"]),
        "unconnected_port_frames": unconnected,
    }


def build_from_topology(topology: Topology, engines: Mapping[str, SwitchEngine],
                        seed: int = 0, latency_ns: Mapping[str, int] | None = None,
                        honour_pause: bool = True) -> Simulator:
    """A simulator with ``topology``'s hosts, switches (``engines`` by name, each already
    programmed) and links; every link needs a rate (``rate_bps`` in the file)."""
    missing = sorted(set(topology.switches) - set(engines))
    if missing:
        raise ValueError(f"switches {missing}: no engine given")
    sim = Simulator(seed)
    for name in topology.switches:
        sim.add_switch(name, engines[name], (latency_ns or {}).get(name, 0))
    for host in topology.hosts.values():
        sim.add_host(host.name, host.mac, host.ip)
    for link in topology.links:
        if link.model.rate_bps <= 0:
            raise ValueError(f"link {link.a.node}-{link.b.node}: a simulated link needs rate_bps")
        sim.connect((link.a.node, link.a.port), (link.b.node, link.b.port),
                    rate_bps=link.model.rate_bps, delay_ns=link.model.delay_ns,
                    wire_overhead_bytes=link.model.wire_overhead_bytes,
                    honour_pause=honour_pause)
    return sim
