"""QCN-style Fb quantisation as the TNA port's `bcn_quantise` entries.

The v1model program quantises Fb with two 64-bit multiplies (`bcn_feedback`'s
multipliers); Tofino has no such multiply, so the TNA port looks the sampled Fb up in a
ternary table keyed by (port, queue, Fb as two's complement bit<32>) whose action gives
the quantised Fb (p4src/tna/include/bcn.p4). Each run of Fb values with one quantised
value becomes the ternary prefixes that cover it exactly, so the port sends what
`config.quantised_fb_pages` computes for every Fb, saturated ones included.
"""

from __future__ import annotations

from bufferlab.controller.config import quantised_fb_pages

FB_BITS = 32
_ALL = (1 << FB_BITS) - 1
#: Fb is int<32>: the largest magnitude on each side.
_POSITIVE_MAX = (1 << (FB_BITS - 1)) - 1
_NEGATIVE_MAX = 1 << (FB_BITS - 1)
#: The port's bcn_quantise table size (entries over all congestion points).
TABLE_SIZE = 4096


def prefixes(low: int, high: int) -> list[tuple[int, int]]:
    """The fewest (value, mask) ternary prefixes over 32 bits matching exactly low..high."""
    out = []
    while low <= high:
        size = low & -low if low else 1 << FB_BITS
        while size > high - low + 1:
            size >>= 1
        out.append((low, _ALL ^ (size - 1)))
        low += size
    return out


def _runs(bits: int, range_pages: int) -> list[tuple[int, int, int]]:
    """(first |Fb|, last |Fb|, quantised |Fb|) for each code from 0 up; the last run is
    the saturated one, up to the largest magnitude."""
    steps = (1 << bits) - 1
    out = []
    for code in range(steps + 1):
        first = -(-code * range_pages // steps)
        last = -(-(code + 1) * range_pages // steps) - 1 if code < steps else _NEGATIVE_MAX
        if first <= last:
            out.append((first, last, quantised_fb_pages(first, bits, range_pages)))
    return out


def quantise_entries(bits: int, range_pages: int) -> list[tuple[int, int, int]]:
    """Every (value, mask, quantised Fb as bit<32>) entry one congestion point needs for
    |Fb| in ``bits`` bits over ``range_pages`` pages: positive Fb (0 included), then
    negative."""
    entries = []
    for first, last, magnitude in _runs(bits, range_pages):
        entries += [(v, m, magnitude) for v, m in prefixes(first, min(last, _POSITIVE_MAX))]
    for first, last, magnitude in _runs(bits, range_pages):
        low, high = max(first, 1), last  # -0 is 0, already matched
        if low <= high:
            entries += [(v, m, -magnitude & _ALL)
                        for v, m in prefixes(-high & _ALL, -low & _ALL)]
    return entries
