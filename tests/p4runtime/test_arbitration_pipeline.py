"""Arbitration (primary/backup, notifications, refusals) and pipeline set/get over real gRPC."""

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

SetRequest = p4runtime_pb2.SetForwardingPipelineConfigRequest
GetRequest = p4runtime_pb2.GetForwardingPipelineConfigRequest


def status_of(response):
    return response.arbitration.status.code


def election_of(response):
    return (response.arbitration.election_id.high, response.arbitration.election_id.low)


def test_first_client_is_primary_then_higher_id_takes_over(open_stream):
    first = open_stream((0, 5))
    reply = first.recv()
    assert status_of(reply) == code_pb2.OK
    assert reply.arbitration.device_id == 1
    assert election_of(reply) == (0, 5)

    backup = open_stream((0, 3))
    reply = backup.recv()
    assert status_of(reply) == code_pb2.ALREADY_EXISTS
    assert election_of(reply) == (0, 5)
    assert first.pending() == 0  # no primary change: nobody else is told

    new_primary = open_stream((1, 0))
    assert status_of(new_primary.recv()) == code_pb2.OK
    demoted = first.recv()
    assert status_of(demoted) == code_pb2.ALREADY_EXISTS
    assert election_of(demoted) == (1, 0)
    assert status_of(backup.recv()) == code_pb2.ALREADY_EXISTS


def test_primary_leaving_notifies_backups_with_no_primary(open_stream):
    primary = open_stream((0, 9))
    primary.recv()
    backup = open_stream((0, 2))
    backup.recv()
    primary.close()
    notice = backup.recv()
    # The backup's id is below the highest ever seen: nobody is primary (spec).
    assert status_of(notice) == code_pb2.NOT_FOUND
    assert election_of(notice) == (0, 9)
    backup.arbitrate((0, 10))
    assert status_of(backup.recv()) == code_pb2.OK


def test_backup_write_and_set_pipeline_are_permission_denied(stub, open_stream, p4info, helpers):
    primary = open_stream((0, 2))
    primary.recv()
    backup = open_stream((0, 1))
    backup.recv()
    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info, election_id=(0, 1)))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info, election_id=(0, 2)))
    entity = p4runtime_pb2.Entity()
    entity.counter_entry.counter_id = 302005409
    entity.counter_entry.index.index = 0
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request((p4runtime_pb2.Update.MODIFY, entity), election_id=(0, 1)))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request((p4runtime_pb2.Update.MODIFY, entity), election_id=None))
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    stub.Write(helpers.write_request((p4runtime_pb2.Update.MODIFY, entity), election_id=(0, 2)))


def test_arbitration_refusals_end_the_stream(open_stream):
    open_stream((0, 4)).recv()
    duplicate = open_stream((0, 4))
    error = duplicate.recv()
    assert isinstance(error, grpc.RpcError)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT

    wrong_device = open_stream(None)
    wrong_device.arbitrate((0, 7), device_id=42)
    error = wrong_device.recv()
    assert error.code() == grpc.StatusCode.NOT_FOUND

    changed = open_stream((0, 8))
    assert status_of(changed.recv()) == code_pb2.OK
    changed.arbitrate((0, 8), device_id=2)
    assert changed.recv().code() == grpc.StatusCode.FAILED_PRECONDITION

    # A role config not in the form agreed out of band (roles.py: a Struct) is refused.
    role = open_stream(None)
    request = p4runtime_pb2.StreamMessageRequest()
    request.arbitration.device_id = 1
    request.arbitration.role.name = "sdn"
    request.arbitration.role.config.Pack(p4runtime_pb2.Uint128(low=1))
    request.arbitration.election_id.low = 11
    role.send(request)
    assert role.recv().code() == grpc.StatusCode.INVALID_ARGUMENT

    deprecated_id = open_stream(None)
    request = p4runtime_pb2.StreamMessageRequest()
    request.arbitration.device_id = 1
    request.arbitration.role.id = 3
    request.arbitration.election_id.low = 12
    deprecated_id.send(request)
    assert deprecated_id.recv().code() == grpc.StatusCode.UNIMPLEMENTED


def test_set_get_pipeline_with_cookie_and_response_types(stub, open_stream, p4info, target,
                                                         helpers):
    open_stream((0, 1)).recv()
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info, cookie=0xC0FFEE))
    assert target.loaded == [helpers.DEVICE_JSON]

    full = stub.GetForwardingPipelineConfig(GetRequest(device_id=1)).config
    assert full.p4info == p4info
    assert full.p4_device_config == helpers.DEVICE_JSON.encode()
    assert full.cookie.cookie == 0xC0FFEE

    cookie_only = stub.GetForwardingPipelineConfig(
        GetRequest(device_id=1, response_type=GetRequest.COOKIE_ONLY)).config
    assert cookie_only.cookie.cookie == 0xC0FFEE
    assert not cookie_only.HasField("p4info") and not cookie_only.p4_device_config

    p4info_only = stub.GetForwardingPipelineConfig(
        GetRequest(device_id=1, response_type=GetRequest.P4INFO_AND_COOKIE)).config
    assert p4info_only.p4info == p4info and not p4info_only.p4_device_config

    device_only = stub.GetForwardingPipelineConfig(
        GetRequest(device_id=1, response_type=GetRequest.DEVICE_CONFIG_AND_COOKIE)).config
    assert device_only.p4_device_config == helpers.DEVICE_JSON.encode()
    assert not device_only.HasField("p4info")


def test_get_without_config_leaves_config_unset_and_unknown_device_is_not_found(stub):
    assert not stub.GetForwardingPipelineConfig(GetRequest(device_id=1)).HasField("config")
    with pytest.raises(grpc.RpcError) as error:
        stub.GetForwardingPipelineConfig(GetRequest(device_id=3))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_verify_save_commit_and_reconcile(stub, open_stream, p4info, target, helpers):
    open_stream((0, 1)).recv()
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info, action=SetRequest.VERIFY))
    assert target.loaded == []
    assert not stub.GetForwardingPipelineConfig(GetRequest(device_id=1)).HasField("config")

    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(
            SetRequest(device_id=1, action=SetRequest.COMMIT, election_id={"low": 1}))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND

    stub.SetForwardingPipelineConfig(
        helpers.pipeline_request(p4info, action=SetRequest.VERIFY_AND_SAVE, cookie=7))
    assert target.loaded == []
    assert stub.GetForwardingPipelineConfig(GetRequest(device_id=1)).config.cookie.cookie == 7

    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(
            helpers.pipeline_request(p4info, action=SetRequest.COMMIT))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # COMMIT takes no config
    stub.SetForwardingPipelineConfig(
        SetRequest(device_id=1, action=SetRequest.COMMIT, election_id={"low": 1}))
    assert target.loaded == [helpers.DEVICE_JSON]

    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(
            helpers.pipeline_request(p4info, action=SetRequest.RECONCILE_AND_COMMIT))
    assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_bad_pipelines_are_invalid_argument(stub, open_stream, p4info, target, helpers):
    open_stream((0, 1)).recv()
    refused_by_target = helpers.DEVICE_JSON[:-1] + ', "note": "refuse-me"}'
    for device_json in ("not json", '{"pipelines": []}', refused_by_target):
        with pytest.raises(grpc.RpcError) as error:
            stub.SetForwardingPipelineConfig(
                helpers.pipeline_request(p4info, device_json=device_json))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    request = helpers.pipeline_request(p4info)
    request.config.ClearField("p4info")
    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert target.loaded == []


def test_commit_clears_forwarding_state(stub, primary, p4info, target, helpers):
    entity = p4runtime_pb2.Entity()
    entity.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 3
    stub.Write(helpers.write_request((p4runtime_pb2.Update.INSERT, entity)))
    assert target.mc == {3: ()}
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info))
    assert target.mc == {}
    assert len(target.loaded) == 2


def test_capabilities_and_write_before_pipeline(stub, open_stream, helpers):
    assert stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version == "1.4.1"
    open_stream((0, 1)).recv()
    entity = p4runtime_pb2.Entity()
    entity.counter_entry.counter_id = 302005409
    with pytest.raises(grpc.RpcError) as error:
        stub.Write(helpers.write_request((p4runtime_pb2.Update.MODIFY, entity)))
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as error:
        helpers.read_entities(stub, entity)
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_large_pipeline_above_grpc_default_limit(stub, open_stream, p4info, target, helpers):
    # gRPC's default receive limit is 4 MB; PI (and this server) take up to 256 MB.
    big_json = helpers.DEVICE_JSON[:-1] + ', "padding": "' + "x" * (6 * 1024 * 1024) + '"}'
    open_stream((0, 1)).recv()
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info, device_json=big_json))
    assert target.loaded == [big_json]


def test_set_pipeline_for_unknown_device_and_unspecified_action(stub, open_stream, p4info,
                                                                  helpers):
    open_stream((0, 1)).recv()
    request = helpers.pipeline_request(p4info)
    request.device_id = 5
    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(request)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    request = helpers.pipeline_request(p4info, action=SetRequest.UNSPECIFIED)
    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_unsupported_stream_message_gets_stream_error(open_stream):
    stream = open_stream((0, 1))
    stream.recv()
    other = p4runtime_pb2.StreamMessageRequest()
    other.other.type_url = "type.googleapis.com/example.Unknown"
    stream.send(other)
    assert stream.recv().error.canonical_code == code_pb2.UNIMPLEMENTED
