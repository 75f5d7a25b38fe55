"""Parameters of the TCP validation: the grid of cells, the trial's timing, the bands.

A cell is one network and workload: a TCP bulk flow (`linux-today` in virtual time, the
kernel's CUBIC live) from `snd` to `rcv` through one bufferlab-switch whose port towards
`rcv` is the bottleneck (rate R, the P4 admission capping its queue at a fraction of the
BDP), a round-trip time, and with or without a bursty UDP background from `udp` to `rcv`.
Every rate is one the live switch carries on this 2-core machine (README "Scaling").
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

MBIT = 1_000_000
MS = 1_000_000
#: The IP MTU of every link (bytes): Linux's default.
MTU_BYTES = 1500
#: A full frame as the switch receives it (Ethernet header, no FCS) and on the wire
#: (plus 24 bytes of preamble, gap and FCS).
FRAME_BYTES = MTU_BYTES + 14
FRAME_WIRE_BYTES = FRAME_BYTES + 24
#: TCP payload per segment: the MTU less IPv4 and TCP headers. The host models carry no
#: TCP options on data segments, so the live hosts run without timestamps (README).
MSS_BYTES = MTU_BYTES - 40
#: The TCP profile the live kernel is compared with.
PROFILE = "linux-today"


def bdp_bytes(rate_bps: int, rtt_ns: int) -> int:
    """Bandwidth-delay product, bytes."""
    return rate_bps * rtt_ns // 8_000_000_000


@dataclass(frozen=True)
class Cell:
    """One cell of the grid: bottleneck rate (bit/s), RTT (ns), the buffer as a fraction
    of the BDP, and whether the bursty UDP background runs."""

    rate_bps: int
    rtt_ns: int
    buffer_bdp: float
    background: bool

    @property
    def bdp_bytes(self) -> int:
        """The path's BDP, bytes."""
        return bdp_bytes(self.rate_bps, self.rtt_ns)

    @property
    def buffer_bytes(self) -> int:
        """The bottleneck queue's cap, bytes (at least one full frame)."""
        return max(FRAME_BYTES, round(self.buffer_bdp * self.bdp_bytes))

    @property
    def name(self) -> str:
        """`100M-10ms-0.25bdp-bg`: the cell in file names, progress lines and tables."""
        return (f"{self.rate_bps // MBIT}M-{self.rtt_ns // MS}ms-{self.buffer_bdp:g}bdp-"
                f"{'bg' if self.background else 'nobg'}")


@dataclass(frozen=True)
class ValidationConfig:
    """The grid, timing and bands; errors name the key."""

    rates_bps: tuple[int, ...] = (100 * MBIT,)
    rtts_ns: tuple[int, ...] = (10 * MS, 50 * MS)
    buffers_bdp: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
    backgrounds: tuple[bool, ...] = (False, True)
    #: TCP flows per cell (each its own iperf3 live), all from `snd` to `rcv`.
    flows: int = 1
    #: Seconds of TCP counted, after `omit_s` left out (iperf3's -t and -O).
    trial_s: int = 15
    omit_s: int = 3
    #: Seconds the background runs before TCP starts (and after it ends, live).
    lead_s: int = 1
    #: The senders' NIC (links of `snd`) as a multiple of the bottleneck: the queue forms
    #: in the switch, not in the sender's qdisc.
    nic_factor: int = 10
    #: The background's mean rate as a share of the bottleneck, and its timer: each tick
    #: it sends what is due back to back at its NIC's rate (the bottleneck rate).
    background_share: float = 0.2
    background_timer_ms: float = 10.0
    #: Live trials per cell; their spread sets the drop band (README "The bands").
    live_repeats: int = 3
    #: Goodput: |virtual - live| / live at most this.
    goodput_tolerance: float = 0.10
    #: Drops: the band is live mean × (1 ± drop_band) widened by drop_floor_frames; None
    #: measures it from the run's own live spread (2 × the pooled coefficient of
    #: variation), falling back to DEFAULT_DROP_BAND with fewer than two trials a cell.
    drop_band: float | None = None
    drop_floor_frames: int = 10
    #: The switch's packet thread busy above this share of a core means it was saturated:
    #: the trial is invalid.
    cpu_saturation: float = 0.9
    #: Virtual time's seed.
    seed: int = 1

    def __post_init__(self) -> None:
        for key in ("rates_bps", "rtts_ns", "buffers_bdp", "backgrounds"):
            if not getattr(self, key):
                raise ValueError(f"{key}: at least one value")
        if any(r < MBIT or r > 1000 * MBIT for r in self.rates_bps):
            raise ValueError(f"rates_bps: from 1 Mbit/s to 1 Gbit/s, not {self.rates_bps}")
        if any(r < MS or r > 500 * MS for r in self.rtts_ns):
            raise ValueError(f"rtts_ns: from 1 ms to 500 ms, not {self.rtts_ns}")
        if any(b <= 0 or b > 16 for b in self.buffers_bdp):
            raise ValueError(f"buffers_bdp: above 0 and at most 16, not {self.buffers_bdp}")
        if not 1 <= self.flows <= 8:
            raise ValueError(f"flows: 1 to 8, not {self.flows}")
        if self.trial_s < 2 or self.omit_s < 0 or self.lead_s < 0:
            raise ValueError("trial_s: at least 2 s; omit_s, lead_s: 0 or more (whole "
                             f"seconds, as iperf3 takes them), not {self.trial_s}, "
                             f"{self.omit_s}, {self.lead_s}")
        if self.nic_factor < 1:
            raise ValueError(f"nic_factor: at least 1, not {self.nic_factor}")
        if not 0 < self.background_share < 1:
            raise ValueError(f"background_share: between 0 and 1, not {self.background_share}")
        if not 0 < self.background_timer_ms <= 1000:
            raise ValueError("background_timer_ms: above 0 and at most 1000, not "
                             f"{self.background_timer_ms}")
        if self.live_repeats < 1:
            raise ValueError(f"live_repeats: at least 1, not {self.live_repeats}")
        if not 0 < self.goodput_tolerance < 1:
            raise ValueError(f"goodput_tolerance: between 0 and 1, not {self.goodput_tolerance}")
        if self.drop_band is not None and not 0 < self.drop_band <= 10:
            raise ValueError(f"drop_band: above 0 and at most 10, not {self.drop_band}")
        if self.drop_floor_frames < 0:
            raise ValueError(f"drop_floor_frames: 0 or more, not {self.drop_floor_frames}")
        if not 0 < self.cpu_saturation <= 1:
            raise ValueError(f"cpu_saturation: above 0 and at most 1, not {self.cpu_saturation}")

    def cells(self) -> list[Cell]:
        """Every cell, rate-major: rate, RTT, background, buffer."""
        return [Cell(rate, rtt, buffer, background) for rate in self.rates_bps
                for rtt in self.rtts_ns for background in self.backgrounds
                for buffer in self.buffers_bdp]

    @property
    def duration_s(self) -> int:
        """A trial's length in the scenario: the lead, the omitted seconds and the counted."""
        return self.lead_s + self.omit_s + self.trial_s

    def with_overrides(self, **changes: Any) -> ValidationConfig:
        """A copy with the non-None ``changes`` (unknown keys are an error)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: unknown key")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


#: The drop band used when the run has no live spread of its own (one trial a cell): twice
#: the pooled CV of the live drops measured here (0.132 over 16 cells of 3 trials, README
#: "Measured here").
DEFAULT_DROP_BAND = 0.26
#: The whole grid: 16 cells, three live trials each.
FULL = ValidationConfig()
#: Four cells (10 ms, 0.25 and 1 BDP, both backgrounds), two live trials each, 8-s trials.
QUICK = ValidationConfig(rtts_ns=(10 * MS,), buffers_bdp=(0.25, 1.0), live_repeats=2,
                         trial_s=8, omit_s=2)
