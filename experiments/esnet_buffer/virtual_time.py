"""Virtual time: the study's network in `bufferlab-sim` at the seed's own scale (k = 1).

The network is the live lab's (`network.py`): four hosts, s41 and s42 running
`p4src/buffer_switch.p4`, each programmed by the controller over P4Runtime from
`switch_config`, the bottleneck s41's port 5 at 10 Gbit/s with 24 bytes of wire overhead
per frame, its queue capped by the P4 admission at the buffer under test (tail drop) or,
for a hold queue, by the traffic manager's depth in packets. What the live lab's tools
did, the host models do:

* **TCP**: two flows (`iperf3 -P 2`) from `snd` to `rcv`, `traffic/hosts`' TCP with the
  trial's profile (`linux-2010`: CUBIC, SACK, no RACK/TLP, IW 3), MSS 8,960 bytes (a
  9000-byte MTU less 40 bytes of headers), each receiver advertising 3/4 of the 64 MiB
  buffer (Linux 2.6's tcp_adv_win_scale). They start `lead_s` after the background; the
  throughput is what reached the receiver between `omit_s` after the start and `trial_s`
  later, as iperf3 counts after -O.
* **RTT**: 12.5 ms of propagation on `snd`'s and on `rcv`'s link, each way: 50 ms.
* **Sender's NIC**: `snd`'s link at the link rate (the seed's 10 Gbit/s NICs), or for a
  paced trial at the paced rate scaled by 9,038 / 9,014, so a frame takes as long as the
  HTB class lets it out (HTB counts a frame's 9,014 Linux bytes, the link 24 more).
* **UDP background**: `udp` sends 9000-byte frames (8,996 bytes without FCS) to `sink`;
  with the 100-ms timer of iperf3 up to 3.1.3 it sends each tick's frames back to back at
  the link rate (the source's on period holds exactly that many frames), else frame by
  frame at the mean rate.

Every loss is counted: a frame dropped anywhere but the bottleneck's admission (or, for a
hold queue, its traffic-manager queue) makes the trial invalid, as live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bufferlab.experiments.common.traffic_tools import IperfResult
from bufferlab.experiments.common.wire import FCS_BYTES
from bufferlab.experiments.esnet_buffer.accounting import Accounting
from bufferlab.experiments.esnet_buffer.backend import Trial, TrialSpec
from bufferlab.experiments.esnet_buffer.config import (
    FRAME_BYTES,
    FRAME_WIRE_BYTES,
    MTU_BYTES,
    RTT_NS,
    UDP_FRAME_BYTES,
)
from bufferlab.experiments.esnet_buffer.network import (
    BOTTLENECK_QUEUE,
    HOSTS,
    RECEIVER,
    RECV_SIDE,
    SEND_SIDE,
    SENDER,
    TRUNK_PORT,
    UDP_SENDER,
    UDP_SINK,
    UNBOUNDED_DEPTH_PACKETS,
    WIRE_OVERHEAD,
    host_ip,
    mac_of,
    switch_config,
    switch_names,
)
from bufferlab.experiments.esnet_buffer.workload import BACKGROUND_LEAD_S, UDP_PORT
from bufferlab.experiments.scenario import Scenario, SwitchSpec, build_simulation
from bufferlab.mininet.topology import parse_topology
from bufferlab.sim import Simulator, Source, TcpFlow

NS_PER_S = 1_000_000_000
#: TCP payload per segment: the MTU less IPv4 and TCP headers (the host models carry no
#: TCP timestamps).
MSS_BYTES = MTU_BYTES - 40
#: The background's frames as the simulator counts them (without FCS).
UDP_SIM_FRAME_BYTES = UDP_FRAME_BYTES - FCS_BYTES
BACKGROUND = "background"
SEND_SWITCH, RECV_SWITCH = switch_names()


@dataclass(frozen=True)
class VirtualTrial:
    """One trial in virtual time: its spec (at the seed's scale), the TCP profile, MSS and
    receive window (bytes), the run's seed, and the background's lead (s)."""

    spec: TrialSpec
    profile: str
    receive_window_bytes: int
    seed: int = 1
    mss_bytes: int = MSS_BYTES
    lead_s: float = BACKGROUND_LEAD_S

    @property
    def name(self) -> str:
        """`linux-2010 buffer_2g 60,000,000`: the trial in progress lines and failures."""
        return f"{self.profile} {self.spec.table} {self.spec.seed_setting:,}"

    @property
    def measured_from_ns(self) -> int:
        """Start of the measured window (after the lead and -O), ns."""
        return round((self.lead_s + self.spec.omit_s) * NS_PER_S)

    @property
    def end_ns(self) -> int:
        """End of the trial, ns."""
        return self.measured_from_ns + round(self.spec.trial_s * NS_PER_S)


def sender_link_bps(spec: TrialSpec) -> int:
    """`snd`'s link: the link rate (its NIC), or the paced rate as the link counts it."""
    if spec.send_bps >= spec.link_bps:
        return spec.link_bps
    return round(spec.send_bps * FRAME_WIRE_BYTES / FRAME_BYTES)


def background_source(spec: TrialSpec) -> Source | None:
    """The UDP background: bursts of ``background_burst_frames`` at the link rate once per
    timer tick (the tick keeps the mean rate), or frame by frame; None without one."""
    if not spec.background_bps:
        return None
    frames = spec.background_burst_frames
    common = {"sizes": ((UDP_SIM_FRAME_BYTES, 1),), "udp_ports": (UDP_PORT, UDP_PORT)}
    if frames <= 1:
        return Source(BACKGROUND, UDP_SENDER, UDP_SINK, pattern="constant",
                      rate_bps=spec.background_bps, **common)
    wire_ns = (UDP_SIM_FRAME_BYTES + WIRE_OVERHEAD) * 8 * NS_PER_S / spec.link_bps
    on_ns = math.ceil(frames * wire_ns)
    tick_ns = round(frames * UDP_FRAME_BYTES * 8 * NS_PER_S / spec.background_bps)
    if on_ns >= tick_ns:
        raise ValueError(f"background: {frames} frames a tick take {on_ns} ns at the link "
                         f"rate, more than the tick's {tick_ns} ns")
    return Source(BACKGROUND, UDP_SENDER, UDP_SINK, pattern="constant",
                  rate_bps=spec.link_bps, on_ns=on_ns, off_ns=tick_ns - on_ns, **common)


def trial_scenario(trial: VirtualTrial) -> Scenario:
    """The trial as a scenario: the network, both switches' configs, the background and
    the TCP flows, for the trial's whole time."""
    spec = trial.spec
    quarter_rtt = RTT_NS // 4
    rates = {SENDER: sender_link_bps(spec), RECEIVER: spec.link_bps,
             UDP_SENDER: spec.link_bps, UDP_SINK: spec.link_bps}
    delays = {SENDER: quarter_rtt, RECEIVER: quarter_rtt}
    names = (SEND_SWITCH, RECV_SWITCH)
    links = [{"a": host, "b": f"{names[side]}-p{port}", "rate_bps": rates[host],
              "delay_ns": delays.get(host, 0), "wire_overhead_bytes": WIRE_OVERHEAD}
             for host, (side, port) in HOSTS.items()]
    links.append({"a": f"{SEND_SWITCH}-p{TRUNK_PORT}", "b": f"{RECV_SWITCH}-p{TRUNK_PORT}",
                  "rate_bps": spec.link_bps, "wire_overhead_bytes": WIRE_OVERHEAD})
    topology = parse_topology({
        "hosts": {h: {"ip": f"{host_ip(h)}/24", "mac": mac_of(h)} for h in HOSTS},
        "switches": {sw: {} for sw in names},
        "links": links,
    })
    switches = {
        SEND_SWITCH: SwitchSpec(SEND_SWITCH, switch_config(SEND_SIDE, int(SEND_SWITCH[1:]),
                                                           spec.buffer_bytes)),
        RECV_SWITCH: SwitchSpec(RECV_SWITCH, switch_config(RECV_SIDE, int(RECV_SWITCH[1:]))),
    }
    background = background_source(spec)
    flows = [TcpFlow(f"tcp{i + 1}", SENDER, RECEIVER, profile=trial.profile,
                     start_ns=round(trial.lead_s * NS_PER_S), mss_bytes=trial.mss_bytes,
                     receive_window_bytes=trial.receive_window_bytes)
             for i in range(spec.streams if spec.tcp else 0)]
    return Scenario(topology=topology, switches=switches,
                    sources=[background] if background else [], duration_ns=trial.end_ns,
                    seed=trial.seed, name=trial.name, tcp_flows=flows)


@dataclass(frozen=True)
class _Counts:
    """What the TCP senders and receivers had counted at one moment."""

    delivered_bytes: int
    sent_bytes: int
    retransmits: int


def _tcp_counts(sim: Simulator) -> _Counts:
    rows = sim.results().tcp.values()
    return _Counts(sum(r["delivered_bytes"] for r in rows),
                   sum(r["payload_bytes_sent"] for r in rows),
                   sum(r["retransmitted_segments"] for r in rows))


def _accounting(sim: Simulator, hold_queue: bool) -> Accounting:
    """Frames lost at the bottleneck's admission (P4 cap, or the hold queue's TM depth)
    and everywhere else, by place."""
    results = sim.results()
    bottleneck = sim.switches[SEND_SWITCH]
    p4_cap = int(bottleneck.counter_read("queue_drops",
                                         TRUNK_PORT * 8 + BOTTLENECK_QUEUE)[0])
    held = int(bottleneck.queue_stats(TRUNK_PORT, BOTTLENECK_QUEUE)["dropped_pkts"])
    admission = held if hold_queue else p4_cap
    losses: dict[str, int] = {}
    for name, counters in results.switches.items():
        program = counters["dropped_by_program_frames"]
        tm = counters["dropped_by_tm_frames"]
        stray = counters["unconnected_port_frames"]
        if name == SEND_SWITCH:
            program -= 0 if hold_queue else p4_cap
            tm -= held if hold_queue else 0
        for where, n in (("program", program), ("traffic manager", tm),
                         ("unconnected port", stray)):
            if n:
                losses[f"{name} {where}"] = n
    for name, source in results.sources.items():
        if source["dropped_frames"]:
            losses[f"{name} host queue"] = source["dropped_frames"]
    return Accounting(admission, losses)


def run_virtual_trial(trial: VirtualTrial) -> Trial:
    """One trial in virtual time (module-level, so grid workers can run it)."""
    spec = trial.spec
    sim = build_simulation(trial_scenario(trial))
    depth = spec.hold_packets if spec.hold_packets is not None else UNBOUNDED_DEPTH_PACKETS
    sim.switches[SEND_SWITCH].set_queue_depth(depth, TRUNK_PORT, BOTTLENECK_QUEUE)
    sim.run(trial.measured_from_ns)
    before = _tcp_counts(sim)
    sim.run(trial.end_ns)
    after = _tcp_counts(sim)
    results = sim.results()
    iperf = None
    if spec.tcp:
        iperf = IperfResult(after.sent_bytes - before.sent_bytes,
                            after.delivered_bytes - before.delivered_bytes, spec.trial_s,
                            after.retransmits - before.retransmits)
    udp_sent = results.sources[BACKGROUND]["sent_frames"] if spec.background_bps else 0
    udp_received = results.flows[BACKGROUND]["frames"] if spec.background_bps else 0
    return Trial(spec, iperf, udp_sent, udp_received,
                 _accounting(sim, spec.hold_packets is not None),
                 tcp_timeouts=sum(r["timeouts"] for r in results.tcp.values()))


def describe(profiles: tuple[str, ...], receive_window_bytes: int) -> list[tuple[str, str]]:
    """What virtual time modelled, with units."""
    send, recv = SEND_SWITCH, RECV_SWITCH
    return [
        ("backend", "virtual time: bufferlab-sim, at the seed's own scale (k = 1)"),
        ("network", f"{SENDER}, {UDP_SENDER} on {send}; {RECEIVER}, {UDP_SINK} on {recv}; "
                    "buffer_switch.p4 in both, programmed by the controller over P4Runtime"),
        ("bottleneck", f"{send} port {TRUNK_PORT}: 10,000,000,000 bit/s, {WIRE_OVERHEAD} "
                       "bytes of wire overhead per frame; P4 cap in bytes or a "
                       "traffic-manager depth in packets (hold queue)"),
        ("RTT", f"{RTT_NS // 1_000_000} ms: {RTT_NS / 4e6:g} ms of propagation on "
                f"{SENDER}'s and {RECEIVER}'s links, each way"),
        ("TCP", f"traffic/hosts' TCP, profiles {', '.join(profiles)}; 2 flows, MSS "
                f"{MSS_BYTES} bytes, receive window {receive_window_bytes:,} bytes each "
                "(3/4 of 64 MiB, Linux 2.6's tcp_adv_win_scale)"),
        ("sender's NIC", "the link rate, or the paced rate (an HTB class's pace)"),
        ("UDP background", f"{UDP_SIM_FRAME_BYTES}-byte frames (no FCS), each 100-ms "
                           "tick's frames back to back at the link rate (iperf3 up to 3.1.3)"),
    ]
