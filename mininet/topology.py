"""The topology file: hosts, switches and links, as the p4lang tutorials write it, plus the port model.

A file is JSON with three keys, the same as the tutorials' `topology.json`:

- `hosts`: name -> `{ip, mac, commands}`; `ip` and `mac` may be left out, and then
  follow the tutorials' plan `10.0.<switch>.<port>/24` and `08:00:00:00:<switch>:<port>`
  from the switch port the host is linked to.
- `switches`: name -> `{runtime_json, program, cpu_port, priority_queues, pool_bytes}`.
- `links`: each `[a, b]` or `[a, b, latency, bandwidth_mbps]` (tutorials), or an object
  `{"a", "b", "rate_bps", "delay_ns", "wire_overhead_bytes", "host_pacing", "mtu_bytes"}`.
  A switch end is written `s1-p3` (switch s1, port 3).

There is no netem on our kernels, so a link's rate and delay belong to the switch: they
become the port model (shaper rate in bit/s, propagation delay in ns) of the switch port
on that link. `host_pacing` shapes the host's side with tc (`{"rate_bps", "burst_bytes",
"qdisc": "htb" | "tbf"}`): the host sends at most `burst_bytes` back to back (HTB's burst
and cburst, or the TBF bucket), then at `rate_bps`. `mtu_bytes` sets the MTU of both
ends of the link (e.g. 9000 for jumbo frames; Linux's default 1500 when left out); it is
set before the switches start, since a switch port takes its largest frame from it.

Every problem is a `TopologyError` naming the key and the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WIRE_OVERHEAD_BYTES = 24
MIN_MTU_BYTES = 68
MAX_MTU_BYTES = 65535
SWITCH_PORT = re.compile(r"^(?P<switch>[A-Za-z_][\w]*)-p(?P<port>\d+)$")
LATENCY = re.compile(r"^\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ns|us|ms|s)?\s*$")
NS_PER_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


class TopologyError(ValueError):
    """A topology file that cannot be used: `key` says where, the message says why."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


@dataclass(frozen=True)
class HostPacing:
    """tc shaping on a host's interface: rate in bit/s, burst in bytes."""

    rate_bps: int
    burst_bytes: int
    qdisc: str = "htb"


@dataclass(frozen=True)
class PortModel:
    """A switch port's link model: shaper rate (0 = unlimited), propagation delay, overhead."""

    rate_bps: int = 0
    delay_ns: int = 0
    wire_overhead_bytes: int = WIRE_OVERHEAD_BYTES


@dataclass(frozen=True)
class Endpoint:
    """One end of a link: a host, or a port of a switch."""

    node: str
    port: int | None = None

    @property
    def is_switch_port(self) -> bool:
        """Whether this end is a switch port (`s1-p3`)."""
        return self.port is not None


@dataclass(frozen=True)
class Link:
    """A link between two endpoints and the model of the switch port(s) on it."""

    a: Endpoint
    b: Endpoint
    model: PortModel
    host_pacing: HostPacing | None = None
    mtu_bytes: int | None = None


@dataclass
class Host:
    """A host: address with prefix, MAC, and shell commands run after start."""

    name: str
    ip: str
    mac: str
    commands: list[str] = field(default_factory=list)


@dataclass
class Switch:
    """A P4 switch: its index (from the name), program, runtime file and options."""

    name: str
    index: int
    program: str | None = None
    runtime_json: str | None = None
    cpu_port: int | None = None
    priority_queues: int = 1
    pool_bytes: int | None = None


@dataclass
class Topology:
    """A whole topology, resolved: every host has an address, every link its port model."""

    hosts: dict[str, Host]
    switches: dict[str, Switch]
    links: list[Link]
    base_dir: Path = Path(".")

    def switch_ports(self, switch: str) -> dict[int, PortModel]:
        """Port number -> port model for every linked port of `switch`."""
        ports: dict[int, PortModel] = {}
        for link in self.links:
            for end in (link.a, link.b):
                if end.node == switch and end.port is not None:
                    ports[end.port] = link.model
        return ports

    def peer(self, node: str, port: int | None = None) -> Endpoint:
        """The endpoint at the other end of the link from `node` (and `port` for switches)."""
        for link in self.links:
            if link.a == Endpoint(node, port):
                return link.b
            if link.b == Endpoint(node, port):
                return link.a
        where = f"{node}-p{port}" if port is not None else node
        raise TopologyError("links", f"{where} is not linked to anything")


def load_topology(path: str | Path) -> Topology:
    """Read and check a topology file; relative paths in it are relative to the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as err:
        raise TopologyError(str(path), f"cannot read: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise TopologyError(str(path), f"not JSON: {err.msg} at line {err.lineno}") from err
    topo = parse_topology(data)
    topo.base_dir = path.parent
    return topo


def parse_topology(data: Any) -> Topology:
    """Check a topology given as parsed JSON and resolve defaults."""
    if not isinstance(data, dict):
        raise TopologyError("(top level)", "must be an object with hosts, switches, links")
    unknown = set(data) - {"hosts", "switches", "links"}
    if unknown:
        raise TopologyError(sorted(unknown)[0], "unknown key (expected hosts, switches, links)")
    switches = {
        name: _parse_switch(name, spec)
        for name, spec in _mapping(data.get("switches", {}), "switches").items()
    }
    host_specs = _mapping(data.get("hosts", {}), "hosts")
    links = [
        _parse_link(i, raw, host_specs, switches)
        for i, raw in enumerate(_sequence(data.get("links", []), "links"))
    ]
    _check_ports_used_once(links)
    hosts = {name: _parse_host(name, spec, links) for name, spec in host_specs.items()}
    return Topology(hosts=hosts, switches=switches, links=links)


def _mapping(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TopologyError(key, "must be an object mapping names to settings")
    return value


def _sequence(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise TopologyError(key, "must be a list")
    return value


def _integer(value: Any, key: str, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TopologyError(key, f"must be an integer, not {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" to {maximum}" if maximum is not None else " or more"
        raise TopologyError(key, f"must be {minimum}{upper}, not {value}")
    return value


def _string(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise TopologyError(key, f"must be a non-empty string, not {value!r}")
    return value


def _check_keys(spec: dict[str, Any], allowed: set[str], key: str) -> None:
    unknown = set(spec) - allowed
    if unknown:
        name = sorted(unknown)[0]
        raise TopologyError(f"{key}.{name}", f"unknown key (expected one of {sorted(allowed)})")


def _parse_switch(name: str, spec: Any) -> Switch:
    key = f"switches.{name}"
    spec = _mapping(spec, key)
    _check_keys(
        spec, {"program", "runtime_json", "cpu_port", "priority_queues", "pool_bytes", "cli_input"}, key
    )
    match = re.fullmatch(r"s(\d+)", name)
    if not match:
        raise TopologyError(key, "switch names are s<N> (s1, s2, ...): N is its index")
    switch = Switch(name=name, index=int(match.group(1)))
    if "program" in spec:
        switch.program = _string(spec["program"], f"{key}.program")
    if "runtime_json" in spec:
        switch.runtime_json = _string(spec["runtime_json"], f"{key}.runtime_json")
    if "cli_input" in spec:
        raise TopologyError(f"{key}.cli_input", "not supported: write entries with runtime_json")
    if "cpu_port" in spec:
        switch.cpu_port = _integer(spec["cpu_port"], f"{key}.cpu_port", 1, 510)
    if "priority_queues" in spec:
        switch.priority_queues = _integer(spec["priority_queues"], f"{key}.priority_queues", 1, 8)
    if "pool_bytes" in spec:
        switch.pool_bytes = _integer(spec["pool_bytes"], f"{key}.pool_bytes", 1)
    return switch


def _parse_endpoint(
    text: Any, key: str, hosts: dict[str, Any], switches: dict[str, Switch]
) -> Endpoint:
    text = _string(text, key)
    match = SWITCH_PORT.match(text)
    if match:
        if match.group("switch") not in switches:
            raise TopologyError(key, f"unknown switch {match.group('switch')!r}")
        port = int(match.group("port"))
        if not 0 <= port <= 510:
            raise TopologyError(key, f"port {port} out of range 0..510")
        return Endpoint(match.group("switch"), port)
    if text in switches:
        raise TopologyError(key, f"a switch end names its port: {text}-p<N>")
    if text not in hosts:
        raise TopologyError(key, f"unknown host {text!r}")
    return Endpoint(text)


def parse_latency_ns(value: Any, key: str) -> int:
    """A tutorials-style latency (`"0"`, `"5ms"`, `"20us"`; bare numbers are ms) in ns."""
    match = LATENCY.match(str(value)) if isinstance(value, (str, int, float)) else None
    if match is None or isinstance(value, bool):
        raise TopologyError(key, f"latency must look like '5ms', '20us' or '0', not {value!r}")
    unit = match.group("unit") or "ms"
    return round(float(match.group("value")) * NS_PER_UNIT[unit])


def _parse_pacing(spec: Any, key: str) -> HostPacing:
    spec = _mapping(spec, key)
    _check_keys(spec, {"rate_bps", "burst_bytes", "qdisc"}, key)
    if "rate_bps" not in spec:
        raise TopologyError(f"{key}.rate_bps", "required")
    rate = _integer(spec["rate_bps"], f"{key}.rate_bps", 1)
    burst = _integer(spec.get("burst_bytes", 15_000), f"{key}.burst_bytes", 1)
    qdisc = spec.get("qdisc", "htb")
    if qdisc not in ("htb", "tbf"):
        raise TopologyError(f"{key}.qdisc", f"must be 'htb' or 'tbf', not {qdisc!r}")
    return HostPacing(rate_bps=rate, burst_bytes=burst, qdisc=qdisc)


def _parse_link(
    index: int, raw: Any, hosts: dict[str, Any], switches: dict[str, Switch]
) -> Link:
    key = f"links[{index}]"
    pacing = None
    mtu = None
    if isinstance(raw, list):
        if len(raw) not in (2, 4):
            raise TopologyError(key, "a list link is [a, b] or [a, b, latency, bandwidth_mbps]")
        a = _parse_endpoint(raw[0], f"{key}[0]", hosts, switches)
        b = _parse_endpoint(raw[1], f"{key}[1]", hosts, switches)
        model = PortModel()
        if len(raw) == 4:
            delay = parse_latency_ns(raw[2], f"{key}[2]")
            mbps = raw[3]
            if isinstance(mbps, bool) or not isinstance(mbps, (int, float)) or mbps < 0:
                raise TopologyError(f"{key}[3]", f"bandwidth in Mbit/s must be >= 0, not {mbps!r}")
            model = PortModel(rate_bps=round(mbps * 1_000_000), delay_ns=delay)
    elif isinstance(raw, dict):
        _check_keys(
            raw, {"a", "b", "rate_bps", "delay_ns", "wire_overhead_bytes", "host_pacing",
                  "mtu_bytes"}, key
        )
        for end in ("a", "b"):
            if end not in raw:
                raise TopologyError(f"{key}.{end}", "required")
        a = _parse_endpoint(raw["a"], f"{key}.a", hosts, switches)
        b = _parse_endpoint(raw["b"], f"{key}.b", hosts, switches)
        model = PortModel(
            rate_bps=_integer(raw.get("rate_bps", 0), f"{key}.rate_bps"),
            delay_ns=_integer(raw.get("delay_ns", 0), f"{key}.delay_ns"),
            wire_overhead_bytes=_integer(
                raw.get("wire_overhead_bytes", WIRE_OVERHEAD_BYTES), f"{key}.wire_overhead_bytes"
            ),
        )
        if "host_pacing" in raw:
            pacing = _parse_pacing(raw["host_pacing"], f"{key}.host_pacing")
        if "mtu_bytes" in raw:
            # 68 is IPv4's least MTU; 65535 the most a veth takes.
            mtu = _integer(raw["mtu_bytes"], f"{key}.mtu_bytes", MIN_MTU_BYTES, MAX_MTU_BYTES)
    else:
        raise TopologyError(key, "a link is a list [a, b, ...] or an object {a, b, ...}")
    if not (a.is_switch_port or b.is_switch_port):
        raise TopologyError(key, "links join a host to a switch port or two switch ports")
    if pacing is not None and a.is_switch_port and b.is_switch_port:
        raise TopologyError(f"{key}.host_pacing", "only a link with a host end can pace the host")
    return Link(a=a, b=b, model=model, host_pacing=pacing, mtu_bytes=mtu)


def _check_ports_used_once(links: list[Link]) -> None:
    seen: dict[Endpoint, int] = {}
    for i, link in enumerate(links):
        for end in (link.a, link.b):
            if end in seen:
                where = f"{end.node}-p{end.port}" if end.is_switch_port else end.node
                raise TopologyError(f"links[{i}]", f"{where} is already linked in links[{seen[end]}]")
            seen[end] = i


def _parse_host(name: str, spec: Any, links: list[Link]) -> Host:
    key = f"hosts.{name}"
    spec = _mapping(spec, key)
    _check_keys(spec, {"ip", "mac", "commands"}, key)
    attached = [
        other
        for link in links
        for end, other in ((link.a, link.b), (link.b, link.a))
        if end == Endpoint(name)
    ]
    if not attached:
        raise TopologyError(key, "host is not linked to any switch port")
    sw_index = int(attached[0].node[1:])
    port = attached[0].port or 0
    ip = spec.get("ip")
    mac = spec.get("mac")
    if ip is None or mac is None:
        if sw_index > 99 or port > 99:
            raise TopologyError(key, "give ip and mac: the 10.0.<sw>.<port> plan stops at 99")
    ip = _string(ip, f"{key}.ip") if ip is not None else f"10.0.{sw_index}.{port}/24"
    if "/" not in ip:
        raise TopologyError(f"{key}.ip", f"give the prefix length, e.g. {ip}/24")
    mac = (
        _string(mac, f"{key}.mac")
        if mac is not None
        else f"08:00:00:00:{sw_index:02d}:{port:02d}"
    )
    if not re.fullmatch(r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", mac):
        raise TopologyError(f"{key}.mac", f"not a MAC address: {mac!r}")
    commands = _sequence(spec.get("commands", []), f"{key}.commands")
    for i, command in enumerate(commands):
        _string(command, f"{key}.commands[{i}]")
    return Host(name=name, ip=ip, mac=mac, commands=list(commands))
