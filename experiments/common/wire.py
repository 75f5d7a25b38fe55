"""Ethernet wire timing of a tester port: when each frame's first and last bit cross the link.

Frame sizes are RFC 2544's (Ethernet header to FCS, FCS included). On the wire every frame
also takes 8 bytes of preamble and SFD before it and at least 12 bytes of inter-frame gap
after it, so at line rate one frame occupies ``frame + 20`` byte times (its *slot*); a load
of ρ stretches the slot to ``(frame + 20) / ρ`` byte times. All times are integer ns, floored
from exact rational arithmetic, so a stream of any length has no accumulated rounding.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

PREAMBLE_BYTES = 8  # preamble 7 + SFD 1
IFG_BYTES = 12
FCS_BYTES = 4
SLOT_EXTRA_BYTES = PREAMBLE_BYTES + IFG_BYTES
NS_PER_S = 1_000_000_000
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 1518


def load_fraction(load_pct: float | int | str | Fraction) -> Fraction:
    """A load in percent of line rate (e.g. 49.8) as an exact fraction of line rate."""
    ratio = Fraction(str(load_pct)) / 100
    if not 0 < ratio <= 1:
        raise ValueError(f"load {load_pct} %: must be above 0 and at most 100 % of line rate")
    return ratio


def slot_ns(frame_bytes: int, rate_bps: int, load: Fraction = Fraction(1)) -> Fraction:
    """Time from one frame's start to the next one's at ``load``, ns (exact)."""
    return Fraction((frame_bytes + SLOT_EXTRA_BYTES) * 8 * NS_PER_S, rate_bps) / load


def frame_ns(frame_bytes: int, rate_bps: int) -> Fraction:
    """Time from a frame's first preamble bit to its last FCS bit, ns (exact)."""
    return Fraction((PREAMBLE_BYTES + frame_bytes) * 8 * NS_PER_S, rate_bps)


def ifg_ns(rate_bps: int) -> Fraction:
    """Length of the minimum inter-frame gap, ns (exact)."""
    return Fraction(IFG_BYTES * 8 * NS_PER_S, rate_bps)


def frames_in(duration_ns: int, frame_bytes: int, rate_bps: int, load: Fraction) -> int:
    """Frames whose slot starts within ``duration_ns`` of the stream's start (0 if it is
    not positive)."""
    if duration_ns <= 0:
        return 0
    slot = slot_ns(frame_bytes, rate_bps, load)
    return -(-Fraction(duration_ns) // slot)


def check_frame_size(frame_bytes: int) -> None:
    """Raises ValueError for a frame below Ethernet's minimum."""
    if frame_bytes < MIN_FRAME_BYTES:
        raise ValueError(f"frame size {frame_bytes} bytes is below Ethernet's {MIN_FRAME_BYTES}")


def last_bit_in_ns(count: int, frame_bytes: int, rate_bps: int, load: Fraction = Fraction(1),
                   start_ns: int = 0) -> np.ndarray:
    """When the last bit of each of ``count`` frames (sent at ``load`` from ``start_ns``)
    has crossed the link, ns (int64): slot start k·slot plus the frame's own duration,
    floored."""
    check_frame_size(frame_bytes)
    slot = slot_ns(frame_bytes, rate_bps, load)
    own = frame_ns(frame_bytes, rate_bps)
    # One common denominator keeps the arithmetic in integers.
    den = slot.denominator * own.denominator
    step = slot.numerator * own.denominator
    first = own.numerator * slot.denominator
    if count * step + first < 2**63:
        # In place: a full-size trial has millions of frames per port.
        t = np.arange(count, dtype=np.int64)
        t *= step
        t += first
        t //= den
        t += start_ns
        return t
    # Rates whose exact slot has a large denominator: whole integers, one frame at a time.
    return np.array([start_ns + (k * step + first) // den for k in range(count)],
                    dtype=np.int64)

