"""A Mininet network built from a topology file: P4 switches, hosts set up as the p4lang tutorials do.

Each host's network namespace is also given a name (`ip netns attach`), so bufferlab's
host tools (tc helpers, generators, receivers) reach it with `ip netns exec` or `tc -n`
exactly as they reach namespaces they made themselves. Stopping the network removes
what it created and nothing else: its switch processes, hosts, links and namespace names.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mininet.link import Link as MininetLink
from mininet.net import Mininet
from mininet.node import Host as MininetHost
from mininet.node import Node

from bufferlab.mininet.cleanup import STATE_DIR, NetworkRecord, command_line
from bufferlab.mininet.switch import P4Switch, SwitchOptions, default_switch_binary
from bufferlab.mininet.topology import Switch, Topology
from bufferlab.traffic import tc

GRPC_BASE_PORT = 50051
THRIFT_BASE_PORT = 9090
#: This Python's command folder (the venv's bin): bufferlab's tools and the python3 that
#: imports bufferlab. The banners print `h1 bufferlab-gen …` and `h1 python3 -m
#: bufferlab.traffic.agents …`, so every host's shell has it first on its PATH.
TOOLS_DIR = sysconfig.get_path("scripts")


def put_tools_on_path() -> None:
    """TOOLS_DIR first on this process's PATH: Mininet's `sh` command and whatever this
    process starts find bufferlab's tools as the banners print them."""
    parts = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != TOOLS_DIR]
    os.environ["PATH"] = os.pathsep.join([TOOLS_DIR, *parts])


class P4Host(MininetHost):
    """A host whose interface is `eth0`, with offloads and IPv6 off (as the tutorials' hosts),
    and bufferlab's tools first on its shell's PATH."""

    def config(self, **params: object) -> dict[str, object]:
        """Configure addresses, then rename the interface and quiet the kernel's extras."""
        result = super().config(**params)
        self.cmd(f"export PATH={shlex.quote(TOOLS_DIR)}:\"$PATH\"")
        intf = self.defaultIntf()
        for offload in ("rx", "tx", "sg"):
            self.cmd(f"ethtool --offload {intf} {offload} off")
        for knob in ("all", "default", "lo"):
            self.cmd(f"sysctl -qw net.ipv6.conf.{knob}.disable_ipv6=1")
        return result


@dataclass
class NetworkOptions:
    """Where the switches' program, binary, logs and captures are, and how ports are numbered."""

    json_path: str | None = None
    switch_binary: str = field(default_factory=default_switch_binary)
    log_dir: str = "logs"
    pcap_dir: str | None = None
    grpc_base_port: int = GRPC_BASE_PORT
    thrift_base_port: int = THRIFT_BASE_PORT
    netns_prefix: str = "bl-"
    state_dir: Path = STATE_DIR


SwitchMaker = Callable[[Mininet, Switch, SwitchOptions], Node]


def add_p4_switch(net: Mininet, spec: Switch, options: SwitchOptions, binary: str,
                  log_dir: str) -> Node:
    """Add a P4Switch node for `spec` to `net`."""
    return net.addSwitch(spec.name, cls=P4Switch, options=options, binary=binary, log_dir=log_dir)


class LabNetwork:
    """A topology brought up in Mininet; use as a context manager so it always comes down."""

    def __init__(
        self,
        topo: Topology,
        options: NetworkOptions | None = None,
        make_switch: SwitchMaker | None = None,
    ) -> None:
        self.topo = topo
        self.options = options or NetworkOptions()
        self._make_switch = make_switch
        self.net: Mininet | None = None
        self.record = NetworkRecord(owner_pid=os.getpid())

    def switch_options(self, spec: Switch) -> SwitchOptions:
        """The command-line options of switch `spec` (ports from the tutorials' plan)."""
        program = str(self.topo.base_dir / spec.program) if spec.program else self.options.json_path
        return SwitchOptions(
            device_id=spec.index - 1,
            grpc_port=self.options.grpc_base_port + spec.index - 1,
            thrift_port=self.options.thrift_base_port + spec.index - 1,
            json_path=program,
            cpu_port=spec.cpu_port,
            priority_queues=spec.priority_queues,
            pool_bytes=spec.pool_bytes,
            pcap_dir=self.options.pcap_dir,
            port_models=self.topo.switch_ports(spec.name),
        )

    def grpc_address(self, switch: str) -> str:
        """host:port of a switch's P4Runtime server."""
        opts = self.switch_options(self.topo.switches[switch])
        return f"{opts.grpc_host}:{opts.grpc_port}"

    def netns(self, host: str) -> str:
        """The name under which `host`'s network namespace is reachable (`ip netns exec`)."""
        return f"{self.options.netns_prefix}{host}"

    def host(self, name: str) -> MininetHost:
        """The running Mininet host `name`."""
        if self.net is None:
            raise RuntimeError("the network is not started")
        return self.net.get(name)

    def start(self) -> None:
        """Build and start the network; on any failure, take down what was built and re-raise."""
        try:
            self._build()
            assert self.net is not None
            self._remember_nodes()
            self.net.start()
            self._remember_switch_processes()
            self._set_up_hosts()
        except BaseException:
            self.stop()
            raise

    def _build(self) -> None:
        self.net = Mininet(build=False, controller=None, host=P4Host, link=MininetLink,
                           autoSetMacs=False, waitConnected=False)
        for name, spec in self.topo.hosts.items():
            self.net.addHost(name, ip=spec.ip, mac=spec.mac)
        for spec in self.topo.switches.values():
            options = self.switch_options(spec)
            if self._make_switch is not None:
                self._make_switch(self.net, spec, options)
            else:
                add_p4_switch(self.net, spec, options, self.options.switch_binary,
                              self.options.log_dir)
        for link in self.topo.links:
            params: dict[str, object] = {}
            for end, suffix in ((link.a, "1"), (link.b, "2")):
                if end.port is not None:
                    params[f"port{suffix}"] = end.port
                else:
                    params[f"intfName{suffix}"] = "eth0"
            made = self.net.addLink(link.a.node, link.b.node, **params)
            if link.mtu_bytes is not None:
                # Before net.start(): a switch port reads its largest frame from the MTU
                # when the switch opens it.
                for intf in (made.intf1, made.intf2):
                    intf.node.cmd(f"ip link set dev {intf.name} mtu {link.mtu_bytes}")
        self.net.build()

    def _remember_nodes(self) -> None:
        assert self.net is not None
        for host in self.net.hosts:
            self.record.processes[host.pid] = (command_line(host.pid) or ["bash"])[0]
        for switch in self.net.switches:
            self.record.interfaces += [i.name for i in switch.intfList() if i.name != "lo"]
        self.record.save(self.options.state_dir)

    def _remember_switch_processes(self) -> None:
        assert self.net is not None
        for switch in self.net.switches:
            process = getattr(switch, "process", None)
            if process is not None:
                self.record.processes[process.pid] = process.args[0]
        self.record.save(self.options.state_dir)

    def _set_up_hosts(self) -> None:
        assert self.net is not None
        for name, spec in self.topo.hosts.items():
            host = self.net.get(name)
            netns = self.netns(name)
            self.record.netns.append(netns)
            self.record.save(self.options.state_dir)
            _run(["ip", "netns", "attach", netns, str(host.pid)])
            for command in spec.commands:
                host.cmd(command)
        for link in self.topo.links:
            if link.host_pacing is None:
                continue
            host_end = link.b if link.a.is_switch_port else link.a
            pacing = link.host_pacing
            netns = self.netns(host_end.node)
            if pacing.qdisc == "tbf":
                tc.install_tbf("eth0", pacing.rate_bps, pacing.burst_bytes,
                               limit_bytes=4 * pacing.burst_bytes, netns=netns)
            else:
                tc.install_htb("eth0", pacing.rate_bps,
                               [tc.HtbClass(minor=2, rate_bps=pacing.rate_bps,
                                            burst_bytes=pacing.burst_bytes,
                                            cburst_bytes=pacing.burst_bytes)],
                               default_minor=2, netns=netns)

    def stop(self) -> None:
        """Take down everything this network created; safe to call more than once."""
        for netns in self.record.netns:
            subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
        self.record.netns.clear()
        if self.net is not None:
            self.net.stop()
            self.net = None
        self.record.discard(self.options.state_dir)

    def __enter__(self) -> LabNetwork:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _run(argv: list[str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")


def log_banner(network: LabNetwork) -> str:
    """The start-up banner: where every log, capture and P4Runtime endpoint is, and how to read them."""
    lines = ["bufferlab network is up."]
    for name in network.topo.switches:
        log = Path(network.options.log_dir) / f"{name}.log"
        lines.append(f"  {name}: P4Runtime at {network.grpc_address(name)};"
                     f" log: tail -f {log}")
    if network.options.pcap_dir:
        lines.append(f"  captures: {network.options.pcap_dir}/<iface>_in.pcap and _out.pcap"
                     " (read with: tcpdump -xxx -r FILE)")
    for name in network.topo.hosts:
        lines.append(f"  {name}: ip netns exec {network.netns(name)} <command>")
    return "\n".join(lines)
