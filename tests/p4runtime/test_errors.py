"""Each entity and bytestring rule's gRPC code for crafted bad requests, batch error details,
read error details and request-wide codes; the target is never called for a bad request."""

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)
L2_FWD, ACL, ROUTES, ECMP, ETHERTYPE, SET_DEFAULTS = range(33554433, 33554439)
NO_ACTION, SET_PORT, DROP, FLOOD = 16777217, 16777218, 16777219, 16777221
C = code_pb2


def entry(table_id, *matches, action=None, params=(), priority=0, **fields):
    entity = p4runtime_pb2.Entity()
    te = entity.table_entry
    te.table_id = table_id
    te.priority = priority
    for field_id, kind, values in matches:
        target = getattr(te.match.add(field_id=field_id), kind)
        for name, value in values.items():
            setattr(target, name, value)
    if action is not None:
        te.action.action.action_id = action
        for param_id, value in params:
            te.action.action.params.add(param_id=param_id, value=value)
    for name, value in fields.items():
        if isinstance(value, p4runtime_pb2.CounterData):
            te.counter_data.CopyFrom(value)
        else:
            setattr(te, name, value)
    return entity


MAC = ("exact", {"value": b"\x01"})
GOOD_L2 = entry(L2_FWD, (1, *MAC), action=SET_PORT, params=[(1, b"\x01")])


def expect_code(stub, helpers, update_type, entity):
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request((update_type, entity)))
    assert error.value.code() == grpc.StatusCode.UNKNOWN
    details = helpers.error_details(error.value)
    assert len(details) == 1
    return details[0].canonical_code


def counter_entity(index=None, counter_id=302005409):
    entity = p4runtime_pb2.Entity()
    entity.counter_entry.counter_id = counter_id
    if index is not None:
        entity.counter_entry.index.index = index
    return entity


BAD_TABLE_WRITES = [
    ("unknown table", INSERT, entry(99, (1, *MAC), action=DROP), C.NOT_FOUND),
    ("is_const set", INSERT, entry(L2_FWD, (1, *MAC), action=DROP, is_const=True),
     C.INVALID_ARGUMENT),
    ("exact field missing", INSERT, entry(L2_FWD, action=DROP), C.INVALID_ARGUMENT),
    ("unknown field id", INSERT, entry(L2_FWD, (1, *MAC), (7, *MAC), action=DROP),
     C.INVALID_ARGUMENT),
    ("field twice", INSERT, entry(L2_FWD, (1, *MAC), (1, *MAC), action=DROP), C.INVALID_ARGUMENT),
    ("wrong match kind", INSERT, entry(L2_FWD, (1, "lpm", {"value": b"\x01", "prefix_len": 8}),
                                       action=DROP), C.INVALID_ARGUMENT),
    ("empty bytestring", INSERT, entry(L2_FWD, (1, "exact", {"value": b""}), action=DROP),
     C.INVALID_ARGUMENT),
    ("value wider than field", INSERT,
     entry(L2_FWD, (1, "exact", {"value": b"\x01\x00\x00\x00\x00\x00\x00"}), action=DROP),
     C.OUT_OF_RANGE),
    ("priority on exact table", INSERT, entry(L2_FWD, (1, *MAC), action=DROP, priority=1),
     C.INVALID_ARGUMENT),
    ("no priority on ternary table", INSERT,
     entry(ACL, (3, "optional", {"value": b"\x01"}), action=DROP), C.INVALID_ARGUMENT),
    ("ternary mask zero", INSERT,
     entry(ACL, (1, "ternary", {"value": b"\x00", "mask": b"\x00"}), action=DROP, priority=1),
     C.INVALID_ARGUMENT),
    ("ternary value outside mask", INSERT,
     entry(ACL, (1, "ternary", {"value": b"\x03", "mask": b"\x01"}), action=DROP, priority=1),
     C.INVALID_ARGUMENT),
    ("range low above high", INSERT,
     entry(ACL, (2, "range", {"low": b"\x05", "high": b"\x04"}), action=DROP, priority=1),
     C.INVALID_ARGUMENT),
    ("full range", INSERT,
     entry(ACL, (2, "range", {"low": b"\x00", "high": b"\xff\xff"}), action=DROP, priority=1),
     C.INVALID_ARGUMENT),
    ("lpm prefix 0", INSERT, entry(ROUTES, (1, "lpm", {"value": b"\x00", "prefix_len": 0}),
                                   action=DROP), C.INVALID_ARGUMENT),
    ("lpm prefix too long", INSERT, entry(ROUTES, (1, "lpm", {"value": b"\x01",
                                                              "prefix_len": 33}), action=DROP),
     C.INVALID_ARGUMENT),
    ("lpm bits beyond prefix", INSERT,
     entry(ROUTES, (1, "lpm", {"value": b"\x0a\x00\x00\x01", "prefix_len": 8}), action=DROP),
     C.INVALID_ARGUMENT),
    ("no action", INSERT, entry(L2_FWD, (1, *MAC)), C.INVALID_ARGUMENT),
    ("action not in table", INSERT, entry(ACL, (3, "optional", {"value": b"\x01"}),
                                          action=SET_PORT, params=[(1, b"\x01")], priority=1),
     C.INVALID_ARGUMENT),
    ("default-only action in entry", INSERT, entry(L2_FWD, (1, *MAC), action=NO_ACTION),
     C.PERMISSION_DENIED),
    ("param missing", INSERT, entry(L2_FWD, (1, *MAC), action=SET_PORT), C.INVALID_ARGUMENT),
    ("param twice", INSERT, entry(L2_FWD, (1, *MAC), action=SET_PORT,
                                  params=[(1, b"\x01"), (1, b"\x01")]), C.INVALID_ARGUMENT),
    ("unknown param", INSERT, entry(L2_FWD, (1, *MAC), action=SET_PORT,
                                    params=[(1, b"\x01"), (2, b"\x01")]), C.INVALID_ARGUMENT),
    ("param too wide", INSERT, entry(L2_FWD, (1, *MAC), action=SET_PORT,
                                     params=[(1, b"\x02\x00")]), C.OUT_OF_RANGE),
    ("direct action on indirect table", INSERT,
     entry(ECMP, (1, *MAC), action=SET_PORT, params=[(1, b"\x01")]), C.INVALID_ARGUMENT),
    ("keyless table insert", INSERT, entry(SET_DEFAULTS, action=SET_PORT, params=[(1, b"\x01")]),
     C.INVALID_ARGUMENT),
    ("const table insert", INSERT, entry(ETHERTYPE, (1, *MAC), action=DROP),
     C.PERMISSION_DENIED),
    ("counter data without direct counter", INSERT,
     entry(ROUTES, (1, "lpm", {"value": b"\x0a\x00\x00\x00", "prefix_len": 8}), action=DROP,
           counter_data=p4runtime_pb2.CounterData(packet_count=1)), C.INVALID_ARGUMENT),
    ("default entry insert", INSERT, entry(L2_FWD, action=DROP, is_default_action=True),
     C.INVALID_ARGUMENT),
    ("default entry delete", DELETE, entry(L2_FWD, is_default_action=True), C.INVALID_ARGUMENT),
    ("default entry with match", MODIFY, entry(L2_FWD, (1, *MAC), action=DROP,
                                               is_default_action=True), C.INVALID_ARGUMENT),
    ("table-only action as default", MODIFY, entry(L2_FWD, action=FLOOD, is_default_action=True),
     C.PERMISSION_DENIED),
    ("const default action", MODIFY, entry(ROUTES, action=SET_PORT, params=[(1, b"\x01")],
                                           is_default_action=True), C.PERMISSION_DENIED),
    ("modify missing entry", MODIFY, GOOD_L2, C.NOT_FOUND),
    ("delete missing entry", DELETE, GOOD_L2, C.NOT_FOUND),
]


@pytest.mark.parametrize(("update_type", "entity", "code"),
                         [case[1:] for case in BAD_TABLE_WRITES],
                         ids=[case[0] for case in BAD_TABLE_WRITES])
def test_bad_table_writes(stub, primary, target, helpers, update_type, entity, code):
    calls_before = list(target.calls)
    assert expect_code(stub, helpers, update_type, entity) == code
    # Only "missing entry" needs the target to know; everything else is refused before.
    reaches_target = code == C.NOT_FOUND and entity.table_entry.table_id != 99
    assert (target.calls == calls_before) != reaches_target


def test_insert_twice_is_already_exists(stub, primary, helpers):
    stub.Write(helpers.write_request((INSERT, GOOD_L2)))
    assert expect_code(stub, helpers, INSERT, GOOD_L2) == C.ALREADY_EXISTS


def test_other_entity_rules(stub, primary, helpers):
    assert expect_code(stub, helpers, INSERT, counter_entity(0)) == C.INVALID_ARGUMENT
    assert expect_code(stub, helpers, DELETE, counter_entity(0)) == C.INVALID_ARGUMENT
    assert expect_code(stub, helpers, MODIFY, counter_entity(-1)) == C.INVALID_ARGUMENT
    assert expect_code(stub, helpers, MODIFY, counter_entity(8)) == C.OUT_OF_RANGE
    assert expect_code(stub, helpers, MODIFY, counter_entity(0, counter_id=5)) == C.NOT_FOUND

    register = p4runtime_pb2.Entity()
    register.register_entry.register_id = 369098753
    register.register_entry.index.index = 0
    register.register_entry.data.bitstring = b"\x01\x00\x00\x00\x00"
    assert expect_code(stub, helpers, MODIFY, register) == C.OUT_OF_RANGE
    register.register_entry.data.bitstring = b""
    assert expect_code(stub, helpers, MODIFY, register) == C.INVALID_ARGUMENT

    meter = p4runtime_pb2.Entity()
    meter.meter_entry.meter_id = 335544321
    meter.meter_entry.index.index = 0
    meter.meter_entry.config.cir = 10
    meter.meter_entry.config.pir = 5
    assert expect_code(stub, helpers, MODIFY, meter) == C.INVALID_ARGUMENT

    group = p4runtime_pb2.Entity()
    mc = group.packet_replication_engine_entry.multicast_group_entry
    mc.multicast_group_id = 0
    assert expect_code(stub, helpers, INSERT, group) == C.INVALID_ARGUMENT
    mc.multicast_group_id = 2
    mc.replicas.add(egress_port=1, instance=0)
    mc.replicas.add(port=b"\x00\x01", instance=0)
    assert expect_code(stub, helpers, INSERT, group) == C.INVALID_ARGUMENT
    mc.ClearField("replicas")
    assert expect_code(stub, helpers, MODIFY, group) == C.NOT_FOUND

    session = p4runtime_pb2.Entity()
    clone = session.packet_replication_engine_entry.clone_session_entry
    clone.session_id = 0
    assert expect_code(stub, helpers, INSERT, session) == C.INVALID_ARGUMENT
    clone.session_id = 3
    clone.class_of_service = 2  # the double refuses it as BMv2 does
    assert expect_code(stub, helpers, INSERT, session) == C.UNIMPLEMENTED

    member = p4runtime_pb2.Entity()
    member.action_profile_member.action_profile_id = 285212673
    member.action_profile_member.member_id = 1
    member.action_profile_member.action.action_id = DROP
    assert expect_code(stub, helpers, INSERT, member) == C.INVALID_ARGUMENT

    group = p4runtime_pb2.Entity()
    apg = group.action_profile_group
    apg.action_profile_id = 285212673
    apg.group_id = 1
    apg.members.add(member_id=1, weight=1)
    assert expect_code(stub, helpers, INSERT, group) == C.NOT_FOUND  # unknown member
    apg.members.add(member_id=1, weight=1)
    assert expect_code(stub, helpers, INSERT, group) == C.INVALID_ARGUMENT
    apg.ClearField("members")
    apg.members.add(member_id=1, weight=5)
    assert expect_code(stub, helpers, INSERT, group) == C.RESOURCE_EXHAUSTED
    apg.max_size = 9
    assert expect_code(stub, helpers, INSERT, group) == C.INVALID_ARGUMENT

    digest = p4runtime_pb2.Entity()
    digest.digest_entry.digest_id = 385875969
    assert expect_code(stub, helpers, INSERT, digest) == C.INVALID_ARGUMENT  # no config
    digest.digest_entry.digest_id = 7
    assert expect_code(stub, helpers, DELETE, digest) == C.NOT_FOUND

    value_set = p4runtime_pb2.Entity()
    value_set.value_set_entry.value_set_id = 1
    assert expect_code(stub, helpers, MODIFY, value_set) == C.UNIMPLEMENTED
    assert expect_code(stub, helpers, MODIFY, p4runtime_pb2.Entity()) == C.INVALID_ARGUMENT


def test_batch_reports_one_error_per_update_in_order(stub, primary, target, helpers):
    second = entry(L2_FWD, (1, "exact", {"value": b"\x02"}), action=DROP)
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request(
            (INSERT, GOOD_L2), (INSERT, entry(99)), (INSERT, second), (INSERT, GOOD_L2)))
    assert error.value.code() == grpc.StatusCode.UNKNOWN
    codes = [d.canonical_code for d in helpers.error_details(error.value)]
    assert codes == [C.OK, C.NOT_FOUND, C.OK, C.ALREADY_EXISTS]
    assert len(target.tables["MyIngress.l2_fwd"]) == 2  # the good updates were committed


def test_request_wide_errors(stub, primary, helpers):
    request = helpers.write_request((INSERT, GOOD_L2))
    request.atomicity = p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(request)
    assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED
    request.atomicity = p4runtime_pb2.WriteRequest.DATAPLANE_ATOMIC
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(request)
    assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED
    request = helpers.write_request((INSERT, GOOD_L2))
    request.device_id = 9
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(request)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    request = helpers.write_request((INSERT, GOOD_L2))
    request.role = "other"  # no client has arbitrated for this role
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(request)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_read_errors_keep_valid_results(stub, primary, helpers):
    stub.Write(helpers.write_request((INSERT, GOOD_L2)))
    request = p4runtime_pb2.ReadRequest(device_id=1)
    request.entities.add().table_entry.table_id = L2_FWD
    request.entities.add()  # no entity type
    request.entities.add().table_entry.CopyFrom(entry(0, priority=3).table_entry)
    received = []
    with pytest.raises(grpc.RpcError) as error:
        for response in stub.Read(request):
            received.extend(response.entities)
    assert error.value.code() == grpc.StatusCode.UNKNOWN
    assert [e.table_entry.table_id for e in received] == [L2_FWD]
    codes = [d.canonical_code for d in helpers.error_details(error.value)]
    assert codes == [C.OK, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT]
    with pytest.raises(grpc.RpcError) as error:
        list(stub.Read(p4runtime_pb2.ReadRequest(device_id=4)))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_direct_counter_of_missing_entry_is_not_found(stub, primary, helpers):
    entity = p4runtime_pb2.Entity()
    entity.direct_counter_entry.table_entry.CopyFrom(entry(L2_FWD, (1, *MAC)).table_entry)
    with pytest.raises(grpc.RpcError) as error:
        helpers.read_entities(stub, entity)
    assert [d.canonical_code for d in helpers.error_details(error.value)] == [C.NOT_FOUND]
    entity.direct_counter_entry.data.packet_count = 1
    assert expect_code(stub, helpers, MODIFY, entity) == C.NOT_FOUND


def test_counter_modify_without_index_sets_every_cell(stub, primary, target, helpers):
    entity = counter_entity()
    entity.counter_entry.data.packet_count = 0
    entity.counter_entry.data.byte_count = 0
    stub.Write(helpers.write_request((MODIFY, entity)))
    writes = [c for c in target.calls if c[0] == "counter_write"]
    assert [c[2] for c in writes] == list(range(8))


def test_seventeenth_stream_is_resource_exhausted(open_stream):
    streams = [open_stream((0, n + 1)) for n in range(16)]
    for stream in streams:
        assert not isinstance(stream.recv(), grpc.RpcError)
    extra = open_stream((0, 100))
    error = extra.recv()
    assert isinstance(error, grpc.RpcError)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_large_failed_batch_stays_within_grpc_trailer_limit(stub, primary, helpers):
    def l2(n):
        return entry(L2_FWD, (1, "exact", {"value": n.to_bytes(2, "big")}), action=DROP)

    # 60 updates: codes and messages fit.
    updates = [(INSERT, l2(n)) for n in range(1, 60)] + [(INSERT, entry(99))]
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request(*updates))
    details = helpers.error_details(error.value)
    assert [d.canonical_code for d in details] == [C.OK] * 59 + [C.NOT_FOUND]
    # 100 failing updates: codes kept, messages dropped.
    updates = [(DELETE, l2(n)) for n in range(1000, 1100)]
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request(*updates))
    details = helpers.error_details(error.value)
    assert [d.canonical_code for d in details] == [C.NOT_FOUND] * 100
    assert all(d.message == "" for d in details)
    # 1000 updates: too many even for codes; the client still gets UNKNOWN and a summary.
    updates = [(DELETE, l2(n)) for n in range(2000, 3000)]
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request(*updates))
    assert error.value.code() == grpc.StatusCode.UNKNOWN
    assert "1000 of 1000 updates failed" in error.value.details()
    assert helpers.error_details(error.value) == []


def test_target_errors_map_to_codes_and_crashes_to_internal(stub, primary, target, helpers,
                                                            monkeypatch):
    from bufferlab.switch.p4runtime import Target
    from bufferlab.switch.p4runtime import target as tgt

    assert isinstance(target, Target)  # the double implements the whole protocol
    register = p4runtime_pb2.Entity()
    register.register_entry.register_id = 369098753
    register.register_entry.index.index = 0
    register.register_entry.data.bitstring = b"\x01"
    for raised, code in ((tgt.OutOfRange("cell"), C.OUT_OF_RANGE),
                         (tgt.FailedPrecondition("busy"), C.FAILED_PRECONDITION),
                         (RuntimeError("engine bug"), C.INTERNAL)):
        def fail(*args, error=raised):
            raise error

        monkeypatch.setattr(target, "register_write", fail)
        assert expect_code(stub, helpers, MODIFY, register) == code
    monkeypatch.undo()
    stub.Write(helpers.write_request((MODIFY, register)))
    assert target.registers[("MyIngress.occupancy", 0)] == b"\x00\x00\x00\x01"
