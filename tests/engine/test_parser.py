"""Parser paths and errors (parser.json): header stacks, unions, varbit
extraction, lookahead, advance, verify, value sets, verify_checksum.

Ingress prepends a 5-byte report header: parser_error (8 bits),
checksum_error (8 bits), the 16 bits looked ahead by the parser, and a
validity mask (1 u.a, 2 u.b, 4 opt, 8 any member of union u).
"""

import pytest
from engine_helpers import FIXTURES, csum16

from bufferlab.switch import AlreadyExistsError, Engine, NotFoundError, ResourceExhaustedError

ETH = bytes(range(1, 13))
NO_ERROR, PACKET_TOO_SHORT, STACK_OUT_OF_BOUNDS, HEADER_TOO_SHORT, BAD_VERSION = 0, 1, 3, 4, 7


@pytest.fixture
def parser():
    return Engine(FIXTURES / "parser.json")


def through(e, frame):
    e.send(1, frame, e.now())
    e.drain()
    ((_, out, _),) = e.received()
    return out[:5], out[5:]


UA, UB, OPT, UNION = 1, 2, 4, 8


def report(perr=0, cerr=0, la=0, valid=0):
    return bytes([perr, cerr]) + la.to_bytes(2, "big") + bytes([valid])


def test_stack_until_bottom_of_stack(parser):
    frame = ETH + b"\x81\x00" + b"\x05\x00" + b"\x06\x01" + b"rest"
    rep, out = through(parser, frame)
    assert rep == report()
    assert out == frame


def test_stack_overflow_is_stack_out_of_bounds(parser):
    frame = ETH + b"\x81\x00" + b"\x01\x00\x02\x00\x03\x00\x04\x01" + b"rest"
    rep, out = through(parser, frame)
    assert rep == report(STACK_OUT_OF_BOUNDS)
    # The three extracted elements stay valid; the fourth is left in the payload.
    assert out == frame


def test_truncated_header_is_packet_too_short(parser):
    frame = ETH + b"\x81\x00" + b"\x05"
    rep, out = through(parser, frame)
    assert rep == report(PACKET_TOO_SHORT)
    assert out == frame
    assert parser.stats()["parser_errors"] == 1


def test_union_keeps_only_last_extracted_member(parser):
    rep, out = through(parser, ETH + b"\x00\xaa" + b"\xaa\xbb" + b"rest")
    assert rep == report(valid=UA | UNION)
    assert out == ETH + b"\x00\xaa" + b"\xaa\xbb" + b"rest"
    rep, out = through(parser, ETH + b"\x00\xab" + b"\x11\x22" + b"\x33\x44\x55\x66" + b"rest")
    # u.a was extracted (its bytes consumed) then invalidated by extracting u.b.
    assert rep == report(valid=UB | UNION)
    assert out == ETH + b"\x00\xab" + b"\x33\x44\x55\x66" + b"rest"


def test_varbit_extract(parser):
    frame = ETH + b"\x00\xcc" + b"\x03" + b"abc" + b"rest"
    rep, out = through(parser, frame)
    assert rep == report(valid=OPT) and out == frame


def test_varbit_longer_than_max_is_header_too_short(parser):
    frame = ETH + b"\x00\xcc" + b"\x09" + b"abcdefghi" + b"rest"
    rep, out = through(parser, frame)
    assert rep == report(HEADER_TOO_SHORT) and out == frame


def test_verify_sets_program_error(parser):
    rep, _ = through(parser, ETH + b"\x00\xdd" + b"\xde\xad\x00\x00")
    assert rep[0] == BAD_VERSION


def test_verify_checksum_sets_checksum_error_but_forwards(parser):
    good = ETH + b"\x00\xdd" + b"\x12\x34" + csum16(b"\x12\x34").to_bytes(2, "big")
    rep, out = through(parser, good)
    assert rep == report() and out == good
    bad = ETH + b"\x00\xdd" + b"\x12\x34\x00\x00"
    rep, out = through(parser, bad)
    assert rep == report(cerr=1) and out == bad
    assert parser.stats()["checksum_errors"] == 1


def test_lookahead_set_advance_and_lookahead_key(parser):
    rep, out = through(parser, ETH + b"\x00\xee" + b"\xbe\xef" + b"\x7f\x00" + b"rest")
    assert rep == report(la=0xBEEF, valid=UA | UNION)
    # advance skipped the two looked-at bytes; the lookahead key chose u.a.
    assert out == ETH + b"\x00\xee" + b"\x7f\x00" + b"rest"
    rep, out = through(parser, ETH + b"\x00\xee" + b"\xbe\xef" + b"\x01\x00")
    assert out == ETH + b"\x00\xee" + b"\x01\x00"


def test_lookahead_past_end_is_packet_too_short(parser):
    rep, _ = through(parser, ETH + b"\x00\xee" + b"\xbe")
    assert rep[0] == PACKET_TOO_SHORT


def test_value_set_membership(parser):
    frame = ETH + b"\x12\x34" + b"\x01\x02\x03\x04"
    assert through(parser, frame) == (report(), frame)
    parser.value_set_add("MyParser.pvs", 0x1234)
    with pytest.raises(AlreadyExistsError):
        parser.value_set_add("MyParser.pvs", 0x1234)
    assert through(parser, frame) == (report(valid=UB | UNION), frame)
    parser.value_set_clear("MyParser.pvs")
    assert through(parser, frame) == (report(), frame)
    for v in range(4):
        parser.value_set_add("MyParser.pvs", v)
    with pytest.raises(ResourceExhaustedError):
        parser.value_set_add("MyParser.pvs", 9)


def test_value_set_remove_and_list(parser):
    frame = ETH + b"\x12\x34" + b"\x01\x02\x03\x04"
    parser.value_set_add("MyParser.pvs", 0x1234)
    parser.value_set_add("MyParser.pvs", 0x5600, 0xFF00)
    assert parser.value_set_values("MyParser.pvs") == [(0x1234, 0xFFFF), (0x5600, 0xFF00)]
    assert through(parser, frame) == (report(valid=UB | UNION), frame)
    parser.value_set_remove("MyParser.pvs", 0x1234)
    assert parser.value_set_values("MyParser.pvs") == [(0x5600, 0xFF00)]
    assert through(parser, frame) == (report(), frame)
    with pytest.raises(NotFoundError):
        parser.value_set_remove("MyParser.pvs", 0x1234)
    with pytest.raises(NotFoundError):
        parser.value_set_remove("MyParser.pvs", 0x5600)  # added with a mask: removed with it
    parser.value_set_remove("MyParser.pvs", 0x56AA, 0xFF00)
    assert parser.value_set_values("MyParser.pvs") == []
    with pytest.raises(NotFoundError):
        parser.value_set_values("MyParser.nope")


US1_B, US0_A = 16, 32


def test_union_stack_extract_last_field_key_and_copy(parser):
    # us[0] gets member a; its field a == 0 selects member b for us[1].
    # Ingress copies the whole union stack into us2, emitted after us.
    stack = b"\x00\x00" + b"\x11\x22\x33\x44"
    rep, out = through(parser, ETH + b"\x00\xfa" + stack + b"rest")
    assert rep == report(valid=US0_A | US1_B)
    assert out == ETH + b"\x00\xfa" + stack + stack + b"rest"
    rep, out = through(parser, ETH + b"\x00\xfa" + b"\x00\x01" + b"\x11\x22\x33\x44")
    assert rep == report(valid=US0_A)
    assert out == ETH + b"\x00\xfa" + b"\x00\x01" * 2 + b"\x11\x22\x33\x44"
