"""Controller values, P4Info names and entity building: encodings and named errors."""

from pathlib import Path

import pytest

from bufferlab.controller import entities
from bufferlab.controller.p4info import P4InfoIndex, UnknownName, load_p4info
from bufferlab.controller.values import BadValue, encode, parse_value

INDEX = P4InfoIndex(load_p4info(Path(__file__).with_name("small.p4info.txtpb")))


@pytest.mark.parametrize(
    ("text", "width", "value"),
    [(5, 9, 5), ("0x1f", 8, 31), ("0b101", 3, 5), ("1_000", 16, 1000),
     ("10.0.1.1", 32, 0x0A000101), ("08:00:00:00:01:11", 48, 0x080000000111),
     ("2001:db8::1", 128, 0x20010DB8000000000000000000000001)],
)
def test_values_parse_in_the_forms_users_write(text, width, value):
    assert parse_value(text, width, "v") == value


@pytest.mark.parametrize(
    ("text", "width", "message"),
    [(512, 9, "does not fit in 9 bits"), (-1, 8, "negative"), ("ten", 8, "cannot read"),
     (True, 1, "expected a number"), ("10.0.1.300", 32, "not an IPv4 address")],
)
def test_bad_values_say_what_and_why(text, width, message):
    with pytest.raises(BadValue, match=message):
        parse_value(text, width, "port")


def test_encoding_is_canonical():
    assert encode(0, 9) == b"\x00"
    assert encode(99, 16) == b"\x63"
    assert encode(0x1FF, 9) == b"\x01\xff"


def test_names_resolve_by_full_name_alias_and_unique_suffix():
    assert INDEX.get("table", "MyIngress.ipv4_lpm").preamble.id == 37375156
    assert INDEX.get("table", "ipv4_lpm").preamble.id == 37375156
    assert INDEX.get("action", "ipv4_forward").preamble.id == 28792405
    assert INDEX.get("table", "MyEgress.acl").preamble.id == 44506256
    # "acl" is MyIngress.acl's alias even though MyEgress.acl also ends in "acl".
    assert INDEX.get("table", "acl").preamble.id == 41243186
    with pytest.raises(UnknownName, match="no table named 'lpm'.*MyIngress.ipv4_lpm"):
        INDEX.get("table", "lpm")


def test_lpm_entry_masks_host_bits_and_encodes_params():
    entry = entities.table_entry(INDEX, "ipv4_lpm", match={"hdr.ipv4.dstAddr": ["10.0.1.77", 24]},
                                 action_name="ipv4_forward",
                                 params={"dstAddr": "08:00:00:00:01:11", "port": 1})
    (match,) = entry.match
    assert (match.field_id, match.lpm.value, match.lpm.prefix_len) == (1, b"\x0a\x00\x01\x00", 24)
    assert entry.action.action.action_id == 28792405
    assert [(p.param_id, p.value) for p in entry.action.action.params] == [
        (1, b"\x08\x00\x00\x00\x01\x11"), (2, b"\x01")]
    assert entry.priority == 0


def test_dont_care_matches_are_left_out_and_priorities_are_checked():
    entry = entities.table_entry(INDEX, "acl", match={"hdr.ethernet.srcAddr": ["0x0", "0x0"],
                                                      "meta.l4_dport": [80, 88]},
                                 action_name="drop", priority=10)
    assert [m.field_id for m in entry.match] == [2]
    assert (entry.match[0].range.low, entry.match[0].range.high) == (b"\x50", b"\x58")
    full = entities.table_entry(INDEX, "acl", match={"meta.l4_dport": [0, 65535]},
                                action_name="drop", priority=1)
    assert list(full.match) == []
    with pytest.raises(BadValue, match="needs a priority"):
        entities.table_entry(INDEX, "acl", match={"meta.l4_dport": [80, 88]}, action_name="drop")
    with pytest.raises(BadValue, match="no ternary/range/optional key, so no priority"):
        entities.table_entry(INDEX, "ipv4_lpm", match={"hdr.ipv4.dstAddr": "10.0.0.0/8"},
                             action_name="drop", priority=3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"action_name": "ipv4_forward", "params": {"dstAddr": 1}}, "needs parameter 'port'"),
     ({"action_name": "ipv4_forward", "params": {"dstAddr": 1, "port": 1, "ttl": 3}},
      "has no parameter 'ttl'"),
     ({"action_name": "ipv4_forward", "params": {"dstAddr": 1, "port": 600}},
      r"action_params.port: 600 does not fit in 9 bits"),
     ({"match": {"hdr.ipv4.dstAddr": ["10.0.0.0", 33]}, "action_name": "drop"},
      "prefix length 33 exceeds 32 bits"),
     ({"match": {"hdr.ipv4.srcAddr": "10.0.0.0/8"}}, "has no key field 'hdr.ipv4.srcAddr'")],
)
def test_bad_entries_name_the_part_at_fault(kwargs, message):
    with pytest.raises((BadValue, UnknownName), match=message):
        entities.table_entry(INDEX, "ipv4_lpm", what="table_entries[0]", **kwargs)


def test_table_refuses_an_action_it_does_not_list():
    with pytest.raises(BadValue, match="table 'acl' cannot run action 'ipv4_forward'"):
        entities.table_entry(INDEX, "acl", match={"meta.l4_dport": [1, 2]}, priority=1,
                             action_name="ipv4_forward", params={"dstAddr": 1, "port": 1})


def test_pre_entries_and_reads():
    group = entities.multicast_group(1, [(1, 0), (2, 0)])
    assert [(r.egress_port, r.instance) for r in group.multicast_group_entry.replicas] == [
        (1, 0), (2, 0)]
    session = entities.clone_session(100, [(3, 1)], packet_length_bytes=128)
    assert session.clone_session_entry.packet_length_bytes == 128
    with pytest.raises(BadValue, match="positive"):
        entities.multicast_group(0, [])
    assert entities.counter_entry(INDEX, "port_drops", 3).index.index == 3
    assert not entities.register_entry(INDEX, "occupancy").HasField("index")
