"""Helpers for the engine tests: fixture paths, frame building, telemetry decoding."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"

# Layout of the `tel` header the meta.json egress appends after Ethernet (name, bits).
TEL_FIELDS = [
    ("enq_ts", 32), ("enq_qdepth", 32), ("deq_timedelta", 32), ("deq_qdepth", 32), ("igts", 48),
    ("egts", 48), ("itype", 8), ("eitype", 8), ("rid", 16), ("eport", 16), ("mark", 8), ("rnd", 16),
    ("hash", 16), ("reg", 32), ("colour", 8), ("post", 8), ("plen", 32),
]
TEL_BYTES = sum(w for _, w in TEL_FIELDS) // 8


def mac(n: int) -> bytes:
    """A MAC address 00:00:00:00:00:nn as bytes."""
    return n.to_bytes(6, "big")


def eth(dst: int, src: int = 0xAA, ethertype: int = 0x9000, payload: bytes = b"", size: int = 0) -> bytes:
    """An Ethernet frame, padded with zeros to `size` bytes."""
    f = mac(dst) + mac(src) + ethertype.to_bytes(2, "big") + payload
    return f + bytes(max(0, size - len(f)))


def tel(frame: bytes, offset: int = 14) -> dict[str, int]:
    """Decodes the telemetry header at `offset`."""
    v = int.from_bytes(frame[offset : offset + TEL_BYTES], "big")
    out = {}
    shift = TEL_BYTES * 8
    for name, w in TEL_FIELDS:
        shift -= w
        out[name] = (v >> shift) & ((1 << w) - 1)
    return out


def csum16(data: bytes) -> int:
    """Internet checksum of `data`."""
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(dst: str, ttl: int = 64, src: str = "10.0.0.1", payload: bytes = b"payload", proto: int = 17) -> bytes:
    """An Ethernet + IPv4 frame with a correct header checksum."""
    import ipaddress

    hdr = bytearray(
        bytes([0x45, 0, 0, 20 + len(payload), 0, 0, 0x40, 0, ttl, proto, 0, 0])
        + ipaddress.IPv4Address(src).packed
        + ipaddress.IPv4Address(dst).packed
    )
    hdr[10:12] = csum16(bytes(hdr)).to_bytes(2, "big")
    return mac(2) + mac(1) + b"\x08\x00" + bytes(hdr) + payload
