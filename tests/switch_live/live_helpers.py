"""Namespaces, veth pairs and a bufferlab-switch process for the live tests.

Hosts live in their own network namespaces (`<tag>h<N>`, interface `eth0`, address
10.0.1.N/24, MAC 08:00:00:00:01:0N); the switch runs in the test's namespace on the other
ends (`<tag>s<N>`), like a Mininet switch. Everything is removed on exit, also when a test
fails.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT_S = 20.0
_COUNTER = itertools.count()


def sh(*args: str) -> str:
    """Run a command; its stdout, or RuntimeError with its stderr."""
    proc = subprocess.run(args, capture_output=True, text=True, check=False, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def host_mac(n: int) -> str:
    """The tutorials' MAC of host n on switch 1."""
    return f"08:00:00:00:01:{n:02x}"


def host_ip(n: int) -> str:
    """The tutorials' address of host n on switch 1."""
    return f"10.0.1.{n}"


@dataclass
class Hosts:
    """N hosts, each linked to one switch port (port n <-> host n)."""

    count: int
    tag: str = field(default_factory=lambda: f"blsw{os.getpid() % 10000}x{next(_COUNTER)}")
    created: list[str] = field(default_factory=list)

    def netns(self, n: int) -> str:
        """Namespace of host n."""
        return f"{self.tag}h{n}"

    def switch_iface(self, n: int) -> str:
        """The switch's interface towards host n (switch port n)."""
        return f"{self.tag}s{n}"

    def __enter__(self) -> Hosts:
        try:
            for n in range(1, self.count + 1):
                ns = self.netns(n)
                sh("ip", "netns", "add", ns)
                self.created.append(ns)
                for key in ("all", "default"):
                    sh("ip", "netns", "exec", ns, "sysctl", "-qw",
                       f"net.ipv6.conf.{key}.disable_ipv6=1")
                sh("ip", "link", "add", self.switch_iface(n), "type", "veth", "peer", "name",
                   "eth0", "netns", ns)
                sh("sysctl", "-qw", f"net.ipv6.conf.{self.switch_iface(n)}.disable_ipv6=1")
                for where, iface in ((None, self.switch_iface(n)), (ns, "eth0")):
                    prefix = ("ip", "netns", "exec", where) if where else ()
                    # Offloads off: every frame MTU-sized, checksums filled in (ports README).
                    sh(*prefix, "ethtool", "-K", iface, "rx", "off", "tx", "off", "sg", "off",
                       "tso", "off", "gso", "off", "gro", "off")
                sh("ip", "-n", ns, "link", "set", "eth0", "address", host_mac(n))
                sh("ip", "-n", ns, "addr", "add", f"{host_ip(n)}/24", "dev", "eth0")
                sh("ip", "-n", ns, "link", "set", "eth0", "up")
                sh("ip", "-n", ns, "link", "set", "lo", "up")
                sh("ip", "link", "set", self.switch_iface(n), "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        # Deleting a namespace deletes its veth end, and with it the switch's end.
        for ns in reversed(self.created):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self.created.clear()
        # The kernel dismantles a deleted namespace (and its veth peers) in the background.
        deadline = time.monotonic() + 10
        while self.leftovers() and time.monotonic() < deadline:
            time.sleep(0.05)

    def leftovers(self) -> list[str]:
        """Namespaces and interfaces of this set still present (none after exit)."""
        names = sh("ip", "-o", "link").split("\n") + sh("ip", "netns", "list").split("\n")
        return [line for line in names if self.tag in line]

    def run(self, n: int, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """A command in host n's namespace."""
        return subprocess.run(["ip", "netns", "exec", self.netns(n), *args], capture_output=True,
                              text=True, check=False, timeout=timeout)

    def send_frames(self, n: int, frames: list[bytes]) -> None:
        """Send raw Ethernet frames from host n's eth0."""
        code = ("import socket,sys\n"
                "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
                "s.bind(('eth0',0))\n"
                "for h in sys.argv[1:]: s.send(bytes.fromhex(h))\n")
        proc = self.run(n, sys.executable, "-c", code, *(f.hex() for f in frames))
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)

    def rx_packets(self, n: int) -> int:
        """Frames host n's eth0 has received."""
        return int(sh("ip", "netns", "exec", self.netns(n), "cat",
                      "/sys/class/net/eth0/statistics/rx_packets"))


class SwitchProcess:
    """bufferlab-switch started with `args`, its log in `log_path`; stopped with SIGTERM.

    `command` runs it under another name (the tutorials' simple_switch_grpc); started means
    `grpc_port` accepts connections (for simple_switch, which has no P4Runtime server of its
    own, pass the Thrift port)."""

    def __init__(self, args: list[str], log_path: Path, grpc_port: int,
                 command: list[str] | None = None) -> None:
        self.log_path = log_path
        self.grpc_port = grpc_port
        argv = [*(command or [sys.executable, "-m", "bufferlab.switch.cli"]), *args]
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"switch exited with {self.process.returncode}:\n{self.log()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", grpc_port)) == 0:
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"switch did not open its gRPC port:\n{self.log()}")

    def log(self) -> str:
        """The switch's log so far."""
        return self.log_path.read_text(errors="replace")

    def log_when(self, text: str, timeout_s: float = 10.0) -> str:
        """The switch's log once it holds `text` (the start-up banner is written just after
        the servers start listening, so a client can connect before it is there), or the
        log as it is after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while text not in (log := self.log()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return log

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """`signum` (SIGTERM, or SIGINT as Ctrl-C), wait (SIGKILL after 10 s); the exit status."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signum)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.process.returncode


@dataclass(frozen=True)
class Certificates:
    """PEM files made for one test: a CA, the switch's certificate for 127.0.0.1/localhost
    and a client certificate (both signed by the CA), and a client certificate signed by
    another CA (a stranger's)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path
    stranger_key: Path


def make_certificates(folder: Path) -> Certificates:
    """Write a CA, server, client and stranger certificates into `folder` (RSA 2048, 1 day)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def key_pem(key: rsa.RSAPrivateKey, path: Path) -> Path:
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
        return path

    def issue(name: str, issuer: x509.Name | None, issuer_key: rsa.RSAPrivateKey | None,
              ca: bool, san: list[x509.GeneralName]) -> tuple[x509.Certificate, rsa.RSAPrivateKey]:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        builder = (x509.CertificateBuilder().subject_name(subject)
                   .issuer_name(issuer or subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(issuer_key or key, hashes.SHA256()), key

    def cert_pem(cert: x509.Certificate, path: Path) -> Path:
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return path

    ca_cert, ca_key = issue("bufferlab test CA", None, None, True, [])
    server, server_key = issue("bufferlab-switch", ca_cert.subject, ca_key, False,
                               [x509.DNSName("localhost"),
                                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client, client_key = issue("controller", ca_cert.subject, ca_key, False,
                               [x509.DNSName("controller")])
    other_ca, other_key = issue("stranger CA", None, None, True, [])
    stranger, stranger_key = issue("controller", other_ca.subject, other_key, False,
                                   [x509.DNSName("controller")])
    return Certificates(
        ca=cert_pem(ca_cert, folder / "ca.pem"),
        server_cert=cert_pem(server, folder / "server.pem"),
        server_key=key_pem(server_key, folder / "server.key"),
        client_cert=cert_pem(client, folder / "client.pem"),
        client_key=key_pem(client_key, folder / "client.key"),
        stranger_cert=cert_pem(stranger, folder / "stranger.pem"),
        stranger_key=key_pem(stranger_key, folder / "stranger.key"),
    )
