"""P4Runtime roles and role-based arbitration (spec "Default Role", "Role Config",
"Client Arbitration"): one primary per role, each role's primary writes only its role's
entities, role configs in bufferlab's form (a Struct), the default role has full access."""

import time

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from bufferlab.controller.client import role_config

INSERT = p4runtime_pb2.Update.INSERT
L2_FWD, ACL = 33554433, 33554434
PORT_COUNTER = 302005409
SET_PORT, DROP = 16777218, 16777219


def l2_entry(mac: bytes) -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    te = entity.table_entry
    te.table_id = L2_FWD
    te.match.add(field_id=1).exact.value = mac
    te.action.action.action_id = SET_PORT
    te.action.action.params.add(param_id=1, value=b"\x01")
    return entity


def acl_entry(address: bytes) -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    te = entity.table_entry
    te.table_id = ACL
    te.priority = 10
    te.match.add(field_id=1).ternary.CopyFrom(
        p4runtime_pb2.FieldMatch.Ternary(value=address, mask=b"\xff\xff\xff\xff"))
    te.action.action.action_id = DROP
    return entity


def multicast_group() -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    group = entity.packet_replication_engine_entry.multicast_group_entry
    group.multicast_group_id = 1
    group.replicas.add(egress_port=1, instance=0)
    return entity


def arbitrate(stream, election_low: int, role: str = "", config=None) -> None:
    request = p4runtime_pb2.StreamMessageRequest()
    request.arbitration.device_id = 1
    request.arbitration.election_id.low = election_low
    if role:
        request.arbitration.role.name = role
        if config is not None:
            request.arbitration.role.config.CopyFrom(config)
    stream.send(request)


def write(stub, role: str, election_low: int, *entities: p4runtime_pb2.Entity) -> None:
    request = p4runtime_pb2.WriteRequest(device_id=1, role=role)
    request.election_id.low = election_low
    for entity in entities:
        request.updates.add(type=INSERT).entity.CopyFrom(entity)
    stub.Write(request)


def update_codes(stub, helpers, role: str, election_low: int, *entities) -> list[int]:
    with pytest.raises(grpc.RpcError) as error:
        write(stub, role, election_low, *entities)
    assert error.value.code() == grpc.StatusCode.UNKNOWN
    return [d.canonical_code for d in helpers.error_details(error.value)]


@pytest.fixture
def roles(stub, open_stream, p4info, helpers):
    """The default role's primary (pipeline set), role "l2" owning l2_fwd and the port
    counter with packet I/O, role "acl" owning acl; each role's primary has election id 5."""
    default = open_stream((0, 1))
    assert default.recv().arbitration.status.code == code_pb2.OK
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info))
    l2 = open_stream(None)
    arbitrate(l2, 5, "l2", role_config([L2_FWD, PORT_COUNTER], packet_io=True))
    acl = open_stream(None)
    arbitrate(acl, 5, "acl", role_config([ACL]))
    return default, l2, acl


def test_each_role_has_its_own_primary_and_told_its_config(roles):
    _default, l2, acl = roles
    # The same election id in two roles is no conflict: elections are per role.
    for stream, name, config in ((l2, "l2", role_config([L2_FWD, PORT_COUNTER], packet_io=True)),
                                 (acl, "acl", role_config([ACL]))):
        answer = stream.recv().arbitration
        assert (answer.status.code, answer.role.name, answer.election_id.low) == (
            code_pb2.OK, name, 5)
        assert answer.role.config == config


def test_a_roles_primary_writes_only_its_entities(stub, roles, helpers, target):
    _default, l2, acl = roles
    l2.recv(), acl.recv()
    write(stub, "l2", 5, l2_entry(b"\x01"))
    write(stub, "acl", 5, acl_entry(b"\x0a\x00\x00\x01"))
    # Per update: the other role's table, and replication entries (no P4Info id), are denied.
    assert update_codes(stub, helpers, "l2", 5, l2_entry(b"\x02"), acl_entry(b"\x0a\x00\x00\x02"),
                        multicast_group()) == [code_pb2.OK, code_pb2.PERMISSION_DENIED,
                                               code_pb2.PERMISSION_DENIED]
    assert update_codes(stub, helpers, "acl", 5, l2_entry(b"\x03")) == [code_pb2.PERMISSION_DENIED]
    # The default role has full pipeline access.
    write(stub, "", 1, l2_entry(b"\x04"), acl_entry(b"\x0a\x00\x00\x04"), multicast_group())
    tables = [e.table_entry.table_id for e in helpers.read_entities(stub, _wildcard())]
    assert (tables.count(L2_FWD), tables.count(ACL)) == (3, 2)


def _wildcard() -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    entity.table_entry.table_id = 0
    return entity


def test_backups_wrong_roles_and_pipeline_pushes_are_denied(stub, roles, open_stream, p4info,
                                                            helpers):
    _default, l2, _acl = roles
    assert l2.recv().arbitration.status.code == code_pb2.OK
    backup = open_stream(None)
    arbitrate(backup, 3, "l2", role_config([L2_FWD]))
    assert backup.recv().arbitration.status.code == code_pb2.ALREADY_EXISTS
    with pytest.raises(grpc.RpcError) as error:
        write(stub, "l2", 3, l2_entry(b"\x05"))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # The l2 primary's election id means nothing in role "acl" (its primary also has 5, so
    # use one nobody holds), and a role nobody arbitrated for is NOT_FOUND.
    with pytest.raises(grpc.RpcError) as error:
        write(stub, "acl", 4, acl_entry(b"\x0a\x00\x00\x05"))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as error:
        write(stub, "nobody", 5, l2_entry(b"\x05"))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    # Role "l2" may not set the pipeline (its config leaves "pipeline" out).
    request = helpers.pipeline_request(p4info, election_id=(0, 5))
    request.role = "l2"
    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(request)
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # After every refusal, the l2 primary's own write still works.
    write(stub, "l2", 5, l2_entry(b"\x05"))


def test_packet_out_needs_a_role_with_packet_io(roles, target):
    _default, l2, acl = roles
    l2.recv(), acl.recv()
    request = p4runtime_pb2.StreamMessageRequest()
    request.packet.payload = b"\xaa" * 60
    request.packet.metadata.add(metadata_id=1, value=b"\x01")
    acl.send(request)
    assert acl.recv().error.canonical_code == code_pb2.PERMISSION_DENIED
    l2.send(request)
    deadline = time.monotonic() + 10
    while not target.packets_out and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(target.packets_out) == 1 and target.packets_out[0].endswith(b"\xaa" * 60)
    assert l2.pending() == 0


@pytest.mark.parametrize(("config", "message"), [
    ({"p4_ids": "all"}, "p4_ids must be a list"),
    ({"p4_ids": [1.5]}, "is not a P4Info id"),
    ({"pipeline": 1}, "pipeline must be true or false"),
    ({"tables": []}, "unknown key(s) tables"),
])
def test_bad_role_configs_end_the_stream_with_invalid_argument(open_stream, config, message):
    from google.protobuf import any_pb2, struct_pb2

    fields = struct_pb2.Struct()
    fields.update(config)
    packed = any_pb2.Any()
    packed.Pack(fields)
    stream = open_stream(None)
    arbitrate(stream, 9, "r", packed)
    error = stream.recv()
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in error.details()
