"""Command lines of the traffic tools live trials run in Mininet hosts (iperf3, ping), and
parsers for what they print."""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass


def iperf_server_argv(port: int) -> list[str]:
    """An iperf3 server on ``port`` that serves one test, then exits."""
    return ["iperf3", "--server", "--port", str(port), "--one-off"]


def iperf_client_argv(server_ip: str, port: int, tos: int, duration_s: float,
                      congestion: str, window_bytes: int | None = None,
                      streams: int = 1) -> list[str]:
    """An iperf3 TCP client: ``streams`` parallel streams marked ``tos`` for ``duration_s``
    (whole seconds, rounded up) with congestion control ``congestion``, a JSON summary on
    stdout; ``window_bytes`` sets both ends' socket buffers (Linux doubles it), None leaves
    Linux's autotuning."""
    argv = ["iperf3", "--client", server_ip, "--port", str(port), "--tos", str(tos),
            "--time", str(math.ceil(duration_s)), "--congestion", congestion, "--json"]
    if window_bytes is not None:
        argv += ["--window", str(window_bytes)]
    if streams > 1:
        argv += ["--parallel", str(streams)]
    return argv


def ping_argv(dst_ip: str, tos: int, count: int, interval_s: float) -> list[str]:
    """Linux ping marking its echo requests ``tos``, 56 data bytes (the default)."""
    return ["ping", "-n", "-Q", str(tos), "-c", str(count), "-i", f"{interval_s:g}", dst_ip]


@dataclass(frozen=True)
class IperfResult:
    """An iperf3 client's summary: bytes sent and received (by the server), its length."""

    sent_bytes: int
    received_bytes: int
    seconds: float
    retransmits: int

    @property
    def received_bps(self) -> float:
        """Goodput at the receiver, bit/s."""
        return 8 * self.received_bytes / self.seconds if self.seconds else 0.0


def parse_iperf_json(text: str) -> IperfResult:
    """An iperf3 `--json` report; ValueError with iperf3's own message when it failed."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"iperf3 printed no JSON report ({err.msg}): {text[:200]!r}") from None
    if "error" in doc:
        raise ValueError(f"iperf3: {doc['error']}")
    try:
        sent, received = doc["end"]["sum_sent"], doc["end"]["sum_received"]
        return IperfResult(int(sent["bytes"]), int(received["bytes"]), float(received["seconds"]),
                           int(sent.get("retransmits", 0)))
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"iperf3 report without end.sum_sent/sum_received ({err})") from None


_REPLY = re.compile(r"icmp_seq=(\d+) .*time[=<]([\d.]+) ms")
_COUNTS = re.compile(r"(\d+) packets transmitted, (\d+) received")


@dataclass(frozen=True)
class PingResult:
    """One ping run: echo requests sent, replies, and each reply's RTT (ms) by sequence."""

    transmitted: int
    received: int
    rtts_ms: tuple[float, ...]

    def stats_ms(self) -> tuple[float, float, float, float]:
        """min, avg, max and mdev of the RTTs as ping prints them (mdev: the population
        standard deviation), ms; NaN when no reply came."""
        if not self.rtts_ms:
            return (math.nan,) * 4
        n = len(self.rtts_ms)
        avg = sum(self.rtts_ms) / n
        mdev = math.sqrt(max(0.0, sum(r * r for r in self.rtts_ms) / n - avg * avg))
        return min(self.rtts_ms), avg, max(self.rtts_ms), mdev

    def median_ms(self) -> float:
        """The median RTT, ms (NaN when no reply came): unlike the average, not moved by a
        few replies a busy host held back."""
        return statistics.median(self.rtts_ms) if self.rtts_ms else math.nan


def parse_ping(text: str) -> PingResult:
    """Linux ping's output: one line per reply (`icmp_seq=N … time=T ms`) and the summary."""
    counts = _COUNTS.search(text)
    if counts is None:
        raise ValueError(f"ping printed no summary: {text[-200:]!r}")
    replies = {int(m.group(1)): float(m.group(2)) for m in _REPLY.finditer(text)}
    return PingResult(int(counts.group(1)), int(counts.group(2)),
                      tuple(replies[s] for s in sorted(replies)))
