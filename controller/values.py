"""Values as users write them (ints, hex, IPv4/IPv6, MAC) and as P4Runtime carries them (bytestrings).

P4Runtime bytestrings are big-endian; the canonical form is the shortest one that holds
the value (zero is one byte). Every value is checked against its field's width here,
so a wrong value is reported by name before anything reaches a switch.
"""

from __future__ import annotations

import ipaddress
import re

MAC = re.compile(r"^([0-9a-fA-F]{2})([:-][0-9a-fA-F]{2}){5}$")


class BadValue(ValueError):
    """A value that does not parse or does not fit its field (message says which and why)."""


def parse_value(text: int | str, bitwidth: int, what: str) -> int:
    """An int from `text` (int, decimal, 0x/0b/0o, IPv4/IPv6, MAC), checked to fit `bitwidth` bits."""
    if isinstance(text, bool):
        raise BadValue(f"{what}: expected a number, not {text!r}")
    if isinstance(text, int):
        value = text
    elif isinstance(text, str):
        value = _parse_text(text.strip(), bitwidth, what)
    else:
        raise BadValue(f"{what}: expected a number or string, not {text!r}")
    if value < 0:
        raise BadValue(f"{what}: {text!r} is negative")
    if value >> bitwidth:
        raise BadValue(f"{what}: {text!r} does not fit in {bitwidth} bits")
    return value


def _parse_text(text: str, bitwidth: int, what: str) -> int:
    if MAC.match(text) and bitwidth == 48:
        return int(re.sub(r"[:-]", "", text), 16)
    if bitwidth == 32 and text.count(".") == 3:
        try:
            return int(ipaddress.IPv4Address(text))
        except ipaddress.AddressValueError as err:
            raise BadValue(f"{what}: {text!r} is not an IPv4 address") from err
    if bitwidth == 128 and ":" in text:
        try:
            return int(ipaddress.IPv6Address(text))
        except ipaddress.AddressValueError as err:
            raise BadValue(f"{what}: {text!r} is not an IPv6 address") from err
    try:
        return int(text.replace("_", ""), 0)
    except ValueError as err:
        raise BadValue(f"{what}: cannot read {text!r} as a {bitwidth}-bit value") from err


def encode(value: int, bitwidth: int) -> bytes:
    """The canonical P4Runtime bytestring of `value` (shortest big-endian, zero is one byte)."""
    if value < 0 or value >> bitwidth:
        raise BadValue(f"{value} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    """The unsigned value of a big-endian bytestring."""
    return int.from_bytes(data, "big")


def prefix_mask(prefix_len: int, bitwidth: int) -> int:
    """The mask with the top `prefix_len` bits of a `bitwidth`-bit field set."""
    return ((1 << prefix_len) - 1) << (bitwidth - prefix_len)
