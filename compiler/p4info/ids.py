"""P4Info id allocation exactly as p4c does it (formats.md §3.2–3.3).

Controllers persist ids, so ours must equal p4c's: a kind prefix in the top byte and a
24-bit suffix from Jenkins' one-at-a-time hash of the control-plane name, with linear
probing on collisions, names visited in byte order per kind.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

_MASK32 = 0xFFFFFFFF


class Prefix(IntEnum):
    """Top byte of a P4Info id per object kind (p4info.proto `P4Ids.Prefix`)."""

    ACTION = 0x01
    TABLE = 0x02
    VALUE_SET = 0x03
    CONTROLLER_HEADER = 0x04
    ACTION_PROFILE = 0x11
    COUNTER = 0x12
    DIRECT_COUNTER = 0x13
    METER = 0x14
    DIRECT_METER = 0x15
    REGISTER = 0x16
    DIGEST = 0x17


class IdError(ValueError):
    """An `@id` that clashes with another or carries the wrong kind prefix."""


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' 32-bit one-at-a-time hash, wrapping like p4c's uint32 arithmetic."""
    h = 0
    for c in data:
        h = (h + c) & _MASK32
        h = (h + (h << 10)) & _MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & _MASK32
    h ^= h >> 11
    h = (h + (h << 15)) & _MASK32
    return h


def explicit_id(prefix: int, annotated: int) -> int:
    """The full id for an `@id(n)`: n's top byte must be 0 or the kind's prefix."""
    top = (annotated >> 24) & 0xFF
    if top not in (0, prefix):
        raise IdError(f"@id 0x{annotated:08x} does not carry the prefix 0x{prefix:02x} of its kind")
    return (prefix << 24) | (annotated & 0xFFFFFF)


def allocate_ids(symbols: Iterable[tuple[int, str, int | None]]) -> dict[tuple[int, str], int]:
    """Ids for (prefix, name, @id or None) symbols; one pass over every kind as p4c does."""
    by_prefix: dict[int, list[tuple[str, int | None]]] = {}
    for prefix, name, annotated in symbols:
        by_prefix.setdefault(int(prefix), []).append((name, annotated))
    used: set[int] = set()
    result: dict[tuple[int, str], int] = {}
    for prefix, entries in by_prefix.items():
        for name, annotated in entries:
            if annotated is None:
                continue
            full = explicit_id(prefix, annotated)
            if full in used:
                raise IdError(f"@id 0x{full:08x} of {name!r} is already used")
            used.add(full)
            result[(prefix, name)] = full
    for prefix in sorted(by_prefix):
        pending = sorted(
            {name for name, annotated in by_prefix[prefix] if annotated is None},
            key=lambda n: n.encode(),
        )
        for name in pending:
            h = jenkins_one_at_a_time(name.encode())
            while True:
                candidate = (prefix << 24) | (h & 0xFFFFFF)
                if candidate not in used:
                    break
                h = (h + 1) & _MASK32
            used.add(candidate)
            result[(prefix, name)] = candidate
    return result
