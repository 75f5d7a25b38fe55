"""A scenario as the live world runs it: what each link, TCP flow and UDP source becomes
in Mininet (pure: no processes here, so every rule is unit-tested).

* **Links.** In the simulator a link's rate and delay hold both ways. Live, the kernel
  has no netem, so the switch's port model (rate, delay) shapes and delays what leaves
  the switch; the other way a host link gets an HTB class at the link's rate on the
  host's eth0 (the host's NIC), and its delay is folded onto the switch's side: the port
  towards the host delays by both ways' delay, so every round trip is the simulator's.
  A link between two switches is modelled by both ports: nothing to fold.
* **TCP flows** are the kernel's TCP, one iperf3 client and server per flow: the
  profile's congestion control (`linux-today` CUBIC, `newreno` Reno, `dctcp` DCTCP),
  `-M` for ``mss_bytes``, `--fq-rate` for ``pacing_bps``, the sender's route for the
  congestion control the connection starts with (`congctl`), the initial window and the
  minimum RTO, sysctls for ECN, SACK and RACK-TLP, the sender's eth0 ``gso_max_segs``
  for ``gso`` (1: segment by segment; Linux's 65,535 otherwise). TCP timestamps
  are off in every host: the host models send no TCP options on data segments, so the
  frames are the same size in both worlds. What has no live equivalent is refused,
  naming the key.
* **UDP sources** are bufferlab-gen: a constant source at ``rate_bps``, or with
  ``on_ns``/``off_ns`` the frames each on period holds, sent back to back once per
  period at the mean rate (the NIC's HTB lets them out at the link's rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from bufferlab.experiments.scenario import Scenario, ScenarioError
from bufferlab.mininet.topology import HostPacing, Link, Topology
from bufferlab.sim.tcp import TcpFlow

NS_PER_S = 1_000_000_000
#: Bytes the generator's frame sizes count besides the simulator's (the FCS).
FCS_BYTES = 4
#: The simulator's and the link's frame overhead the generator's line rate leaves out of
#: the frame (preamble and gap; the FCS is in its frame size).
LINE_EXTRA_BYTES = 20
#: Frames an HTB class lets out back to back (its burst and cburst).
HTB_BURST_FRAMES = 2
DEFAULT_MTU_BYTES = 1500
#: Congestion control the kernel runs for a profile's algorithm.
KERNEL_CONGESTION = {"cubic": "cubic", "newreno": "reno", "dctcp": "dctcp"}
#: A profile's algorithm.
PROFILE_ALGORITHM = {"linux-today": "cubic", "newreno": "newreno", "dctcp": "dctcp"}
#: The sender's eth0 gso_max_segs for a flow's ``gso``: one segment per buffer sends segment
#: by segment; 65,535 is the kernel's own (GSO_MAX_SEGS), buffers sized by the rate.
GSO_MAX_SEGS = {False: "1", True: "65535"}
#: Every TCP host's settings, whatever its flows: no timestamps (above), and socket
#: buffers that never bind on the paths these scenarios describe (16 MiB).
COMMON_SYSCTLS = {"net.ipv4.tcp_timestamps": "0",
                  "net.ipv4.tcp_rmem": "4096 131072 16777216",
                  "net.ipv4.tcp_wmem": "4096 16384 16777216"}
FIRST_IPERF_PORT = 5201


def live_topology(topology: Topology) -> Topology:
    """The topology Mininet brings up: host links' delay folded onto the switch port
    (twice the delay) and the host's NIC an HTB class at the link's rate (unless the
    link paces the host itself)."""
    links = []
    for link in topology.links:
        if link.a.is_switch_port and link.b.is_switch_port:
            links.append(link)
            continue
        model = replace(link.model, delay_ns=2 * link.model.delay_ns)
        pacing = link.host_pacing
        if pacing is None and link.model.rate_bps:
            mtu = link.mtu_bytes or DEFAULT_MTU_BYTES
            pacing = HostPacing(rate_bps=link.model.rate_bps,
                                burst_bytes=HTB_BURST_FRAMES * (mtu + 14))
        links.append(Link(link.a, link.b, model, pacing, link.mtu_bytes))
    return replace(topology, links=links)


def live_scenario(scenario: Scenario) -> Scenario:
    """``scenario`` with its live topology (`live_topology`)."""
    return replace(scenario, topology=live_topology(scenario.topology))


@dataclass(frozen=True)
class FlowPlan:
    """One TCP flow live: its hosts, iperf3 port, start (s after the trial's start) and
    the client's arguments beyond address, port and timing."""

    name: str
    sender: str
    receiver: str
    port: int
    start_s: float
    congestion: str
    bytes: int | None
    extra_argv: tuple[str, ...]


@dataclass(frozen=True)
class SourcePlan:
    """One UDP source live: hosts, start and run time (s), bufferlab-gen's rate (line
    bit/s), frame size (bytes with FCS), frames per departure, destination port."""

    name: str
    host: str
    destination: str
    start_s: float
    duration_s: float
    rate_bps: int
    frame_bytes: int
    burst_frames: int
    port: int
    dscp: int


@dataclass(frozen=True)
class LivePlan:
    """Everything a live run starts: flows, sources, each host's sysctls, its route
    options (`ip route` metrics such as initcwnd) and its eth0's link options (`ip link
    set`, such as gso_max_segs)."""

    flows: tuple[FlowPlan, ...]
    sources: tuple[SourcePlan, ...]
    sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    route_options: dict[str, dict[str, str]] = field(default_factory=dict)
    link_options: dict[str, dict[str, str]] = field(default_factory=dict)


def _setting(table: dict[str, dict[str, str]], host: str, name: str, value: str,
             key: str) -> None:
    """Sets ``name`` on ``host``; two flows asking the same host for different values is
    a ScenarioError at ``key``."""
    held = table.setdefault(host, {})
    if held.get(name, value) != value:
        raise ScenarioError(key, f"live: {host}'s {name} is {held[name]} for another flow; "
                                 f"this one needs {value} (one kernel per host)")
    held[name] = value


def _flow_plan(i: int, flow: TcpFlow, omit_s: int, duration_ns: int,
               plan: LivePlan) -> FlowPlan:
    key = f"tcp_flows[{i}]"
    if flow.profile not in PROFILE_ALGORITHM:
        raise ScenarioError(f"{key}.profile", f"live: {flow.profile!r} is not this kernel's "
                            f"TCP; live hosts run {', '.join(PROFILE_ALGORITHM)}")
    algorithm = flow.algorithm or PROFILE_ALGORITHM[flow.profile]
    for unsupported, why in (("receive_window_bytes", "Linux autotunes the receive window"),
                             ("delayed_ack", "Linux always delays ACKs")):
        if getattr(flow, unsupported) is not None:
            raise ScenarioError(f"{key}.{unsupported}", f"live: not available ({why})")
    if flow.prr is False:
        raise ScenarioError(f"{key}.prr", "live: Linux always reduces its window by PRR in "
                            "fast recovery")
    if flow.hystart is False:
        raise ScenarioError(f"{key}.hystart", "live: HyStart is tcp_cubic's module parameter, "
                            "one for the whole machine (not a host's)")
    if flow.bytes is None:
        seconds = (duration_ns - flow.start_ns) / NS_PER_S - omit_s
        if seconds < 1 or seconds != int(seconds):
            raise ScenarioError(f"{key}.start_ns", "live: a bulk flow runs whole seconds "
                                f"after omit_s, as iperf3's -t counts (here {seconds:g} s)")
    sender, receiver = flow.sender, flow.receiver
    tables = plan.sysctls
    ecn = flow.ecn if flow.ecn is not None else algorithm == "dctcp"
    if algorithm == "dctcp" and not ecn:
        raise ScenarioError(f"{key}.ecn", "DCTCP needs ECN")
    # Linux's default (2) answers an ECN request without making one: only the sender
    # of an ECN flow asks.
    _setting(tables, sender, "net.ipv4.tcp_ecn", "1" if ecn else "2", f"{key}.ecn")
    if flow.sack is not None:
        _setting(tables, sender, "net.ipv4.tcp_sack", "1" if flow.sack else "0", f"{key}.sack")
    if flow.rack_tlp is not None:
        for name, on in (("net.ipv4.tcp_recovery", "1"), ("net.ipv4.tcp_early_retrans", "3")):
            _setting(tables, sender, name, on if flow.rack_tlp else "0", f"{key}.rack_tlp")
    # The connection must start with its own congestion control: iperf3 sets
    # TCP_CONGESTION only after connect(), so the kernel's default (bbr on this machine)
    # initialises first, and bbr's init turns the socket's pacing on for good; the
    # "CUBIC" that follows is paced (2x / 1.2x cwnd/SRTT) and HyStart's ACK train waits
    # a whole RTT instead of half (README "Where the worlds differed"). The route's
    # congctl makes the kernel start with the flow's algorithm.
    _setting(plan.route_options, sender, "congctl", KERNEL_CONGESTION[algorithm],
             f"{key}.algorithm")
    if flow.initial_window_segments is not None:
        _setting(plan.route_options, sender, "initcwnd", str(flow.initial_window_segments),
                 f"{key}.initial_window_segments")
    if flow.rto_min_ns is not None:
        _setting(plan.route_options, sender, "rto_min",
                 f"{math.ceil(flow.rto_min_ns / 1_000_000)}ms", f"{key}.rto_min_ns")
    if flow.gso is not None:
        _setting(plan.link_options, sender, "gso_max_segs", GSO_MAX_SEGS[flow.gso],
                 f"{key}.gso")
    extra: list[str] = []
    if flow.mss_bytes is not None:
        extra += ["--set-mss", str(flow.mss_bytes)]
    if flow.pacing_bps is not None:
        extra += ["--fq-rate", str(flow.pacing_bps)]
    if flow.dscp:
        extra += ["--tos", str(flow.dscp << 2)]
    return FlowPlan(flow.name, sender, receiver, FIRST_IPERF_PORT + i,
                    flow.start_ns / NS_PER_S, KERNEL_CONGESTION[algorithm], flow.bytes,
                    tuple(extra))


def _source_plan(i: int, scenario: Scenario) -> SourcePlan:
    source = scenario.sources[i]
    key = f"sources[{i}]"
    if source.pattern != "constant":
        raise ScenarioError(f"{key}.pattern", "live: bufferlab-gen's slotted Bernoulli "
                            "arrivals are not the simulator's; use a constant source")
    if source.reaction is not None:
        raise ScenarioError(f"{key}.reaction", "live: a reaction model is run by the host "
                            "agents (traffic/agents), not here")
    if len(source.sizes) != 1 or source.exponential:
        raise ScenarioError(f"{key}.sizes_bytes", "live: one frame size and fixed on/off "
                            "periods")
    size = source.sizes[0][0]
    assert source.rate_bps is not None  # a constant source has its rate (spec.py)
    wire_ns = (size + FCS_BYTES + LINE_EXTRA_BYTES) * 8 * NS_PER_S / source.rate_bps
    rate, burst = source.rate_bps, 1
    if source.on_ns is not None or source.off_ns is not None:
        on, off = source.on_ns or 0, source.off_ns or 0
        burst = math.floor(on / wire_ns + 1e-9)
        if burst < 1 or off <= 0:
            raise ScenarioError(f"{key}.on_ns", "live: an on period holds at least one "
                                "frame and an off period follows it")
        rate = round(burst * (size + FCS_BYTES + LINE_EXTRA_BYTES) * 8 * NS_PER_S / (on + off))
    stop = source.stop_ns if source.stop_ns is not None else scenario.duration_ns
    return SourcePlan(source.name, source.host, source.destination,
                      source.start_ns / NS_PER_S, (stop - source.start_ns) / NS_PER_S, rate,
                      size + FCS_BYTES, burst, source.udp_ports[1], source.dscp)


def live_plan(scenario: Scenario, omit_s: int) -> LivePlan:
    """What the live world starts for ``scenario``; ScenarioError naming the key for what
    it cannot run."""
    plan = LivePlan((), ())
    for host in {f.sender for f in scenario.tcp_flows} | {f.receiver for f in scenario.tcp_flows}:
        for name, value in COMMON_SYSCTLS.items():
            _setting(plan.sysctls, host, name, value, "tcp_flows")
    flows = tuple(_flow_plan(i, f, omit_s, scenario.duration_ns, plan)
                  for i, f in enumerate(scenario.tcp_flows))
    sources = tuple(_source_plan(i, scenario) for i in range(len(scenario.sources)))
    ports = [s.port for s in sources]
    if len(set(ports)) != len(ports):
        raise ScenarioError("sources", "live: each UDP source needs its own destination port "
                                       "(one bufferlab-recv each)")
    return replace(plan, flows=flows, sources=sources)
