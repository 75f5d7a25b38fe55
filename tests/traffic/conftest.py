"""Generic network-namespace fixtures for traffic tests (namespaces, veth pairs, bridges).

Every name starts with ``blt`` and a random suffix, and everything a test created is
removed in the fixture's finalizer, even when the test fails. Tests marked
``@pytest.mark.root`` are skipped with a reason when not run as root.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass

import pytest

from bufferlab.traffic import layers


def pytest_runtest_setup(item):
    """Skip root-marked tests, with the reason, when not running as root."""
    if item.get_closest_marker("root") is not None and os.geteuid() != 0:
        pytest.skip("needs root: creates network namespaces, veth pairs and qdiscs")


def ip(*args: str) -> None:
    """Run ``ip args`` and fail with ip's own message."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def in_ns(netns: str, *cmd: str) -> str:
    """Run a command inside a namespace; return its stdout, fail with its stderr."""
    done = subprocess.run(["ip", "netns", "exec", netns, *cmd], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{netns}: {' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Endpoint:
    """One end of a veth: namespace, device, IPv4 address (no prefix) and MAC."""

    netns: str
    dev: str
    ip: str | None
    mac: str


class NetnsLab:
    """Creates uniquely named namespaces, veths and bridges; cleanup() removes them all."""

    def __init__(self) -> None:
        self.prefix = "blt" + uuid.uuid4().hex[:5]
        self.namespaces: list[str] = []
        self._macs = 0

    def netns(self, role: str) -> str:
        """A new namespace ``<prefix><n><role>`` with loopback up and IPv6 off (no stray frames)."""
        name = f"{self.prefix}{len(self.namespaces)}{role}"
        ip("netns", "add", name)
        self.namespaces.append(name)
        ip("-n", name, "link", "set", "lo", "up")
        for key in ("all", "default"):
            in_ns(name, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        return name

    def _mac(self) -> str:
        self._macs += 1
        return f"02:b1:ab:00:{self._macs >> 8:02x}:{self._macs & 0xFF:02x}"

    def veth(
        self,
        ns_a: str,
        dev_a: str,
        ns_b: str,
        dev_b: str,
        ip_a: str | None = None,
        ip_b: str | None = None,
        prefix_len: int = 24,
        mtu: int | None = None,
    ) -> tuple[Endpoint, Endpoint]:
        """A veth pair ns_a/dev_a <-> ns_b/dev_b, up, with optional addresses and MTU."""
        mac_a, mac_b = self._mac(), self._mac()
        ip("-n", ns_a, "link", "add", dev_a, "address", mac_a, "type", "veth", "peer", "name",
           dev_b, "address", mac_b, "netns", ns_b)
        for ns, dev, addr in ((ns_a, dev_a, ip_a), (ns_b, dev_b, ip_b)):
            if mtu is not None:
                ip("-n", ns, "link", "set", dev, "mtu", str(mtu))
            if addr is not None:
                ip("-n", ns, "addr", "add", f"{addr}/{prefix_len}", "dev", dev)
            ip("-n", ns, "link", "set", dev, "up")
        return Endpoint(ns_a, dev_a, ip_a, mac_a), Endpoint(ns_b, dev_b, ip_b, mac_b)

    def bridge(self, netns: str, name: str, ports: list[str]) -> None:
        """A Linux bridge in ``netns`` enslaving ``ports``: no STP, and no multicast snooping,
        whose router discovery would send IGMP reports out of the ports."""
        ip("-n", netns, "link", "add", name, "type", "bridge", "stp_state", "0",
           "mcast_snooping", "0")
        for port in ports:
            ip("-n", netns, "link", "set", port, "master", name)
        ip("-n", netns, "link", "set", name, "up")

    @staticmethod
    def static_fdb(netns: str, port: str, mac: str) -> None:
        """A static bridge forwarding entry: frames to ``mac`` leave by ``port`` only."""
        done = subprocess.run(["bridge", "-n", netns, "fdb", "replace", mac, "dev", port,
                               "master", "static"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"bridge fdb replace {mac} dev {port}: {done.stderr.strip()}")

    @staticmethod
    def neighbour(at: Endpoint, peer_ip: str, peer_mac: str) -> None:
        """A permanent ARP entry, so the first frames are not held back by ARP."""
        ip("-n", at.netns, "neigh", "replace", peer_ip, "lladdr", peer_mac, "dev", at.dev,
           "nud", "permanent")

    def cleanup(self) -> None:
        """Delete every namespace created (their veths and bridges go with them)."""
        for name in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        self.namespaces.clear()


@pytest.fixture
def netns_lab():
    """A NetnsLab whose namespaces are removed after the test, pass or fail."""
    lab = NetnsLab()
    try:
        yield lab
    finally:
        lab.cleanup()


@dataclass(frozen=True)
class VethPair:
    """Sender and receiver ends of a veth pair between two namespaces."""

    tx: Endpoint
    rx: Endpoint


def make_veth_pair(lab: NetnsLab, mtu: int | None = None) -> VethPair:
    """Namespaces <prefix><n>tx and <prefix><n>rx joined by tx0 (10.201.0.1) <-> rx0 (10.201.0.2)."""
    tx_ns, rx_ns = lab.netns("tx"), lab.netns("rx")
    tx, rx = lab.veth(tx_ns, "tx0", rx_ns, "rx0", "10.201.0.1", "10.201.0.2", mtu=mtu)
    lab.neighbour(tx, rx.ip, rx.mac)
    lab.neighbour(rx, tx.ip, tx.mac)
    return VethPair(tx, rx)


@pytest.fixture
def veth_pair(netns_lab):
    """A VethPair (MTU 1500) between two fresh namespaces."""
    return make_veth_pair(netns_lab)


@pytest.fixture
def jumbo_veth_pair(netns_lab):
    """A VethPair with MTU 9000 for jumbo frames."""
    return make_veth_pair(netns_lab, mtu=9000)


#: The MACs of `link`'s two ends: the host as the lab's plan names h1 of s1, and the switch
#: side as port 4 of switch 1 (`layers.port_mac(1, 4)`), where BCN and PAUSE frames come from.
LINK_HOST_MAC = "08:00:00:00:01:01"
LINK_SWITCH_MAC = layers.port_mac(1, 4)


@pytest.fixture
def link():
    """One namespace holding veth ha (host) <-> sw (switch side), for host-agent tests."""
    netns = f"blag{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        for cmd in (["link", "add", "ha", "address", LINK_HOST_MAC, "type", "veth", "peer",
                     "name", "sw", "address", LINK_SWITCH_MAC],
                    ["link", "set", "ha", "up"], ["link", "set", "sw", "up"]):
            subprocess.run(["ip", "-n", netns, *cmd], check=True)
        yield netns
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=False)
