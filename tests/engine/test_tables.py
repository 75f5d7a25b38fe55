"""Match kinds, priorities, default actions, const entries, hit/miss, action
profiles and selectors, direct counters and meters (tables.json).

Ingress picks the table from ipv4.diffserv; the action's result lands in
ipv4.identification of the output frame (0 when the default NoAction ran).
"""

import pytest
from engine_helpers import ipv4

from bufferlab.switch import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
)

TERNARY, RANGE, INDIRECT, SELECTOR, CONST, HITMISS, DMETER, LPM = range(1, 9)


def frame(dst, table=0, ttl=64, src="10.0.0.1", proto=17):
    f = bytearray(ipv4(dst, ttl=ttl, src=src, proto=proto))
    f[15] = table  # diffserv
    return bytes(f)


def result(e, f, t=0):
    e.send(2, f, t)
    e.drain()
    out = e.received()
    assert len(out) == 1
    port, g, _ = out[0]
    return port, int.from_bytes(g[18:20], "big")


@pytest.fixture
def tables():
    from engine_helpers import FIXTURES

    from bufferlab.switch import Engine

    return Engine(FIXTURES / "tables.json")


def test_ternary_lowest_priority_number_wins(tables):
    t = "MyIngress.t_ternary"
    tables.table_add(t, [("10.1.0.0", 0xFFFF0000), 17], "MyIngress.set_res", [1], priority=20)
    tables.table_add(t, [("10.1.2.0", 0xFFFFFF00), 17], "MyIngress.set_res", [2], priority=10)
    tables.table_add(t, [(0, 0), 6], "MyIngress.set_res", [3], priority=30)
    assert result(tables, frame("10.1.2.3", TERNARY)) == (1, 2)
    assert result(tables, frame("10.1.3.3", TERNARY)) == (1, 1)
    assert result(tables, frame("10.9.3.3", TERNARY, proto=6)) == (1, 3)
    assert result(tables, frame("10.9.3.3", TERNARY)) == (0, 0)
    with pytest.raises(AlreadyExistsError):
        tables.table_add(t, [("10.1.2.0", 0xFFFFFF00), 17], "MyIngress.set_res", [9], priority=10)
    # Same key at another priority is a different entry.
    tables.table_add(t, [("10.1.2.0", 0xFFFFFF00), 17], "MyIngress.set_res", [9], priority=5)
    assert result(tables, frame("10.1.2.3", TERNARY)) == (1, 9)


def test_optional_value_on_ternary_key(tables):
    t = "MyIngress.t_ternary"
    tables.table_add(t, {"hdr.ipv4.dstAddr": ("10.0.0.5", 0xFFFFFFFF), "hdr.ipv4.protocol": 17}, "MyIngress.set_res", [4], 1)
    assert result(tables, frame("10.0.0.5", TERNARY)) == (1, 4)


def test_range_match(tables):
    t = "MyIngress.t_range"
    tables.table_add(t, [(10, 20)], "MyIngress.set_res", [1], priority=2)
    tables.table_add(t, [(15, 30)], "MyIngress.set_res", [2], priority=1)
    assert result(tables, frame("10.0.0.1", RANGE, ttl=12)) == (1, 1)
    assert result(tables, frame("10.0.0.1", RANGE, ttl=16)) == (1, 2)
    assert result(tables, frame("10.0.0.1", RANGE, ttl=31)) == (0, 0)
    with pytest.raises(InvalidArgumentError):
        tables.table_add(t, [(30, 10)], "MyIngress.set_res", [1], priority=3)


def test_lpm_with_exact_key(tables):
    t = "MyIngress.t_lpm"
    tables.table_add(t, [("10.0.0.0", 8), 17], "MyIngress.set_res", [8])
    tables.table_add(t, [("10.2.0.0", 16), 17], "MyIngress.set_res", [16])
    tables.table_add(t, [("0.0.0.0", 0), 6], "MyIngress.set_res", [6])
    assert result(tables, frame("10.2.3.4", LPM)) == (1, 16)
    assert result(tables, frame("10.3.3.4", LPM)) == (1, 8)
    assert result(tables, frame("11.3.3.4", LPM, proto=6)) == (1, 6)
    h = tables.table_find(t, [("10.2.0.0", 16), 17])
    tables.table_delete(t, h)
    assert result(tables, frame("10.2.3.4", LPM)) == (1, 8)
    with pytest.raises(NotFoundError):
        tables.table_delete(t, h)


def test_exact_multi_key_with_mask_and_validity_and_direct_counter(tables):
    t = "MyIngress.t_exact_multi"
    # The protocol key has mask 0xf0 (p4c's form of a key on the slice protocol[7:4]). As in
    # BMv2, the masked field is matched in place: protocol & 0xf0 against the entry's value
    # as given, so 0x10 matches 0x11 and 0x1f, and the slice's own value 0x1 matches nothing.
    slice_value = tables.table_add(t, ["10.0.0.1", "10.0.0.2", 0x1, 1], "MyIngress.set_res", [6])
    assert result(tables, frame("10.0.0.2")) == (0, 0)
    tables.table_delete(t, slice_value)
    h = tables.table_add(t, ["10.0.0.1", "10.0.0.2", 0x10, 1], "MyIngress.set_res", [5])
    assert result(tables, frame("10.0.0.2")) == (1, 5)
    assert result(tables, frame("10.0.0.2", proto=0x1F)) == (1, 5)
    assert result(tables, frame("10.0.0.2", proto=0x21)) == (0, 0)
    assert tables.table_counter(t, h) == (2, 2 * len(frame("10.0.0.2")))
    (entry,) = tables.table_entries(t)
    assert entry["action"] == "MyIngress.set_res" and entry["data"] == [5] and entry["packets"] == 2
    tables.table_modify(t, h, "MyIngress.set_res", [6])
    assert result(tables, frame("10.0.0.2")) == (1, 6)
    tables.counter_reset("MyIngress.exact_hits")
    assert tables.table_counter(t, h) == (0, 0)


def test_default_action_changes_and_resets(tables):
    t = "MyIngress.t_exact_multi"
    tables.table_set_default(t, "MyIngress.set_res", [0x42])
    assert tables.table_default(t) == ("MyIngress.set_res", [0x42])
    assert result(tables, frame("10.0.0.9")) == (1, 0x42)
    tables.table_reset_default(t)
    assert result(tables, frame("10.0.0.9")) == (0, 0)


def test_const_entries_and_const_default(tables):
    t = "MyIngress.t_const"
    assert result(tables, frame("10.0.0.9", CONST)) == (1, 0x99)
    assert result(tables, frame("10.0.0.8", CONST)) == (1, 7)
    with pytest.raises(PermissionDeniedError):
        tables.table_add(t, ["10.0.0.1"], "MyIngress.set_res", [1])
    with pytest.raises(PermissionDeniedError):
        tables.table_set_default(t, "NoAction", [])
    (entry,) = tables.table_entries(t)
    assert entry["const"] and entry["keys"] == [("exact", 0x0A000009, None)]


def test_hit_miss_successors(tables):
    tables.table_add("MyIngress.t_hitmiss", ["10.0.0.3"], "NoAction", [])
    assert result(tables, frame("10.0.0.3", HITMISS)) == (1, 0xAAAA)
    assert result(tables, frame("10.0.0.4", HITMISS)) == (1, 0xBBBB)


def test_action_profile_members(tables):
    p, t = "MyIngress.prof", "MyIngress.t_indirect"
    tables.profile_member_set(p, 1, "MyIngress.set_res", [0x11])
    tables.profile_member_set(p, 2, "MyIngress.set_res", [0x22])
    tables.table_add_member(t, ["10.0.0.3"], 2)
    assert result(tables, frame("10.0.0.3", INDIRECT)) == (1, 0x22)
    tables.profile_member_set(p, 2, "MyIngress.set_res", [0x23], modify=True)
    assert result(tables, frame("10.0.0.3", INDIRECT)) == (1, 0x23)
    with pytest.raises(FailedPreconditionError):
        tables.profile_member_delete(p, 2)
    with pytest.raises(NotFoundError):
        tables.table_add_member(t, ["10.0.0.4"], 9)
    with pytest.raises(AlreadyExistsError):
        tables.profile_member_set(p, 1, "MyIngress.set_res", [0])
    with pytest.raises(InvalidArgumentError):
        tables.table_add(t, ["10.0.0.5"], "MyIngress.set_res", [1])


def test_selector_group_spreads_by_hash(tables):
    p, t = "MyIngress.sel", "MyIngress.t_selector"
    for m in range(4):
        tables.profile_member_set(p, m, "MyIngress.set_res_port", [m, 10 + m])
    tables.profile_group_set(p, 7, [0, 1, 2, 3])
    tables.table_add_group(t, ["10.0.0.3"], 7)
    ports = {}
    for i in range(64):
        src = f"10.1.{i}.1"
        port, res = result(tables, frame("10.0.0.3", SELECTOR, src=src), t=i)
        assert port == 10 + res
        ports[src] = port
        # The same flow always takes the same member.
        assert result(tables, frame("10.0.0.3", SELECTOR, src=src), t=i)[0] == port
    assert set(ports.values()) == {10, 11, 12, 13}
    with pytest.raises(NotFoundError):
        tables.profile_group_set(p, 8, [0, 9])


def test_group_or_member_in_use_cannot_be_deleted(tables):
    p, t = "MyIngress.sel", "MyIngress.t_selector"
    for m in range(2):
        tables.profile_member_set(p, m, "MyIngress.set_res_port", [m, 10 + m])
    tables.profile_group_set(p, 7, [0, 1])
    h = tables.table_add_group(t, ["10.0.0.3"], 7)
    with pytest.raises(FailedPreconditionError, match="group 7 is in use"):
        tables.profile_group_delete(p, 7)
    with pytest.raises(FailedPreconditionError, match="member 0 is in use"):
        tables.profile_member_delete(p, 0)
    assert tables.profile_groups(p) == [(7, [0, 1])]
    assert result(tables, frame("10.0.0.3", SELECTOR))[0] in (10, 11)
    tables.table_delete(t, h)
    tables.profile_group_delete(p, 7)
    assert tables.profile_groups(p) == []
    tables.profile_member_delete(p, 0)
    assert [m for m, _, _ in tables.profile_members(p)] == [1]


def test_indirect_entry_is_pointed_at_another_member_or_group(tables):
    p, t = "MyIngress.sel", "MyIngress.t_selector"
    tables.profile_member_set(p, 0, "MyIngress.set_res_port", [0x10, 3])
    tables.profile_member_set(p, 1, "MyIngress.set_res_port", [0x11, 4])
    tables.profile_group_set(p, 5, [1])
    h = tables.table_add_member(t, ["10.0.0.3"], 0)
    assert result(tables, frame("10.0.0.3", SELECTOR)) == (3, 0x10)
    tables.table_modify_indirect(t, h, 5, group=True)
    assert result(tables, frame("10.0.0.3", SELECTOR)) == (4, 0x11)
    assert tables.table_entries(t)[0]["group"] == 5
    tables.table_modify_indirect(t, h, 0)
    assert result(tables, frame("10.0.0.3", SELECTOR)) == (3, 0x10)
    with pytest.raises(NotFoundError):
        tables.table_modify_indirect(t, h, 9)
    with pytest.raises(NotFoundError):
        tables.table_modify_indirect(t, h + 100, 1)


def test_direct_meter_colours_per_entry(tables):
    t = "MyIngress.t_direct_meter"
    h = tables.table_add(t, ["10.0.0.3"], "MyIngress.set_res_colour", [])
    assert result(tables, frame("10.0.0.3", DMETER)) == (1, 0)
    tables.table_meter_set(t, h, 1000, 1, 1000, 2)
    colours = [result(tables, frame("10.0.0.3", DMETER), t=10)[1] for _ in range(3)]
    assert colours == [0, 1, 2]


def test_table_errors(tables):
    with pytest.raises(NotFoundError):
        tables.table_add("MyIngress.nope", [1], "NoAction", [])
    with pytest.raises(InvalidArgumentError, match="not one of its actions"):
        tables.table_add("MyIngress.t_range", [(1, 2)], "MyIngress.hit_mark", [], priority=1)
    with pytest.raises(InvalidArgumentError, match="does not fit"):
        tables.table_add("MyIngress.t_range", [(1, 2)], "MyIngress.set_res", [1 << 16], priority=1)
    with pytest.raises(InvalidArgumentError, match="wider than the key"):
        tables.table_add("MyIngress.t_exact_multi", [1 << 32, 1, 1, 1], "MyIngress.set_res", [1])
    with pytest.raises(InvalidArgumentError):
        tables.table_add("MyIngress.t_exact_multi", {"hdr.ipv4.srcAddr": 1}, "MyIngress.set_res", [1])


def test_table_capacity(tables):
    t = "MyIngress.t_exact_multi"
    for i in range(1024):
        tables.table_add(t, [i, 0, 0, 1], "NoAction", [])
    with pytest.raises(ResourceExhaustedError):
        tables.table_add(t, [5000, 0, 0, 1], "NoAction", [])
    tables.table_clear(t)
    assert tables.table_entries(t) == []


def test_optional_match_spec_on_ternary_key(tables):
    t = "MyIngress.t_ternary"
    tables.table_add(t, [("10.0.0.0", 0xFF000000), 17], "MyIngress.set_res", [1], priority=2)
    h = tables.table_add(t, [("10.0.0.0", 0xFF000000), 17], "MyIngress.set_res", [2], priority=1)
    tables.table_delete(t, h)
    # Optional "don't care" on the dst key: the raw engine call takes kind tuples.
    from bufferlab.switch import _engine

    _engine.Engine.table_add(tables, t, [("optional", None, None), ("exact", 17, None)], "MyIngress.set_res", [3], 1)
    assert result(tables, frame("11.0.0.1", TERNARY)) == (1, 3)


def test_read_back_profiles_meters_groups_and_sessions(tables):
    tables.profile_member_set("MyIngress.sel", 2, "MyIngress.set_res_port", [5, 6])
    tables.profile_member_set("MyIngress.sel", 1, "MyIngress.set_res_port", [7, 8])
    tables.profile_group_set("MyIngress.sel", 4, [2, 1])
    assert tables.profile_members("MyIngress.sel") == [
        (1, "MyIngress.set_res_port", [7, 8]),
        (2, "MyIngress.set_res_port", [5, 6]),
    ]
    assert tables.profile_groups("MyIngress.sel") == [(4, [2, 1])]
    assert tables.profile_names() == ["MyIngress.prof", "MyIngress.sel"]
    h = tables.table_add("MyIngress.t_direct_meter", ["10.0.0.3"], "MyIngress.set_res_colour", [])
    assert tables.table_meter_get("MyIngress.t_direct_meter", h) is None
    tables.table_meter_set("MyIngress.t_direct_meter", h, 100, 10, 200, 20)
    assert tables.table_meter_get("MyIngress.t_direct_meter", h) == (100, 10, 200, 20)
    h2 = tables.table_add("MyIngress.t_exact_multi", [1, 2, 0, 1], "NoAction", [])
    tables.table_counter_write("MyIngress.t_exact_multi", h2, 5, 500)
    assert tables.table_counter("MyIngress.t_exact_multi", h2) == (5, 500)
    tables.mc_group_set(9, [(1, 1)])
    tables.mc_group_set(3, [(2, 1)])
    assert tables.mc_groups() == [3, 9]
    tables.clone_session_set(12, port=3)
    assert tables.clone_sessions() == [12]
    assert tables.clone_session_get(12) == (3, None, None)
