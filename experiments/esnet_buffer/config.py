"""Parameters of the ESnet buffer study (seed 004): the seed's grid and figures, the scaling,
the presets.

The seed ran a 10 Gbit/s bottleneck with 50 ms of RTT. The live switch does not forward
10 Gbit/s on two shared cores, so every rate is multiplied by k (`scale`) and every buffer
too, while the RTT stays 50 ms: buffer / BDP, background / link and paced rate / link are
the seed's (README "Scaling").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

#: The seed's bottleneck and path.
SEED_LINK_BPS = 10_000_000_000
RTT_NS = 50_000_000
#: The seed's jumbo MTU (bytes of IP packet); a full frame on Linux adds the 14-byte header.
MTU_BYTES = 9000
FRAME_BYTES = MTU_BYTES + 14
#: The same frame on the link: plus 24 bytes of preamble, gap and FCS.
FRAME_WIRE_BYTES = FRAME_BYTES + 24
#: Background frames: the generator's largest (9000 bytes with FCS, 8996 on Linux), close to
#: the TCP flows' 9014-byte jumbo frames.
UDP_FRAME_BYTES = 9000
#: TCP streams per trial (`iperf3 -P 2`).
STREAMS = 2
MB = 1_000_000


def bdp_bytes(link_bps: int, rtt_ns: int = RTT_NS) -> int:
    """Bandwidth-delay product, bytes."""
    return link_bps * rtt_ns // (8 * 1_000_000_000)


def sqrt_n_bytes(link_bps: int, streams: int = STREAMS) -> int:
    """Appenzeller et al.'s BDP / √n for ``streams`` long flows, bytes."""
    return round(bdp_bytes(link_bps) / math.sqrt(streams))


def burst_frames(rate_bps: int, timer_ms: float) -> int:
    """UDP frames a sender at ``rate_bps`` has due per ``timer_ms`` tick (at least 1)."""
    return max(1, round(rate_bps * timer_ms / 1000 / (8 * UDP_FRAME_BYTES)))


def scaled(value: int, k: float) -> int:
    """``value`` (bytes, bit/s or packets) times k, rounded."""
    return round(value * k)


@dataclass(frozen=True)
class SeedRow:
    """One row of a seed table: the setting (buffer bytes, paced bit/s or hold packets),
    packets dropped (a range where the seed gave one) and TCP throughput, bit/s."""

    setting: int
    drops: tuple[int, int]
    throughput_bps: float


def _rows(*rows: tuple[int, tuple[int, int] | int, float]) -> tuple[SeedRow, ...]:
    return tuple(SeedRow(s, d if isinstance(d, tuple) else (d, d), t) for s, d, t in rows)


G = 1_000_000_000
#: Experiment 1 (Juniper MX80, 2 Gbit/s UDP background): buffer → drops, throughput.
SEED_BUFFER = _rows((120 * MB, 0, 8 * G), (60 * MB, 0, 8 * G), (36 * MB, 200, 2 * G),
                    (24 * MB, 205, 2 * G), (12 * MB, 204, 2 * G), (6 * MB, 207, 2 * G))
#: Experiment 1 with pacing, 12 MB buffer, by background (bit/s): paced rate → drops, throughput.
SEED_PACED = {
    2 * G: _rows((3 * G, 0, 8 * G), (4 * G, 0, 8 * G), (5 * G, 0, 8 * G), (6 * G, 212, 1.5 * G)),
    3 * G: _rows((3 * G, 0, 8 * G), (4 * G, 0, 8 * G), (5 * G, 53, 2.5 * G),
                 (6 * G, 203, 1.5 * G)),
}
#: The buffer the pacing runs used.
SEED_PACED_BUFFER_BYTES = 12 * MB
#: Experiment 2 (Cisco 6506 hold queue, 2 Gbit/s background): packets → drops, throughput.
SEED_HOLD = _rows((2000, (700, 800), 5 * G), (4096, (250, 550), 8.5 * G))
#: Experiment 2 with pacing, hold queue 4096 packets: paced rate → drops, throughput.
SEED_HOLD_PACED = _rows((5 * G, (5, 10), 8 * G), (6 * G, (200, 400), 8 * G),
                        (7 * G, (200, 400), 8 * G), (8 * G, (200, 400), 1.5 * G))
SEED_HOLD_PACED_PACKETS = 4096
#: The seed's background levels, bit/s (20 % and 30 % of the link).
SEED_BACKGROUNDS = (2 * G, 3 * G)
#: Worlds a run can use: the live lab (Mininet, scaled by k) or virtual time (bufferlab-sim
#: at the seed's own scale).
BACKENDS = ("live", "virtual")
#: The TCP host models' profiles (`bufferlab.sim.TcpFlow`) virtual time may run.
VIRTUAL_PROFILES = ("linux-2010", "linux-today", "newreno")
#: Linux 2.6's tcp_adv_win_scale (2): a receiver advertises 3/4 of its buffer, the rest
#: being the kernel's overhead per segment.
ADVERTISED_SHARE = 0.75


@dataclass(frozen=True)
class EsnetConfig:
    """The study's parameters (seed units: bytes, bit/s, packets at 10 Gbit/s; k scales
    them); errors name the key."""

    #: Live bottleneck / seed bottleneck.
    k: float = 0.1
    trial_s: float = 30.0
    #: Seconds iperf3 leaves out at the start (`-O`): slow start, as the seed's `-O5`.
    omit_s: float = 5.0
    congestion: str = "cubic"
    #: Further congestion controls for the buffer table at the seed's background (bbr:
    #: this kernel offers it; it paces itself, the question pacing asks).
    extra_congestion: tuple[str, ...] = ("bbr",)
    backgrounds_bps: tuple[int, ...] = SEED_BACKGROUNDS
    buffers_bytes: tuple[int, ...] = tuple(r.setting for r in SEED_BUFFER)
    paced_bps: tuple[int, ...] = tuple(r.setting for r in SEED_PACED[2 * G])
    paced_buffer_bytes: int = SEED_PACED_BUFFER_BYTES
    hold_packets: tuple[int, ...] = tuple(r.setting for r in SEED_HOLD)
    hold_paced_bps: tuple[int, ...] = tuple(r.setting for r in SEED_HOLD_PACED)
    hold_paced_packets: int = SEED_HOLD_PACED_PACKETS
    #: The hosts' TCP autotuning limit per socket (tcp_rmem / tcp_wmem max), bytes at the
    #: seed's scale: ESnet's fasterdata tuning for 10 Gbit/s hosts on long paths, 64 MiB.
    #: The seed's big buffers lost nothing, so its windows were bounded: this bound.
    tcp_buffer_bytes: int = 64 * 1024 * 1024
    #: Trials repeated when the switch lost a frame outside admission.
    attempts: int = 2
    #: The UDP background's send timer, ms: each tick it sends what is due at once, at its
    #: NIC's rate (the link's). The seed's tool, iperf3 up to 3.1.3, ticked every 100 ms
    #: (esnet/iperf#386, #460): 2 Gbit/s left as 25 MB bursts of 20 ms at 10 Gbit/s. The
    #: timer is not scaled, as the RTT is not. 0 sends frame by frame (iperf3 3.2 and
    #: later tick every 1 ms: nearly smooth).
    background_timer_ms: float = 100.0
    #: Further `net.ipv4.tcp_*` settings for both TCP hosts (e.g. "tcp_recovery=0" turns
    #: RACK off): a way to try older loss recovery against the seed's hosts.
    tcp_sysctls: tuple[str, ...] = ()
    #: "live" (Mininet, scaled by k) or "virtual" (bufferlab-sim, k = 1: the seed's scale).
    backend: str = "live"
    #: Virtual time: the TCP host models' profiles, each running the whole grid (the
    #: seed's 2010 hosts, and today's beside them).
    profiles: tuple[str, ...] = ("linux-2010", "linux-today")

    def __post_init__(self) -> None:
        if not 0 < self.k <= 1:
            raise ValueError(f"k: must be above 0 and at most 1, not {self.k}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend: {self.backend!r} is not one of {', '.join(BACKENDS)}")
        if self.backend == "virtual":
            self._check_virtual()
        elif self.trial_s < 3:
            raise ValueError(f"trial_s: at least 3 s, not {self.trial_s}")
        if not 0 <= self.omit_s < self.trial_s:
            raise ValueError(f"omit_s: must be 0 or more and below trial_s, not {self.omit_s}")
        if self.tcp_buffer_bytes < 1_000_000:
            raise ValueError(f"tcp_buffer_bytes: at least 1 MB, not {self.tcp_buffer_bytes}")
        if self.attempts < 1:
            raise ValueError(f"attempts: at least 1, not {self.attempts}")
        for setting in self.tcp_sysctls:
            name, eq, value = setting.partition("=")
            if not (eq and value and name.startswith("tcp_")
                    and name.replace("_", "").isalnum()):
                raise ValueError(f"tcp_sysctls: {setting!r} is not tcp_<name>=<value>")
        if not 0 <= self.background_timer_ms <= 1000:
            raise ValueError("background_timer_ms: from 0 (frame by frame) to 1000, not "
                             f"{self.background_timer_ms}")
        for key in ("backgrounds_bps", "buffers_bytes", "paced_bps", "hold_packets",
                    "hold_paced_bps"):
            values = getattr(self, key)
            if any(v <= 0 for v in values):
                raise ValueError(f"{key}: every value must be positive, got {values}")
        if any(b >= SEED_LINK_BPS for b in self.backgrounds_bps):
            raise ValueError(f"backgrounds_bps: below the link's {SEED_LINK_BPS} bit/s")
        if any(p > SEED_LINK_BPS for p in (*self.paced_bps, *self.hold_paced_bps)):
            raise ValueError(f"paced rates: at most the link's {SEED_LINK_BPS} bit/s")

    def _check_virtual(self) -> None:
        """What virtual time needs: the seed's own scale and the host models' profiles."""
        if self.k != 1:
            raise ValueError(f"k: virtual time runs the seed's scale, k = 1, not {self.k}")
        if self.trial_s < MIN_VIRTUAL_TRIAL_S:
            raise ValueError(f"trial_s: at least {MIN_VIRTUAL_TRIAL_S} s, not {self.trial_s}")
        if self.extra_congestion or self.tcp_sysctls:
            raise ValueError("extra_congestion, tcp_sysctls: the live kernel's; virtual time "
                             "runs the TCP host models' profiles")
        unknown = [p for p in self.profiles if p not in VIRTUAL_PROFILES]
        if not self.profiles or unknown or len(set(self.profiles)) != len(self.profiles):
            raise ValueError(f"profiles: one or more of {', '.join(VIRTUAL_PROFILES)}, each "
                             f"once, not {self.profiles}")

    @property
    def receive_window_bytes(self) -> int:
        """What a receiver with ``tcp_buffer_bytes`` advertises (× k), bytes."""
        return round(self.live(self.tcp_buffer_bytes) * ADVERTISED_SHARE)

    @property
    def link_bps(self) -> int:
        """The live bottleneck, bit/s."""
        return scaled(SEED_LINK_BPS, self.k)

    @property
    def bdp_bytes(self) -> int:
        """The live path's BDP, bytes (the seed's 62.5 MB × k)."""
        return bdp_bytes(self.link_bps)

    def background_burst_frames(self, background_bps: int) -> int:
        """Frames the live background sends per timer tick at ``background_bps`` (live)."""
        return burst_frames(background_bps, self.background_timer_ms)

    def live(self, seed_value: int) -> int:
        """A seed rate (bit/s) or buffer (bytes, packets) at the live scale."""
        return scaled(seed_value, self.k)

    def with_overrides(self, **changes: Any) -> EsnetConfig:
        """A copy with the non-None ``changes`` (unknown keys are an error)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: unknown key")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


#: The seed's timing: 30-s trials, 5 s left out.
FULL = EsnetConfig()
#: 12-s trials (3 s left out): the whole study in about a third of the time.
QUICK = EsnetConfig(trial_s=12.0, omit_s=3.0)
#: Shortest virtual trial, s: a few RTTs of 50 ms.
MIN_VIRTUAL_TRIAL_S = 0.5
#: Virtual time at the seed's scale and timing (30-s trials, 5 s left out; ~1 min of wall
#: time per trial here).
VIRTUAL_FULL = EsnetConfig(k=1.0, backend="virtual", extra_congestion=())
#: Virtual time, 10-s trials (2 s left out).
VIRTUAL_QUICK = replace(VIRTUAL_FULL, trial_s=10.0, omit_s=2.0)
