"""Example reaction models written in Python (see `sim/README.md`, "A new congestion signal").

`QcnReaction` is a QCN-style reaction point (congestion.md §1.5) for a congestion point
that sends only negative feedback: each feedback frame cuts the rate multiplicatively by
its 6-bit quantised |Fb|, and a timer (the host sees no data frames, so there is no byte
counter) brings the rate back: fast recovery towards the rate before the cut, then active
increase of the target, until the limiter comes off at line rate.

Use it in a scenario as

    "reaction": {"model": "python", "class": "bufferlab.sim.examples:QcnReaction",
                 "args": {"timer_ns": 1000000, "fb_shift": 5}}
"""

from __future__ import annotations

import struct

from bufferlab.sim.reaction import ReactionContext

#: EtherType of bufferlab's BCN frames (the QCN-style CP sends the same frame).
ETHERTYPE_BCN = 0x88B5
#: EtherType of an 802.1Q tag.
ETHERTYPE_VLAN = 0x8100
#: The largest quantised feedback: 6 bits.
QCN_FB_MAX = 63


def bcn_feedback(frame: bytes) -> tuple[int, int] | None:
    """``(cpid, fb_pages)`` of a BCN frame (p4src/README.md "BCN frame"); None for another frame."""
    at = 12
    if len(frame) >= 16 and struct.unpack_from("!H", frame, at)[0] == ETHERTYPE_VLAN:
        at = 16
    # EtherType, version/flags, reserved, cpid u64, qoff i16, qdelta i16, fb i32.
    if len(frame) < at + 2 + 18:
        return None
    ethertype, ver_flags, _, cpid, _, _, fb = struct.unpack_from("!HBBQhhi", frame, at)
    if ethertype != ETHERTYPE_BCN or ver_flags >> 4 != 0:
        return None
    return cpid, fb


class QcnReaction:
    """QCN-style RP: cut on negative feedback, timer-driven fast recovery and active increase.

    On feedback with Fb < 0: q = min(63, |Fb| >> ``fb_shift``) (``fb_shift`` 0 when the CP
    quantises already), the target TR ← CR, CR ← CR·(1 − ``gd``·q), and the recovery cycle
    restarts. Every ``timer_ns``: during the first
    ``fast_recovery_cycles`` cycles CR ← (CR + TR)/2; after them TR ← TR + ``rai_bps`` first.
    CR never goes below ``min_rate_bps``; at line rate the limiter is removed. Positive
    feedback is ignored (QCN has none). Counters: ``cuts``, ``timer_calls``, ``recoveries``.
    """

    ethertypes: tuple[int, ...] = (ETHERTYPE_BCN,)

    def __init__(self, gd: float = 1 / 128, fb_shift: int = 5, timer_ns: int = 1_000_000,
                 fast_recovery_cycles: int = 5, rai_bps: float = 5e6,
                 min_rate_bps: float = 1e7) -> None:
        """A reaction point with QCN's gains (Gd 1/128, five fast-recovery cycles, R_AI 5 Mbit/s)."""
        if not 0 < gd * QCN_FB_MAX < 1:
            raise ValueError(f"gd {gd}: a cut of gd·63 must stay in (0, 1)")
        if fb_shift < 0 or timer_ns <= 0 or fast_recovery_cycles < 0:
            raise ValueError("fb_shift >= 0, timer_ns > 0 and fast_recovery_cycles >= 0 needed")
        if rai_bps <= 0 or min_rate_bps <= 0:
            raise ValueError("rai_bps and min_rate_bps must be positive")
        self.gd = gd
        self.fb_shift = fb_shift
        self.timer_ns = timer_ns
        self.fast_recovery_cycles = fast_recovery_cycles
        self.rai_bps = rai_bps
        self.min_rate_bps = min_rate_bps
        self.current_bps: float | None = None
        self.target_bps: float | None = None
        self.cycle = 0
        # A cut re-arms the timer; timers set before it carry an older generation and are
        # ignored, so one recovery clock runs at a time.
        self.generation = 0
        self.cuts = 0
        self.timer_calls = 0
        self.recoveries = 0

    def quantise(self, fb_pages: int) -> int:
        """|Fb| as QCN's 6-bit feedback (0 for positive or zero feedback)."""
        if fb_pages >= 0:
            return 0
        return min(QCN_FB_MAX, (-fb_pages) >> self.fb_shift)

    def on_feedback(self, ctx: ReactionContext, frame: bytes) -> None:
        """Cuts the rate by gd·q and restarts the recovery cycle."""
        parsed = bcn_feedback(frame)
        q = self.quantise(parsed[1]) if parsed is not None else 0
        if q == 0:
            return
        current = self.current_bps if self.current_bps is not None else float(ctx.line_rate_bps)
        self.target_bps = current
        self.current_bps = max(self.min_rate_bps, current * (1 - self.gd * q))
        self.cycle = 0
        self.cuts += 1
        self.generation += 1
        ctx.set_rate_bps(self.current_bps)
        ctx.set_timer(ctx.now_ns + self.timer_ns, self.generation)

    def on_timer(self, ctx: ReactionContext, token: int) -> None:
        """One recovery cycle: fast recovery, then active increase; off at line rate."""
        if token != self.generation or self.current_bps is None or self.target_bps is None:
            return
        self.timer_calls += 1
        line = float(ctx.line_rate_bps)
        self.cycle += 1
        if self.cycle > self.fast_recovery_cycles:
            self.target_bps = min(line, self.target_bps + self.rai_bps)
        self.current_bps = (self.current_bps + self.target_bps) / 2
        if line - self.current_bps < 1.0:
            # Back at line rate: the limiter comes off and the episode ends.
            self.current_bps = self.target_bps = None
            self.cycle = 0
            self.recoveries += 1
            ctx.set_rate_bps(None)
            return
        ctx.set_rate_bps(self.current_bps)
        ctx.set_timer(ctx.now_ns + self.timer_ns, token)
