"""The live network: ESnet's four hosts and two switches in Mininet, real TCP and UDP.

```
 snd 10.0.4.1 ─ p1 [s41] p5 ══ p5 [s42] p2 ─ rcv  10.0.4.2
 udp 10.0.4.3 ─ p3              bottleneck      p4 ─ sink 10.0.4.4
```

Both switches run p4src/buffer_switch.p4 in bufferlab-switch, configured by the controller
over P4Runtime; every link has a 9000-byte MTU. s41's port 5 is the bottleneck: the
switch's port model shapes it to the live link rate (24 bytes of wire overhead per frame)
and the P4 admission caps its queue at the buffer under test (tail drop; the hold-queue
variant leaves the P4 cap off and sets the traffic manager's queue depth in packets, as a
hold queue counts). The 50 ms RTT is the switches' port delay on the TCP hosts' ports,
25 ms each way as the seed's second setup put 25 ms of netem on each host, so the UDP
background is not delayed. `snd`'s eth0 carries an HTB class at the link rate (its NIC,
like the seed's 10 Gbit/s NICs) or at the paced rate (the seed's pacing).

Every trial reads both switches' counters and every veth's before and after
(`accounting`); a trial that lost a frame anywhere but the bottleneck's admission runs
again, up to `attempts` times, and is reported invalid if it never came out clean.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from google.protobuf import text_format

from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.entities import counter_entry
from bufferlab.experiments.common.accounting import link_drops, parse_switch_counters
from bufferlab.experiments.common.buffer_engine import TM_POOL_FACTOR, compiled_program
from bufferlab.experiments.common.host_tools import (
    FINISH_GRACE_S,
    HostProcesses,
    output_of,
    require_congestion_control,
    set_route_options,
    wait_until,
)
from bufferlab.experiments.common.lifecycle import ClosedOnFailedStart
from bufferlab.experiments.common.live_lab import LiveLab, Program
from bufferlab.experiments.common.live_switch import COUNTER_PUBLISH_WAIT_S, pin_neighbour
from bufferlab.experiments.common.ports import free_port_block
from bufferlab.experiments.common.realtime import REALTIME_PRIORITY
from bufferlab.experiments.common.traffic_tools import (
    iperf_client_argv,
    iperf_server_argv,
    parse_iperf_json,
)
from bufferlab.experiments.esnet_buffer.accounting import Snapshot, account
from bufferlab.experiments.esnet_buffer.backend import Trial, TrialSpec
from bufferlab.experiments.esnet_buffer.config import MTU_BYTES, RTT_NS, EsnetConfig
from bufferlab.experiments.esnet_buffer.network import (
    BOTTLENECK_QUEUE,
    FIRST_SWITCH,
    HOSTS,
    PROGRAM_POOL_BYTES,
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
from bufferlab.experiments.esnet_buffer.workload import (
    BACKGROUND_LEAD_S,
    BACKGROUND_TAIL_S,
    UDP_PORT,
    generator_argv,
    pacing_classes,
    parse_generator,
    parse_receiver,
    receiver_argv,
)
from bufferlab.mininet.network import NetworkOptions
from bufferlab.mininet.switch import default_switch_binary
from bufferlab.mininet.topology import Topology, parse_topology
from bufferlab.switch.runtime_cli import RuntimeCliConnection
from bufferlab.traffic import tc

IPERF_PORT = 5201
#: SCHED_FIFO priority of each switch's packet thread, above the hosts' tools (iperf3, the
#: generator, the receiver: REALTIME_PRIORITY, as the switches' other threads). At one
#: priority FIFO threads do not preempt each other, so on two cores a switch waited behind
#: the senders and receivers, 12-108 ms at a time on a loaded machine (measured); a switch
#: that stalls while a background burst holds the bottleneck reads the burst late and
#: queues it at once, which overflowed the paced trials' buffer in full test runs.
PACKET_THREAD_PRIORITY = REALTIME_PRIORITY + 10
#: The name bufferlab-switch gives its packet thread (switch/src/live).
PACKET_THREAD_NAME = "packets"


def esnet_topology(config: EsnetConfig, names: tuple[str, str]) -> Topology:
    """The four hosts and two switches (``names``), jumbo MTU, the bottleneck and the 25 ms
    delays."""
    half_rtt = RTT_NS // 2
    delay = {SENDER: half_rtt, RECEIVER: half_rtt}
    links = [{"a": host, "b": f"{sw}-p{port}", "delay_ns": delay.get(host, 0),
              "wire_overhead_bytes": WIRE_OVERHEAD, "mtu_bytes": MTU_BYTES}
             for host, (side, port) in HOSTS.items() for sw in [names[side]]]
    links.append({"a": f"{names[SEND_SIDE]}-p{TRUNK_PORT}",
                  "b": f"{names[RECV_SIDE]}-p{TRUNK_PORT}",
                  "rate_bps": config.link_bps, "wire_overhead_bytes": WIRE_OVERHEAD,
                  "mtu_bytes": MTU_BYTES})
    return parse_topology({
        "hosts": {h: {"ip": f"{host_ip(h)}/24", "mac": mac_of(h)} for h in HOSTS},
        "switches": {sw: {"pool_bytes": TM_POOL_FACTOR * PROGRAM_POOL_BYTES}
                     for sw in names},
        "links": links,
    })


@dataclass
class _Switch:
    """One running switch: its primary controller connection and its runtime CLI."""

    connection: SwitchConnection
    program: BufferSwitch
    cli: RuntimeCliConnection

    def run(self, line: str) -> str:
        """One runtime CLI command; RuntimeError with the switch's answer if it failed."""
        answer = self.cli.run(line)
        if not answer.ok:
            raise RuntimeError(f"runtime CLI: {line}: {answer.text}")
        return answer.text

    def close(self) -> None:
        """Close the CLI and the controller connection."""
        try:
            self.cli.close()
        finally:
            self.connection.close()


class EsnetLab(ClosedOnFailedStart):
    """The network, switches, controller and tools; a context manager (root)."""

    def __init__(self, config: EsnetConfig, work_dir: str | Path | None = None,
                 netns_prefix: str = "bl-esnet-", binary: str | None = None,
                 first_switch: int = FIRST_SWITCH) -> None:
        """``work_dir`` holds the build files and the switches' logs (a temporary folder by
        default, removed at exit); ``binary`` is the switch (bufferlab-switch); the
        switches are s<first_switch> and the next."""
        self.names = switch_names(first_switch)
        self.config = config
        self._binary = binary or default_switch_binary()
        self._prefix = netns_prefix
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="esnet_live_"))
        self._lab: LiveLab | None = None
        self._switches: dict[str, _Switch] = {}

    def _start(self) -> None:
        """Compile, start the network and the switches, apply the configs."""
        c = self.config
        require_congestion_control(c.congestion, *c.extra_congestion)
        program = compiled_program()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        json_path = self.work_dir / "buffer_switch.json"
        json_path.write_text(program.json_text)
        p4info_path = self.work_dir / "buffer_switch.p4.p4info.txtpb"
        p4info_path.write_text(text_format.MessageToString(program.p4info))
        # gRPC ports base+index-1 for s41, s42, Thrift the two after: a free block of four.
        first = free_port_block(4)
        index = int(self.names[SEND_SIDE][1:])
        options = NetworkOptions(switch_binary=self._binary, log_dir=str(self.work_dir),
                                 netns_prefix=self._prefix,
                                 grpc_base_port=first - (index - 1),
                                 thrift_base_port=first + 2 - (index - 1))
        self._lab = LiveLab(esnet_topology(c, self.names),
                            {sw: switch_config(side, int(sw[1:]))
                             for side, sw in enumerate(self.names)},
                            Program(json_path, p4info_path), options).start()
        network = self._lab.network
        for sw in self.names:
            raise_packet_thread(self.switch_pid(sw))
            connection = SwitchConnection(network.grpc_address(sw), self._lab.device_id(sw))
            if not connection.connect():
                connection.close()
                raise RuntimeError(f"{sw}: another controller is primary")
            spec = network.switch_options(network.topo.switches[sw])
            self._switches[sw] = _Switch(connection, BufferSwitch(connection, self._lab.index),
                                         RuntimeCliConnection(port=spec.thrift_port))
        # The trunk's two ends live in the root namespace, where Linux would send router
        # solicitations and MLD reports into the other switch, which floods them and drops
        # its echo: frames no trial sent, lost in the program.
        for sw in self.names:
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{sw}-eth{TRUNK_PORT}.disable_ipv6=1"],
                           check=True, capture_output=True)
        # The hosts' TCP autotuning limit, scaled as every buffer is (the seed's hosts
        # bounded their windows; Linux's default here would let each stream take 16 MB).
        tcp_max = c.live(c.tcp_buffer_bytes)
        settings = [f"tcp_rmem=4096 131072 {tcp_max}", f"tcp_wmem=4096 131072 {tcp_max}",
                    *c.tcp_sysctls]
        for host in (SENDER, RECEIVER):
            for setting in settings:
                done = subprocess.run(["ip", "netns", "exec", self.netns(host), "sysctl",
                                       "-qw", f"net.ipv4.{setting}"],
                                      capture_output=True, text=True)
                if done.returncode:
                    raise RuntimeError(f"tcp_sysctls: net.ipv4.{setting}: "
                                       f"{done.stderr.strip()}")
        for a, b in ((SENDER, RECEIVER), (UDP_SENDER, UDP_SINK)):
            pin_neighbour(self.netns(a), host_ip(b), mac_of(b))
            pin_neighbour(self.netns(b), host_ip(a), mac_of(a))

    def close(self) -> None:
        """Disconnect and take the network down (safe to call twice)."""
        try:
            for s in self._switches.values():
                s.close()
            self._switches.clear()
        finally:
            if self._lab is not None:
                self._lab.stop()
                self._lab = None
            if self._own_dir:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    def switch_pid(self, name: str) -> int:
        """The process id of switch ``name``."""
        if self._lab is None:
            raise RuntimeError("the lab is not started (use it as a context manager)")
        return self._lab.switch_pid(name)

    def netns(self, host: str) -> str:
        """The named namespace of ``host``."""
        if self._lab is None:
            raise RuntimeError("the lab is not started (use it as a context manager)")
        return self._lab.network.netns(host)

    def _switch(self, name: str) -> _Switch:
        if name not in self._switches:
            raise RuntimeError("the lab is not started (use it as a context manager)")
        return self._switches[name]

    # -- settings ---------------------------------------------------------------------------

    def set_buffer(self, spec: TrialSpec) -> None:
        """The bottleneck's buffer: a P4 cap in bytes, or a traffic-manager depth in packets
        (the other one lifted), and the link rate (0 = unshaped, for the headroom probe)."""
        s = self._switch(self.names[SEND_SIDE])
        s.program.set_queue_cap(TRUNK_PORT, BOTTLENECK_QUEUE, spec.buffer_bytes)
        # The traffic manager's depth bounds the queue whatever the program admits: a
        # depth far above any cap in bytes leaves the P4 admission alone to decide.
        depth = spec.hold_packets if spec.hold_packets is not None else UNBOUNDED_DEPTH_PACKETS
        s.run(f"set_queue_depth {depth} {TRUNK_PORT} {BOTTLENECK_QUEUE}")
        s.run(f"set_port_rate {TRUNK_PORT} {spec.link_bps}")

    def set_pacing(self, rate_bps: int, host: str = SENDER) -> None:
        """HTB on ``host``'s eth0 at ``rate_bps`` (its NIC's rate, or the seed's pacing)."""
        classes, default = pacing_classes(rate_bps)
        tc.install_htb("eth0", rate_bps, classes, default, netns=self.netns(host))

    def set_background_nic(self, rate_bps: int) -> None:
        """``udp``'s NIC at ``rate_bps`` (the link's, as the seed's 10 Gbit/s NICs: a burst
        of the background reaches the bottleneck at its rate); 0 leaves it unshaped."""
        if rate_bps:
            self.set_pacing(rate_bps, UDP_SENDER)
        else:
            tc.clear_root("eth0", self.netns(UDP_SENDER))

    # -- counters ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Both switches' counters, every veth's drops, the bottleneck's admission drops."""
        links = {}
        for host, (side, port) in HOSTS.items():
            sw = self.names[side]
            for netns, dev in ((self.netns(host), "eth0"), (None, f"{sw}-eth{port}")):
                links[f"{netns or 'root'} {dev}"] = self._link(netns, dev)
        for sw in self.names:
            links[f"root {sw}-eth{TRUNK_PORT}"] = self._link(None, f"{sw}-eth{TRUNK_PORT}")
        switches = {sw: parse_switch_counters(self._switch(sw).run("show_port_counters"))
                    for sw in self.names}
        s = self._switch(self.names[SEND_SIDE])
        cell = counter_entry(s.program.index, "queue_drops", TRUNK_PORT * 8 + BOTTLENECK_QUEUE)
        (found,) = s.connection.read(entity(cell))
        return Snapshot(switches, links, found.counter_entry.data.packet_count)

    @staticmethod
    def _link(netns: str | None, dev: str) -> dict[str, int]:
        where = ["-n", netns] if netns else []
        out = subprocess.run(["ip", *where, "-j", "-s", "link", "show", dev], check=True,
                             capture_output=True, text=True).stdout
        return link_drops(out)

    # -- trials -----------------------------------------------------------------------------

    def trial(self, spec: TrialSpec) -> Trial:
        """One trial; rerun while frames were lost outside admission, up to ``attempts``."""
        reruns: list[str] = []
        while True:
            got = self._trial_once(spec)
            if got.accounting.valid or len(reruns) + 1 >= self.config.attempts:
                return replace(got, reruns=tuple(reruns))
            reruns.append(got.accounting.describe())

    def _listening(self, port: int) -> bool:
        out = subprocess.run(["ip", "netns", "exec", self.netns(RECEIVER), "ss", "-Hltn"],
                             capture_output=True, text=True).stdout
        return any(line.split()[3].endswith(f":{port}") for line in out.splitlines()
                   if len(line.split()) > 3)

    def _trial_once(self, spec: TrialSpec) -> Trial:
        self.set_buffer(spec)
        self.set_pacing(spec.send_bps)
        self.set_background_nic(spec.link_bps)
        # iperf3 runs its -O seconds before its -t seconds: the background covers both, and
        # its connection set-up (a few RTTs) and wind-down.
        duration = BACKGROUND_LEAD_S + spec.omit_s + spec.trial_s + BACKGROUND_TAIL_S
        with HostProcesses() as procs:
            sink = None
            if spec.background_bps:
                sink = procs.start(self.netns(UDP_SINK), receiver_argv(duration + 3),
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if spec.tcp:
                procs.start(self.netns(RECEIVER), iperf_server_argv(IPERF_PORT),
                            stdout=subprocess.DEVNULL)
                wait_until(lambda: self._listening(IPERF_PORT), "the iperf3 server")
            time.sleep(0.3)  # the UDP sink's socket opens in a blink; no readiness line needed
            before = self.snapshot()
            gen = None
            if spec.background_bps:
                gen = procs.start(self.netns(UDP_SENDER),
                                  generator_argv(host_ip(UDP_SINK), spec.background_bps,
                                                 duration, spec.background_burst_frames),
                                  stdout=subprocess.PIPE)
                time.sleep(BACKGROUND_LEAD_S)
            iperf = None
            if spec.tcp:
                set_route_options(self.netns(SENDER), {"congctl": spec.congestion})
                client = procs.start(self.netns(SENDER), [
                    *iperf_client_argv(host_ip(RECEIVER), IPERF_PORT, 0, spec.trial_s,
                                       spec.congestion, streams=spec.streams),
                    "--omit", str(round(spec.omit_s))], stdout=subprocess.PIPE)
                iperf = parse_iperf_json(output_of(client, spec.trial_s + spec.omit_s
                                                 + FINISH_GRACE_S, "iperf3"))
            sent = received = 0
            if gen is not None and sink is not None:
                sent = parse_generator(output_of(gen, duration + FINISH_GRACE_S, "bufferlab-gen"))
                received = parse_receiver(output_of(sink, duration + FINISH_GRACE_S,
                                                  "bufferlab-recv"))
            time.sleep(COUNTER_PUBLISH_WAIT_S)
            after = self.snapshot()
        accounting = account(before, after, self.names[SEND_SIDE], TRUNK_PORT, BOTTLENECK_QUEUE,
                             tm_admission=spec.hold_packets is not None)
        return Trial(spec, iperf, sent, received, accounting)


def raise_packet_thread(pid: int) -> None:
    """The switch ``pid``'s packet thread SCHED_FIFO at PACKET_THREAD_PRIORITY (root);
    RuntimeError if the switch has no such thread."""
    tasks = Path(f"/proc/{pid}/task")
    tids = [int(t.name) for t in tasks.iterdir()
            if (t / "comm").read_text().strip() == PACKET_THREAD_NAME]
    if not tids:
        raise RuntimeError(f"switch {pid} has no thread named {PACKET_THREAD_NAME!r}")
    for tid in tids:
        os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(PACKET_THREAD_PRIORITY))


def describe(config: EsnetConfig, names: tuple[str, str] = switch_names()
             ) -> list[tuple[str, str]]:
    """What runs, with units."""
    send, recv = names
    return [
        ("network", f"Mininet: {SENDER} {host_ip(SENDER)} and {UDP_SENDER} "
                    f"{host_ip(UDP_SENDER)} on {send}; {RECEIVER} {host_ip(RECEIVER)} "
                    f"and {UDP_SINK} {host_ip(UDP_SINK)} on {recv}; MTU {MTU_BYTES} "
                    "bytes on every link"),
        ("switches", "two bufferlab-switch processes running p4src/buffer_switch.p4, "
                     "configured over P4Runtime by the controller"),
        ("bottleneck", f"{send} port {TRUNK_PORT}: {config.link_bps:,} bit/s, "
                       f"{WIRE_OVERHEAD} bytes of wire overhead per frame"),
        ("RTT", f"{RTT_NS // 1_000_000} ms: {RTT_NS // 2_000_000} ms of port delay towards "
                f"{SENDER} and towards {RECEIVER}"),
        ("TCP", f"Linux {config.congestion} (buffer table also "
                f"{', '.join(config.extra_congestion) or 'nothing else'}), iperf3 -P 2, {config.trial_s:g} s per trial "
                f"(first {config.omit_s:g} s left out, -O); autotuning up to "
                f"{config.live(config.tcp_buffer_bytes):,} bytes per socket (tcp_rmem/wmem)"
                + "".join(f", {s}" for s in config.tcp_sysctls)),
        ("UDP background", f"bufferlab-gen, {json.dumps(list(config.backgrounds_bps))} bit/s "
                           f"at the seed's scale, 9000-byte frames to port {UDP_PORT}, "
                           + (f"what is due every {config.background_timer_ms:g} ms sent at "
                              "once through a NIC at the link rate (iperf3 up to 3.1.3)"
                              if config.background_timer_ms else "frame by frame")),
    ]
