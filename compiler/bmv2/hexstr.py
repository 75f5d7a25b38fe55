"""BMv2 `hexstr` values written as p4c writes them (formats.md §1.4)."""

from __future__ import annotations


def byte_width(bits: int) -> int:
    """Bytes needed to hold `bits` bits (at least one)."""
    return max(1, (bits + 7) // 8)


def hexstr(value: int, bits: int | None = None) -> str:
    """Lowercase `0x…` text of `value`; zero-padded to whole bytes of `bits` when given."""
    sign = "-" if value < 0 else ""
    magnitude = -value if value < 0 else value
    digits = f"{magnitude:x}"
    if bits is not None:
        digits = digits.rjust(2 * byte_width(bits), "0")
    return f"{sign}0x{digits}"

