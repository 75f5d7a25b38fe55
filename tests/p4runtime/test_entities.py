"""Write/read round trips of every entity: the target gets exactly the translated call and
reads come back canonical."""

from p4.v1 import p4runtime_pb2

from bufferlab.switch.p4runtime import target as tgt

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)
L2_FWD, ACL, ROUTES, ECMP, ETHERTYPE, SET_DEFAULTS = range(33554433, 33554439)
NO_ACTION, SET_PORT, DROP = 16777217, 16777218, 16777219
INT32_MAX = 2**31 - 1


def table_entity(table_id, matches=(), action=None, params=(), priority=0, **fields):
    entity = p4runtime_pb2.Entity()
    entry = entity.table_entry
    entry.table_id = table_id
    entry.priority = priority
    for field_id, kind, values in matches:
        match = entry.match.add(field_id=field_id)
        target = getattr(match, kind)
        for name, value in values.items():
            setattr(target, name, value)
    if action is not None:
        entry.action.action.action_id = action
        for param_id, value in params:
            entry.action.action.params.add(param_id=param_id, value=value)
    for name, value in fields.items():
        if isinstance(value, dict):
            getattr(entry, name).SetInParent()
            for key, item in value.items():
                setattr(getattr(entry, name), key, item)
        else:
            setattr(entry, name, value)
    return entity


MAC_1 = b"\x00\x00\x00\x00\x00\x01"


def test_exact_entry_insert_read_modify_delete(stub, primary, target, helpers):
    # Padded and canonical bytestrings are both accepted; the target gets padded values.
    entity = table_entity(L2_FWD, [(1, "exact", {"value": b"\x00" + MAC_1})], SET_PORT,
                          [(1, b"\x03")])
    stub.Write(helpers.write_request((INSERT, entity)))
    key = (tgt.MatchParam("exact", MAC_1),)
    assert target.calls[-1] == (
        "table_add", "MyIngress.l2_fwd",
        tgt.TableEntry(key, tgt.ActionCall("MyIngress.set_port", (b"\x00\x03",)), 0))

    read = helpers.read_entities(stub, table_entity(L2_FWD))
    assert len(read) == 1
    entry = read[0].table_entry
    assert entry.match[0].exact.value == b"\x01"  # canonical on reads
    assert entry.action.action.action_id == SET_PORT
    assert entry.action.action.params[0].value == b"\x03"
    assert entry.priority == 0 and not entry.is_const

    modified = table_entity(L2_FWD, [(1, "exact", {"value": b"\x01"})], DROP,
                            metadata=b"cookie-1", controller_metadata=9)
    stub.Write(helpers.write_request((MODIFY, modified)))
    assert target.calls[-1] == (
        "table_modify", "MyIngress.l2_fwd", tgt.TableEntry(key, tgt.ActionCall("MyIngress.drop")))
    entry = helpers.read_entities(stub, table_entity(L2_FWD))[0].table_entry
    assert entry.metadata == b"cookie-1" and entry.controller_metadata == 9
    assert entry.action.action.action_id == DROP

    stub.Write(helpers.write_request((DELETE, table_entity(L2_FWD, [(1, "exact",
                                                                    {"value": b"\x01"})]))))
    assert target.calls[-1] == ("table_delete", "MyIngress.l2_fwd", key, 0)
    assert helpers.read_entities(stub, table_entity(L2_FWD)) == []


def test_ternary_range_optional_priority_and_wildcards(stub, primary, target, helpers):
    entity = table_entity(
        ACL,
        [(1, "ternary", {"value": b"\x0a\x00\x00\x00", "mask": b"\xff\x00\x00\x00"}),
         (2, "range", {"low": b"\x00\x50", "high": b"\x01\xbb"})],
        DROP, priority=10)
    stub.Write(helpers.write_request((INSERT, entity)))
    key = (
        tgt.MatchParam("ternary", b"\x0a\x00\x00\x00", mask=b"\xff\x00\x00\x00"),
        tgt.MatchParam("range", b"\x00\x50", high=b"\x01\xbb"),
        tgt.MatchParam("ternary", b"\x00\x00", mask=b"\x00\x00"),  # omitted optional
    )
    assert target.calls[-1] == ("table_add", "MyIngress.acl",
                                tgt.TableEntry(key, tgt.ActionCall("MyIngress.drop"),
                                               INT32_MAX - 10))
    with_port = table_entity(ACL, [(3, "optional", {"value": b"\x01\x02"})], DROP, priority=3)
    stub.Write(helpers.write_request((INSERT, with_port)))
    assert target.calls[-1][2].key == (
        tgt.MatchParam("ternary", b"\x00\x00\x00\x00", mask=b"\x00\x00\x00\x00"),
        tgt.MatchParam("range", b"\x00\x00", high=b"\xff\xff"),
        tgt.MatchParam("ternary", b"\x01\x02", mask=b"\x01\xff"),
    )

    entries = {e.table_entry.priority: e.table_entry
               for e in helpers.read_entities(stub, table_entity(ACL))}
    assert set(entries) == {10, 3}
    ten = entries[10]
    assert [m.field_id for m in ten.match] == [1, 2]
    assert ten.match[0].ternary.value == b"\x0a\x00\x00\x00"
    assert ten.match[1].range.low == b"\x50" and ten.match[1].range.high == b"\x01\xbb"
    assert [(m.field_id, m.optional.value) for m in entries[3].match] == [(3, b"\x01\x02")]

    # Read filters: by priority and by exact key.
    only_three = helpers.read_entities(stub, table_entity(ACL, priority=3))
    assert [e.table_entry.priority for e in only_three] == [3]
    # A full table is RESOURCE_EXHAUSTED (the double's acl holds 2 entries).
    third = table_entity(ACL, [(3, "optional", {"value": b"\x05"})], DROP, priority=1)
    details = _write_error(stub, helpers, (INSERT, third))
    assert details[0].canonical_code == 8  # RESOURCE_EXHAUSTED


def _write_error(stub, helpers, *updates):
    import grpc
    import pytest

    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request(*updates))
    assert error.value.code() == grpc.StatusCode.UNKNOWN
    return helpers.error_details(error.value)


def test_lpm_entry_and_default_entries(stub, primary, target, helpers):
    stub.Write(helpers.write_request((INSERT, table_entity(
        ROUTES, [(1, "lpm", {"value": b"\x0a\x01\x00\x00", "prefix_len": 16})], SET_PORT,
        [(1, b"\x01\x00")]))))
    assert target.calls[-1][2].key == (
        tgt.MatchParam("lpm", b"\x0a\x01\x00\x00", prefix_len=16),)
    read = helpers.read_entities(stub, table_entity(ROUTES))[0].table_entry
    assert read.match[0].lpm.value == b"\x0a\x01\x00\x00" and read.match[0].lpm.prefix_len == 16

    stub.Write(helpers.write_request((MODIFY, table_entity(
        L2_FWD, action=SET_PORT, params=[(1, b"\x07")], is_default_action=True))))
    assert target.calls[-1] == ("table_set_default", "MyIngress.l2_fwd",
                                tgt.ActionCall("MyIngress.set_port", (b"\x00\x07",)))
    default = helpers.read_entities(stub, table_entity(L2_FWD, is_default_action=True))
    assert default[0].table_entry.is_default_action
    assert default[0].table_entry.action.action.params[0].value == b"\x07"
    stub.Write(helpers.write_request((MODIFY, table_entity(L2_FWD, is_default_action=True))))
    assert target.calls[-1] == ("table_reset_default", "MyIngress.l2_fwd")

    stub.Write(helpers.write_request((MODIFY, table_entity(
        SET_DEFAULTS, action=SET_PORT, params=[(1, b"\x02")], is_default_action=True))))
    assert target.defaults["MyIngress.set_defaults"].params == (b"\x00\x02",)


def test_const_table_read_and_direct_resource_modify_only(stub, primary, target, helpers):
    entries = helpers.read_entities(stub, table_entity(ETHERTYPE))
    assert len(entries) == 1
    entry = entries[0].table_entry
    assert entry.is_const and entry.match[0].exact.value == b"\x86\xdd"
    assert entry.action.action.action_id == DROP
    details = _write_error(stub, helpers, (INSERT, table_entity(
        ETHERTYPE, [(1, "exact", {"value": b"\x08\x00"})], DROP)))
    assert details[0].canonical_code == 7  # PERMISSION_DENIED
    details = _write_error(stub, helpers, (MODIFY, table_entity(
        ETHERTYPE, [(1, "exact", {"value": b"\x86\xdd"})], NO_ACTION)))
    assert details[0].canonical_code == 7


def test_all_tables_wildcard_read(stub, primary, helpers):
    stub.Write(helpers.write_request((INSERT, table_entity(
        L2_FWD, [(1, "exact", {"value": b"\x05"})], DROP))))
    everything = helpers.read_entities(stub, table_entity(0))
    assert sorted(e.table_entry.table_id for e in everything) == [L2_FWD, ETHERTYPE]


def test_direct_counter_and_meter_via_entries(stub, primary, target, helpers):
    stub.Write(helpers.write_request((INSERT, table_entity(
        L2_FWD, [(1, "exact", {"value": b"\x05"})], DROP,
        counter_data={"packet_count": 4, "byte_count": 400}))))
    key = (tgt.MatchParam("exact", b"\x00\x00\x00\x00\x00\x05"),)
    assert target.calls[-1] == ("direct_counter_write", "MyIngress.l2_fwd", key, 0,
                                tgt.CounterValue(4, 400))
    with_counter = helpers.read_entities(stub, table_entity(L2_FWD, counter_data={}))
    assert with_counter[0].table_entry.counter_data.packet_count == 4
    assert with_counter[0].table_entry.counter_data.byte_count == 400

    entity = p4runtime_pb2.Entity()
    entity.direct_counter_entry.table_entry.CopyFrom(
        table_entity(L2_FWD, [(1, "exact", {"value": b"\x05"})]).table_entry)
    entity.direct_counter_entry.data.packet_count = 9
    entity.direct_counter_entry.data.byte_count = 900
    stub.Write(helpers.write_request((MODIFY, entity)))
    assert target.calls[-1] == ("direct_counter_write", "MyIngress.l2_fwd", key, 0,
                                tgt.CounterValue(9, 900))
    read = p4runtime_pb2.Entity()
    read.direct_counter_entry.table_entry.table_id = L2_FWD
    result = helpers.read_entities(stub, read)
    assert result[0].direct_counter_entry.data.byte_count == 900
    assert result[0].direct_counter_entry.table_entry.match[0].exact.value == b"\x05"

    acl = table_entity(ACL, [(3, "optional", {"value": b"\x01"})], DROP, priority=5,
                       meter_config={"cir": 100, "cburst": 10, "pir": 200, "pburst": 20})
    stub.Write(helpers.write_request((INSERT, acl)))
    assert target.calls[-1][0] == "direct_meter_set"
    assert target.calls[-1][4] == tgt.MeterRates(100, 10, 200, 20)
    meter_read = p4runtime_pb2.Entity()
    meter_read.direct_meter_entry.table_entry.CopyFrom(
        table_entity(ACL, [(3, "optional", {"value": b"\x01"})], priority=5).table_entry)
    config = helpers.read_entities(stub, meter_read)[0].direct_meter_entry.config
    assert (config.cir, config.cburst, config.pir, config.pburst) == (100, 10, 200, 20)


def test_counters_meters_registers(stub, primary, target, helpers):
    counter = p4runtime_pb2.Entity()
    counter.counter_entry.counter_id = 302005409
    counter.counter_entry.index.index = 2
    counter.counter_entry.data.packet_count = 5
    counter.counter_entry.data.byte_count = 640
    stub.Write(helpers.write_request((MODIFY, counter)))
    assert target.calls[-1] == ("counter_write", "MyIngress.port_counter", 2,
                                tgt.CounterValue(5, 640))
    whole = p4runtime_pb2.Entity()
    whole.counter_entry.counter_id = 302005409
    cells = helpers.read_entities(stub, whole)
    assert [c.counter_entry.index.index for c in cells] == list(range(8))
    assert cells[2].counter_entry.data.packet_count == 5
    assert cells[2].counter_entry.data.byte_count == 640
    # A BYTES counter reports bytes only.
    target.counters[("MyIngress.byte_counter", 1)] = tgt.CounterValue(3, 300)
    all_counters = p4runtime_pb2.Entity()
    all_counters.counter_entry.SetInParent()
    read = helpers.read_entities(stub, all_counters)
    assert len(read) == 10
    bytes_cell = [c.counter_entry for c in read if c.counter_entry.counter_id == 302005410][1]
    assert bytes_cell.data.byte_count == 300 and bytes_cell.data.packet_count == 0

    meter = p4runtime_pb2.Entity()
    meter.meter_entry.meter_id = 335544321
    meter.meter_entry.index.index = 1
    meter.meter_entry.config.cir = 1000
    meter.meter_entry.config.cburst = 100
    meter.meter_entry.config.pir = 2000
    meter.meter_entry.config.pburst = 200
    stub.Write(helpers.write_request((MODIFY, meter)))
    assert target.calls[-1] == ("meter_set", "MyIngress.port_meter", 1,
                                tgt.MeterRates(1000, 100, 2000, 200))
    meter.meter_entry.ClearField("config")
    assert helpers.read_entities(stub, meter)[0].meter_entry.config.pir == 2000
    stub.Write(helpers.write_request((MODIFY, meter)))  # no config: back to unconfigured
    assert target.calls[-1] == ("meter_set", "MyIngress.port_meter", 1, None)

    register = p4runtime_pb2.Entity()
    register.register_entry.register_id = 369098753
    register.register_entry.index.index = 3
    register.register_entry.data.bitstring = b"\x01\x00"
    stub.Write(helpers.write_request((MODIFY, register)))
    assert target.calls[-1] == ("register_write", "MyIngress.occupancy", 3, b"\x00\x00\x01\x00")
    register.register_entry.ClearField("data")
    assert helpers.read_entities(stub, register)[0].register_entry.data.bitstring == b"\x01\x00"


def test_action_profile_members_and_groups(stub, primary, target, helpers):
    for member_id, port in ((1, b"\x01"), (2, b"\x02")):
        member = p4runtime_pb2.Entity()
        member.action_profile_member.action_profile_id = 285212673
        member.action_profile_member.member_id = member_id
        member.action_profile_member.action.action_id = SET_PORT
        member.action_profile_member.action.params.add(param_id=1, value=port)
        stub.Write(helpers.write_request((INSERT, member)))
    assert target.calls[-1] == ("act_prof_add_member", "MyIngress.ecmp_selector", 2,
                                tgt.ActionCall("MyIngress.set_port", (b"\x00\x02",)))
    group = p4runtime_pb2.Entity()
    group.action_profile_group.action_profile_id = 285212673
    group.action_profile_group.group_id = 10
    group.action_profile_group.max_size = 4
    group.action_profile_group.members.add(member_id=1, weight=1)
    group.action_profile_group.members.add(member_id=2, weight=3)
    stub.Write(helpers.write_request((INSERT, group)))
    assert target.calls[-1] == ("act_prof_add_group", "MyIngress.ecmp_selector", 10,
                                (tgt.GroupMember(1, 1), tgt.GroupMember(2, 3)), 4)

    entry = table_entity(ECMP, [(1, "exact", {"value": b"\x07"})])
    entry.table_entry.action.action_profile_group_id = 10
    stub.Write(helpers.write_request((INSERT, entry)))
    assert target.calls[-1][2].action == tgt.GroupRef(10)
    read = helpers.read_entities(stub, table_entity(ECMP))[0].table_entry
    assert read.action.action_profile_group_id == 10

    members_read = p4runtime_pb2.Entity()
    members_read.action_profile_member.action_profile_id = 285212673
    members = helpers.read_entities(stub, members_read)
    assert [m.action_profile_member.member_id for m in members] == [1, 2]
    assert members[1].action_profile_member.action.params[0].value == b"\x02"
    groups_read = p4runtime_pb2.Entity()
    groups_read.action_profile_group.SetInParent()
    groups = helpers.read_entities(stub, groups_read)
    assert [(m.member_id, m.weight) for m in groups[0].action_profile_group.members] == [
        (1, 1), (2, 3)]
    assert groups[0].action_profile_group.max_size == 4

    stub.Write(helpers.write_request((DELETE, group)))
    assert target.calls[-1] == ("act_prof_delete_group", "MyIngress.ecmp_selector", 10)


def test_multicast_groups_and_clone_sessions(stub, primary, target, helpers):
    group = p4runtime_pb2.Entity()
    mc = group.packet_replication_engine_entry.multicast_group_entry
    mc.multicast_group_id = 1
    mc.replicas.add(egress_port=1, instance=0)
    mc.replicas.add(port=b"\x02", instance=1)
    stub.Write(helpers.write_request((INSERT, group)))
    assert target.calls[-1] == ("mc_group_add", 1, (tgt.Replica(1, 0), tgt.Replica(2, 1)))
    read_all = p4runtime_pb2.Entity()
    read_all.packet_replication_engine_entry.multicast_group_entry.SetInParent()
    read = helpers.read_entities(stub, read_all)
    replicas = read[0].packet_replication_engine_entry.multicast_group_entry.replicas
    assert [(r.port, r.instance) for r in replicas] == [(b"\x01", 0), (b"\x02", 1)]
    mc.ClearField("replicas")
    mc.replicas.add(egress_port=3, instance=0)
    stub.Write(helpers.write_request((MODIFY, group)))
    assert target.mc[1] == (tgt.Replica(3, 0),)
    replicas = helpers.read_entities(stub, read_all)[0] \
        .packet_replication_engine_entry.multicast_group_entry.replicas
    assert [(r.egress_port, r.instance) for r in replicas] == [(3, 0)]
    stub.Write(helpers.write_request((DELETE, group)))
    assert target.mc == {}

    session = p4runtime_pb2.Entity()
    clone = session.packet_replication_engine_entry.clone_session_entry
    clone.session_id = 5
    clone.replicas.add(egress_port=4, instance=1)
    clone.packet_length_bytes = 128
    stub.Write(helpers.write_request((INSERT, session)))
    assert target.calls[-1] == ("clone_session_add", 5,
                                tgt.CloneSession((tgt.Replica(4, 1),), 0, 128))
    read = p4runtime_pb2.Entity()
    read.packet_replication_engine_entry.clone_session_entry.session_id = 5
    got = helpers.read_entities(stub, read)[0].packet_replication_engine_entry.clone_session_entry
    assert got.packet_length_bytes == 128 and got.replicas[0].egress_port == 4


def test_digest_entry_insert_modify_read_delete(stub, primary, helpers):
    digest = p4runtime_pb2.Entity()
    digest.digest_entry.digest_id = 385875969
    digest.digest_entry.config.max_list_size = 4
    digest.digest_entry.config.ack_timeout_ns = 10**9
    stub.Write(helpers.write_request((INSERT, digest)))
    read = p4runtime_pb2.Entity()
    read.digest_entry.SetInParent()
    assert helpers.read_entities(stub, read)[0].digest_entry.config.max_list_size == 4
    digest.digest_entry.config.max_list_size = 8
    stub.Write(helpers.write_request((MODIFY, digest)))
    assert helpers.read_entities(stub, read)[0].digest_entry.config.max_list_size == 8
    assert _write_error(stub, helpers, (INSERT, digest))[0].canonical_code == 6  # ALREADY_EXISTS
    stub.Write(helpers.write_request((DELETE, digest)))
    assert helpers.read_entities(stub, read) == []
    assert _write_error(stub, helpers, (DELETE, digest))[0].canonical_code == 5  # NOT_FOUND
