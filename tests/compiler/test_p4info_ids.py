"""p4c's P4Info id algorithm and alias rule, checked against ids from p4c's own outputs."""

import pytest

from bufferlab.compiler.p4info.ids import IdError, Prefix, allocate_ids, jenkins_one_at_a_time
from bufferlab.compiler.p4info.names import SuffixSet


def test_ids_from_p4c_outputs():
    ids = allocate_ids(
        [
            (Prefix.TABLE, "ingress.bd", None),
            (Prefix.TABLE, "ingress.ipv4_fib", None),
            (Prefix.ACTION, "NoAction", None),
            (Prefix.CONTROLLER_HEADER, "packet_out_t", None),
        ]
    )
    assert ids[(Prefix.TABLE, "ingress.bd")] == 48392551 == 0x02E26967
    assert ids[(Prefix.TABLE, "ingress.ipv4_fib")] == 41084491
    assert ids[(Prefix.ACTION, "NoAction")] == 21257015
    assert ids[(Prefix.CONTROLLER_HEADER, "packet_out_t")] == 75327753


def test_jenkins_of_empty_input_is_zero():
    assert jenkins_one_at_a_time(b"") == 0


def test_collision_probes_to_next_suffix():
    suffix = jenkins_one_at_a_time(b"NoAction") & 0xFFFFFF
    taken = (Prefix.ACTION << 24) | suffix
    ids = allocate_ids([(Prefix.ACTION, "NoAction", None), (Prefix.ACTION, "other", taken)])
    assert ids[(Prefix.ACTION, "other")] == taken
    assert ids[(Prefix.ACTION, "NoAction")] == taken + 1


def test_explicit_ids_get_prefix_and_reject_wrong_kind_and_duplicates():
    ids = allocate_ids([(Prefix.TABLE, "t", 0x42)])
    assert ids[(Prefix.TABLE, "t")] == 0x02000042
    with pytest.raises(IdError):
        allocate_ids([(Prefix.TABLE, "t", 0x01000042)])
    with pytest.raises(IdError):
        allocate_ids([(Prefix.TABLE, "a", 0x42), (Prefix.TABLE, "b", 0x02000042)])


def test_alias_is_shortest_unique_suffix():
    names = SuffixSet(["MyIngress.ipv4_lpm", "MyIngress.drop", "MyEgress.drop", "NoAction"])
    assert names.alias("MyIngress.ipv4_lpm") == "ipv4_lpm"
    assert names.alias("MyIngress.drop") == "MyIngress.drop"
    assert names.alias("NoAction") == "NoAction"
