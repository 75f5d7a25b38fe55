"""What the receiver got: tcpdump in its namespace, read back as per-frame records, and the
goodput of each class per interval.

tcpdump stamps every frame with the kernel's receive time (CLOCK_REALTIME, ns) as it
reaches the receiver's interface, i.e. after the bottleneck; goodput counts TCP payload
bytes, what bbcp and iperf3 report. Frames are assigned to a class by their iperf3 server
port; their TOS byte is kept so the report can show that the data was marked as the switch
saw it (the iperf3 control connection is not marked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scapy.utils import RawPcapReader

from bufferlab.analysis.timeseries import throughput_per_interval
from bufferlab.experiments.qbss.config import CLASSES, TrafficClass
from bufferlab.experiments.qbss.workload import iperf_port

#: Enough of each frame for Ethernet, an IPv4 header with options and a TCP header with options.
SNAP_BYTES = 128
_ETHERNET_BYTES = 14
_DROPPED = re.compile(r"(\d+) packets? dropped by kernel")


def tcpdump_argv(dev: str, path: str | Path, ports: list[int]) -> list[str]:
    """tcpdump writing the headers of TCP frames to ``ports`` into ``path``, ns timestamps."""
    match = " or ".join(f"dst port {p}" for p in ports)
    return ["tcpdump", "-i", dev, "-n", "-s", str(SNAP_BYTES), "--time-stamp-precision=nano",
            "-B", "8192", "-w", str(path), f"ip and tcp and ({match})"]


def tcpdump_drops(stderr_text: str) -> int:
    """Frames tcpdump says the kernel dropped before it could read them (its exit summary)."""
    match = _DROPPED.search(stderr_text)
    if match is None:
        raise ValueError(f"tcpdump printed no drop count: {stderr_text[-200:]!r}")
    return int(match.group(1))


@dataclass(frozen=True)
class Frames:
    """Captured TCP frames: receive time (ns), TOS byte, destination port, payload bytes."""

    rx_ns: np.ndarray
    tos: np.ndarray
    dport: np.ndarray
    payload_bytes: np.ndarray

    def __len__(self) -> int:
        return int(self.rx_ns.size)


def parse_frame(frame: bytes) -> tuple[int, int, int] | None:
    """(TOS, TCP destination port, TCP payload bytes) of an Ethernet/IPv4/TCP frame's
    headers (the payload may be cut off), or None for anything else."""
    if len(frame) < _ETHERNET_BYTES + 20 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return None
    ip_bytes = (frame[_ETHERNET_BYTES] & 0x0F) * 4
    tcp = _ETHERNET_BYTES + ip_bytes
    if ip_bytes < 20 or len(frame) < tcp + 20:
        return None
    total = int.from_bytes(frame[16:18], "big")
    tcp_bytes = (frame[tcp + 12] >> 4) * 4
    payload = total - ip_bytes - tcp_bytes
    return frame[15], int.from_bytes(frame[tcp + 2:tcp + 4], "big"), max(0, payload)


def read_capture(path: str | Path) -> Frames:
    """Every IPv4/TCP frame of a pcap (ns or µs timestamps) as `Frames`, in file order."""
    rx, tos, dport, payload = [], [], [], []
    reader = RawPcapReader(str(path))
    # A nanosecond pcap keeps ns in the field scapy names usec.
    scale = 1 if reader.nano else 1000
    try:
        for frame, meta in reader:
            parsed = parse_frame(frame)
            if parsed is None:
                continue
            rx.append(meta.sec * 1_000_000_000 + meta.usec * scale)
            tos.append(parsed[0])
            dport.append(parsed[1])
            payload.append(parsed[2])
    finally:
        reader.close()
    return Frames(np.asarray(rx, dtype=np.int64), np.asarray(tos, dtype=np.int64),
                  np.asarray(dport, dtype=np.int64), np.asarray(payload, dtype=np.int64))


def class_goodput_bps(frames: Frames, start_ns: int, duration_s: float,
                      interval_s: float) -> dict[str, np.ndarray]:
    """Each class's goodput per interval from ``start_ns`` (bit/s; full intervals only)."""
    interval_ns = round(interval_s * 1e9)
    end_ns = start_ns + round(duration_s * 1e9)
    count = max(1, (end_ns - start_ns) // interval_ns)
    out = {c.name: np.zeros(count) for c in CLASSES}
    queue_of_port = {iperf_port(c): c.queue for c in CLASSES}
    queues = np.array([queue_of_port.get(int(p), -1) for p in frames.dport], dtype=np.int64)
    if len(frames) == 0:
        return out
    series = throughput_per_interval(frames.rx_ns, queues, frames.payload_bytes, interval_ns,
                                     start_ns=start_ns, end_ns=end_ns)
    for c in CLASSES:
        if c.queue in series.rates_bps:
            out[c.name] = series.rates_bps[c.queue]
    return out


def unmarked_payload_bytes(frames: Frames, cls: TrafficClass) -> int:
    """Payload bytes sent to ``cls``'s server whose TOS is not the class's."""
    mine = (frames.dport == iperf_port(cls)) & (frames.tos != cls.tos)
    return int(frames.payload_bytes[mine].sum())
