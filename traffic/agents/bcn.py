"""The BCN reaction point (RP) at a host, congestion.md §1.4.

On a BCN with feedback Fb (64-byte pages, |Fb| saturated at Fbmax):
negative ⇒ R ← R·(1 − Gd·|Fb|); positive ⇒ R ← R + Gi·Fb·Ru; severe ⇒ the maximal
decrease (Fb = −Fbmax); R is clamped to [Rmin, line rate]. The first negative BCN
installs the limiter and the rate-limiter tag RLT(CPID); when R climbs back to
line rate the limiter and tag are removed.

One limiter regulates the host's flow (or HTB class); it is tagged with the CPID of
the latest negative BCN, and positive BCNs count only from that congestion point
(the CP sends them only to sources tagged with its CPID, §1.2).

The RP and the frame parser are bufferlab-hosts' ``bcn`` module (through
``bufferlab.traffic._hosts``), the code the simulator's hosts run. ``ReactionPoint``
here adds only the history of rate changes the live agent keeps for reports.
"""

from __future__ import annotations

from typing import Protocol

from bufferlab.traffic import _hosts, layers, tc
from bufferlab.traffic._hosts import BcnFeedback, RateChange, RpConfig, parse_bcn
from bufferlab.traffic.agents.listener import FrameListener

__all__ = [
    "BcnAgent",
    "BcnFeedback",
    "HtbClassTarget",
    "RateChange",
    "RateTarget",
    "ReactionPoint",
    "RpConfig",
    "parse_bcn",
]


class ReactionPoint:
    """The RP of bufferlab-hosts fed BCNs with their arrival time, plus ``history``."""

    def __init__(self, config: RpConfig) -> None:
        """Start unlimited, at line rate."""
        self._rp = _hosts.ReactionPoint.from_config(config)
        self.history: list[RateChange] = []

    @property
    def config(self) -> RpConfig:
        """The parameters."""
        return self._rp.config

    @property
    def rate_bps(self) -> float:
        """The regulated rate, bit/s (line rate when unlimited)."""
        return self._rp.rate_bps

    @property
    def rlt_cpid(self) -> int | None:
        """The CPID frames are tagged with, None when no limiter is installed."""
        return self._rp.rlt_cpid

    @property
    def limited(self) -> bool:
        """Whether a rate limiter is installed."""
        return self._rp.limited

    @property
    def ignored(self) -> int:
        """BCNs that did not apply (positive without a matching tag, or Fb = 0)."""
        return self._rp.ignored

    def on_bcn(self, now_ns: int, bcn: BcnFeedback) -> RateChange | None:
        """Act on one BCN; returns the new state (also kept in ``history``), or None."""
        change = self._rp.on_bcn(now_ns, bcn)
        if change is not None:
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
