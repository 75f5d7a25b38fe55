"""What a trial is (`TrialSpec`, at the live scale) and what it returns (`Trial`), and the
`Lab` protocol the runner drives: the live lab, or a test double."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bufferlab.experiments.common.traffic_tools import IperfResult
from bufferlab.experiments.esnet_buffer.accounting import Accounting
from bufferlab.experiments.esnet_buffer.config import STREAMS


@dataclass(frozen=True)
class TrialSpec:
    """One trial at the live scale: the table it belongs to, its seed setting (bytes,
    bit/s or packets, for the seed's row), the bottleneck's rate (bit/s; 0 unshaped), its
    buffer (P4 cap in bytes, or None with a hold queue of ``hold_packets`` packets), the
    sender's HTB rate (bit/s), the UDP background (bit/s) and the frames it sends at once,
    the TCP timing (s) and congestion control."""

    table: str
    seed_setting: int
    link_bps: int
    buffer_bytes: int | None
    hold_packets: int | None
    send_bps: int
    background_bps: int
    trial_s: float
    omit_s: float
    congestion: str = "cubic"
    tcp: bool = True
    streams: int = STREAMS
    background_burst_frames: int = 1


@dataclass(frozen=True)
class Trial:
    """A trial's outcome: iperf3's summary (None without TCP), the UDP frames sent and
    received, where frames were lost, the accounting of earlier lossy attempts and, where
    the backend knows them (virtual time), the TCP senders' retransmission timeouts."""

    spec: TrialSpec
    iperf: IperfResult | None
    udp_sent_frames: int
    udp_received_frames: int
    accounting: Accounting
    reruns: tuple[str, ...] = ()
    tcp_timeouts: int | None = None


class Lab(Protocol):
    """Runs trials (the live lab, or a test double)."""

    def trial(self, spec: TrialSpec) -> Trial:
        """One trial."""
        ...
