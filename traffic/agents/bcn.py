"""The BCN reaction point (RP) at a host, congestion.md §1.4.

On a BCN with feedback Fb (64-byte pages, |Fb| saturated at Fbmax):
negative ⇒ R ← R·(1 − Gd·|Fb|); positive ⇒ R ← R + Gi·Fb·Ru; severe ⇒ the maximal
decrease (Fb = −Fbmax); R is clamped to [Rmin, line rate]. The first negative BCN
installs the limiter and the rate-limiter tag RLT(CPID); when R climbs back to
line rate the limiter and tag are removed.

One limiter regulates the host's flow (or HTB class); it is tagged with the CPID of
the latest negative BCN, and positive BCNs count only from that congestion point
(the CP sends them only to sources tagged with its CPID, §1.2).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

from bufferlab.traffic import layers, tc
from bufferlab.traffic.agents.listener import FrameListener

_BCN = struct.Struct("!BBQhhiIH")
_ETHERTYPE_VLAN = 0x8100


@dataclass(frozen=True)
class BcnFeedback:
    """The fields of a received BCN frame the RP acts on (qoff, qdelta, fb in 64-byte pages)."""

    cpid: int
    qoff_pages: int
    qdelta_pages: int
    fb_pages: int
    severe: bool
    timestamp_us: int


def parse_bcn(frame: bytes) -> BcnFeedback | None:
    """Decode a BCN frame (untagged or with one 802.1Q tag); None for anything else."""
    offset = 12
    if len(frame) >= 16 and int.from_bytes(frame[12:14], "big") == _ETHERTYPE_VLAN:
        offset = 16
    if len(frame) < offset + 2 + _BCN.size:
        return None
    if int.from_bytes(frame[offset:offset + 2], "big") != layers.ETHERTYPE_BCN:
        return None
    ver_flags, _, cpid, qoff, qdelta, fb, ts, _ = _BCN.unpack_from(frame, offset + 2)
    if ver_flags >> 4 != 0:
        return None
    return BcnFeedback(cpid, qoff, qdelta, fb, bool(ver_flags & 1), ts)


@dataclass(frozen=True)
class RpConfig:
    """RP parameters: rates in bit/s, Gd per 64-byte page, Gi dimensionless (seed 003's values)."""

    line_rate_bps: float
    min_rate_bps: float
    gd_per_page: float = 2.6e-4
    gi: float = 0.53
    ru_bps: float = 1e6
    fb_max_pages: int = 1875  # Qeq·(1 + 2W) with Qeq 375 pages, W 2

    def __post_init__(self) -> None:
        if not 0 < self.min_rate_bps <= self.line_rate_bps:
            raise ValueError(f"need 0 < min_rate_bps <= line_rate_bps: "
                             f"{self.min_rate_bps}, {self.line_rate_bps}")
        if not 0 < self.gd_per_page * self.fb_max_pages < 1:
            raise ValueError(f"gd_per_page·fb_max_pages must be in (0, 1) so a cut keeps R > 0: "
                             f"{self.gd_per_page} × {self.fb_max_pages}")


@dataclass(frozen=True)
class RateChange:
    """The RP's state after acting on one BCN at ``now_ns``."""

    now_ns: int
    rate_bps: float
    limited: bool
    rlt_cpid: int | None


class ReactionPoint:
    """Pure RP logic: feed BCNs with their arrival time, read the regulated rate."""

    def __init__(self, config: RpConfig) -> None:
        """Start unlimited, at line rate."""
        self.config = config
        self.rate_bps = float(config.line_rate_bps)
        self.rlt_cpid: int | None = None
        self.history: list[RateChange] = []
        self.ignored = 0

    @property
    def limited(self) -> bool:
        """Whether a rate limiter is installed."""
        return self.rlt_cpid is not None

    def on_bcn(self, now_ns: int, bcn: BcnFeedback) -> RateChange | None:
        """Act on one BCN; returns the new state, or None when the BCN does not apply."""
        cfg = self.config
        fb = -cfg.fb_max_pages if bcn.severe else max(-cfg.fb_max_pages,
                                                      min(cfg.fb_max_pages, bcn.fb_pages))
        if fb < 0:
            self.rate_bps *= 1 - cfg.gd_per_page * -fb
            self.rlt_cpid = bcn.cpid
        elif fb > 0 and self.limited and bcn.cpid == self.rlt_cpid:
            self.rate_bps += cfg.gi * fb * cfg.ru_bps
        else:
            self.ignored += 1
            return None
        self.rate_bps = max(cfg.min_rate_bps, min(cfg.line_rate_bps, self.rate_bps))
        if self.rate_bps >= cfg.line_rate_bps:
            self.rlt_cpid = None
        change = RateChange(now_ns, self.rate_bps, self.limited, self.rlt_cpid)
        self.history.append(change)
        return change


class RateTarget(Protocol):
    """What the RP regulates: a sender (or HTB class) whose rate and tag can be set."""

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Limit to ``rate_bps``; None removes the limiter."""

    def set_rlt(self, cpid: int | None) -> None:
        """Tag the flow's frames with RLT(cpid); None stops tagging."""


class HtbClassTarget:
    """Applies the RP's rate to one HTB leaf class (rate = ceil = regulated rate).

    tc cannot insert the RLT into frames, so the tag is only recorded here: a CP
    that gates positive BCNs on the tag will not send them to this host, and the
    class recovers only through BCNs the CP sends regardless. Use
    ``sender.RegulatedSender`` where tagging matters.
    """

    def __init__(
        self, dev: str, minor: int, unlimited_rate_bps: int, unlimited_ceil_bps: int,
        netns: str | None = None,
    ) -> None:
        """Remember the class's own rate/ceil, restored when the limiter is removed."""
        self.dev, self.minor, self.netns = dev, minor, netns
        self.unlimited = (unlimited_rate_bps, unlimited_ceil_bps)
        self.rlt_cpid: int | None = None

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Change the class live via tc."""
        if rate_bps is None:
            rate, ceil = self.unlimited
        else:
            rate = ceil = rate_bps
        tc.change_htb_rate(self.dev, self.minor, rate, ceil_bps=ceil, netns=self.netns)

    def set_rlt(self, cpid: int | None) -> None:
        """Record the tag (see the class docstring: frames stay untagged)."""
        self.rlt_cpid = cpid


class BcnAgent:
    """Sniffs a host interface for BCN frames and applies the RP's decisions to a target."""

    def __init__(
        self, dev: str, rp: ReactionPoint, target: RateTarget, netns: str | None = None
    ) -> None:
        """Prepare the agent; start() (or a ``with`` block) opens the interface and listens."""
        self.rp = rp
        self.target = target
        self.dev, self.netns = dev, netns
        self._listener: FrameListener | None = None

    def on_frame(self, frame: bytes, rx_ns: int) -> None:
        """Apply one received frame (anything but BCN is ignored)."""
        bcn = parse_bcn(frame)
        if bcn is None:
            return
        change = self.rp.on_bcn(rx_ns, bcn)
        if change is None:
            return
        self.target.set_rate_bps(round(change.rate_bps) if change.limited else None)
        self.target.set_rlt(change.rlt_cpid)

    def start(self) -> BcnAgent:
        """Start listening."""
        self._listener = FrameListener(self.dev, self.on_frame, self.netns,
                                       ethertype=layers.ETHERTYPE_BCN).start()
        return self

    def stop(self) -> None:
        """Stop listening (re-raises an error the frame handler hit)."""
        if self._listener is not None:
            listener, self._listener = self._listener, None
            listener.stop()

    def __enter__(self) -> BcnAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
