"""Checksums over headers with a varbit field (IPv4 options): the options'
bytes, not their length, enter the Internet checksum."""

import json

import pytest
from engine_helpers import FIXTURES, csum16, mac

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine

# Router Alert option (RFC 2113): type 0x94, length 4, value 0.
ROUTER_ALERT = bytes([0x94, 0x04, 0x00, 0x00])


@pytest.fixture
def options_switch() -> Engine:
    """ipv4_options_checksum.p4 compiled and loaded."""
    doc, _ = compile_p4(FIXTURES / "ipv4_options_checksum.p4")
    return Engine(json.dumps(doc))


def ipv4_with_options(options: bytes, ttl: int = 64, checksum: int | None = None) -> bytes:
    """Ethernet + IPv4 (IHL counts the options) + 4 payload bytes; checksum correct unless given."""
    ihl = 5 + len(options) // 4
    hdr = bytearray(bytes([0x40 | ihl, 0, 0, ihl * 4 + 4, 0, 0, 0x40, 0, ttl, 17, 0, 0]))
    hdr += bytes([10, 0, 0, 1, 10, 0, 0, 2]) + options
    hdr[10:12] = (csum16(bytes(hdr)) if checksum is None else checksum).to_bytes(2, "big")
    return mac(2) + mac(1) + b"\x08\x00" + bytes(hdr) + b"data"


def test_update_checksum_covers_option_bytes(options_switch):
    options_switch.send(0, ipv4_with_options(ROUTER_ALERT), 0)
    options_switch.drain()
    ((port, f, _),) = options_switch.received()
    assert port == 1
    ip = f[14:38]
    assert ip[8] == 63
    assert ip[20:24] == ROUTER_ALERT
    # 4600 001c 0000 4000 3f11 0a00 0001 0a00 0002 9404 0000 sums to 0x16d34 -> 0x6d35 -> ~ = 0x92ca.
    assert int.from_bytes(ip[10:12], "big") == 0x92ca
    assert csum16(ip) == 0
    assert f[38:] == b"data"


def test_verify_checksum_covers_option_bytes(options_switch):
    good = ipv4_with_options(ROUTER_ALERT)
    # A checksum that leaves the option bytes out.
    bad = ipv4_with_options(ROUTER_ALERT, checksum=csum16(good[14:24] + bytes(2) + good[26:34]))
    options_switch.send(0, good, 0)
    options_switch.send(0, bad, 10)
    options_switch.drain()
    assert [p for p, _, _ in options_switch.received()] == [1]
    assert options_switch.stats()["checksum_errors"] == 1
