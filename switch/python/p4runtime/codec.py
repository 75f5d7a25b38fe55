"""P4Runtime bytestrings (spec "Bytestrings"): canonical form, padding, width checks."""

from __future__ import annotations

from .status import P4RuntimeError


def byte_width(bitwidth: int) -> int:
    """Bytes needed for a `bit<bitwidth>` value (BMv2's padded width)."""
    return (bitwidth + 7) // 8


def canonical(value: bytes) -> bytes:
    """The shortest big-endian string holding the same unsigned value (0 is b"\\x00")."""
    stripped = value.lstrip(b"\x00")
    return stripped if stripped else b"\x00"


def to_int(value: bytes) -> int:
    """The unsigned integer of a big-endian bytestring."""
    return int.from_bytes(value, "big")


def from_int(value: int, bitwidth: int) -> bytes:
    """The padded big-endian form of an unsigned value of `bitwidth` bits."""
    return value.to_bytes(byte_width(bitwidth), "big")


def decode(value: bytes, bitwidth: int, what: str) -> bytes:
    """Check a client bytestring for a `bit<bitwidth>` and return it padded to the width.

    An empty string is INVALID_ARGUMENT; a value that does not fit the bitwidth is
    OUT_OF_RANGE (spec "Bytestrings"); shorter and longer-with-zero-prefix forms are accepted.
    """
    if not value:
        raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: empty bytestring")
    number = to_int(value)
    if number >> bitwidth:
        raise P4RuntimeError(
            "OUT_OF_RANGE",
            f"{what}: bytestring {value.hex()} does not fit within {bitwidth} bits",
        )
    return from_int(number, bitwidth)


def encode(value: bytes) -> bytes:
    """The canonical bytestring for a value the target returned padded."""
    return canonical(value)
