"""p4_device_config in both forms clients send: the BMv2 JSON itself (p4runtime-shell) and
PI's `p4.tmp.P4DeviceConfig` wrapping it (the p4lang tutorials' p4runtime_lib); each reads
back exactly as it was set, and a malformed wrapper is INVALID_ARGUMENT saying what is wrong.
Also: `from p4.tmp import p4config_pb2` works from the installed distribution."""

import json
import subprocess
import sys

import grpc
import pytest
from p4.tmp import p4config_pb2
from p4.v1 import p4runtime_pb2

SetRequest = p4runtime_pb2.SetForwardingPipelineConfigRequest
GetRequest = p4runtime_pb2.GetForwardingPipelineConfigRequest


def set_request(helpers, p4info, device_config: bytes, cookie: int | None = None):
    request = helpers.pipeline_request(p4info, cookie=cookie)
    request.config.p4_device_config = device_config
    return request


def wrapped(device_data: bytes, **fields) -> bytes:
    return p4config_pb2.P4DeviceConfig(device_data=device_data, **fields).SerializeToString()


def get_config(stub, helpers, response_type=GetRequest.ALL):
    return stub.GetForwardingPipelineConfig(
        GetRequest(device_id=helpers.DEVICE_ID, response_type=response_type)).config


def varint(value: int) -> bytes:
    """Protobuf's base-128 varint, written out here so the wire test depends on no module."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def length_delimited(field_number: int, payload: bytes) -> bytes:
    return varint(field_number << 3 | 2) + varint(len(payload)) + payload


def test_wrapped_config_runs_its_json_and_reads_back_as_sent(stub, open_stream, p4info, target,
                                                             helpers):
    open_stream((0, 1)).recv()
    config = p4config_pb2.P4DeviceConfig(reassign=True, device_data=helpers.DEVICE_JSON.encode())
    config.extras.kv["port"] = "9090"
    sent = config.SerializeToString()
    stub.SetForwardingPipelineConfig(set_request(helpers, p4info, sent, cookie=42))
    assert target.loaded == [helpers.DEVICE_JSON]

    full = get_config(stub, helpers)
    assert full.p4_device_config == sent
    assert full.p4info == p4info and full.cookie.cookie == 42
    assert get_config(stub, helpers, GetRequest.DEVICE_CONFIG_AND_COOKIE).p4_device_config == sent
    assert not get_config(stub, helpers, GetRequest.P4INFO_AND_COOKIE).p4_device_config


def test_pis_field_numbers_on_the_wire(stub, open_stream, p4info, target, helpers):
    # Bytes laid out by hand from PI's p4config.proto: reassign = 1 (varint), extras = 2
    # (Extras{kv = 1 map<string, string>}), device_data = 3.
    entry = length_delimited(1, b"port") + length_delimited(2, b"9090")
    extras = length_delimited(1, entry)
    device_data = helpers.DEVICE_JSON.encode()
    sent = b"\x08\x01" + length_delimited(2, extras) + length_delimited(3, device_data)
    assert p4config_pb2.P4DeviceConfig.FromString(sent).extras.kv == {"port": "9090"}

    open_stream((0, 1)).recv()
    stub.SetForwardingPipelineConfig(set_request(helpers, p4info, sent))
    assert target.loaded == [helpers.DEVICE_JSON]
    assert get_config(stub, helpers).p4_device_config == sent


def test_raw_json_with_leading_whitespace_and_a_change_of_form(stub, open_stream, p4info, target,
                                                               helpers):
    open_stream((0, 1)).recv()
    raw = b"\n  \t" + helpers.DEVICE_JSON.encode()
    stub.SetForwardingPipelineConfig(set_request(helpers, p4info, raw))
    assert get_config(stub, helpers).p4_device_config == raw

    other_json = json.dumps({**json.loads(helpers.DEVICE_JSON), "program": "other.p4"})
    stub.SetForwardingPipelineConfig(set_request(helpers, p4info, wrapped(other_json.encode())))
    stub.SetForwardingPipelineConfig(set_request(helpers, p4info, raw))
    assert target.loaded == ["\n  \t" + helpers.DEVICE_JSON, other_json, "\n  \t" + helpers.DEVICE_JSON]
    assert get_config(stub, helpers).p4_device_config == raw


MALFORMED = {
    "empty": (b"", "has no p4_device_config"),
    "neither JSON nor protobuf": (b"not json", "neither BMv2 JSON"),
    "truncated wrapper": (wrapped(b'{"x": 1}')[:-3], "Truncated"),
    "wrapper without device_data": (wrapped(b"", reassign=True),
                                    "P4DeviceConfig without device_data"),
    "wrapper with non-UTF-8 data": (wrapped(b'{"x": "\xff"}'),
                                    "P4DeviceConfig.device_data is not UTF-8 JSON (byte 7"),
    "wrapper with non-JSON data": (wrapped(b"hello"), "device config is not JSON"),
    "raw JSON not UTF-8": (b'{"x": "\xfe"}', "p4_device_config is not UTF-8 JSON (byte 7"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_device_config_is_invalid_argument_naming_the_problem(
        case, stub, open_stream, p4info, target, helpers):
    device_config, message = MALFORMED[case]
    open_stream((0, 1)).recv()
    with pytest.raises(grpc.RpcError) as error:
        stub.SetForwardingPipelineConfig(set_request(helpers, p4info, device_config))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in error.value.details()
    assert target.loaded == []
    assert not stub.GetForwardingPipelineConfig(
        GetRequest(device_id=helpers.DEVICE_ID)).HasField("config")


def test_p4_tmp_imports_from_a_neutral_directory(tmp_path):
    # -I: no working directory or PYTHONPATH on sys.path, only what the install provides.
    code = (
        "import json, p4.v1.p4runtime_pb2\n"
        "from p4.tmp import p4config_pb2 as m\n"
        "d = m.P4DeviceConfig.DESCRIPTOR\n"
        "print(json.dumps({'file': d.file.name, 'package': d.file.package,\n"
        "  'fields': {f.name: [f.number, f.type] for f in d.fields},\n"
        "  'kv': [[f.name, f.type] for f in d.nested_types_by_name['Extras']\n"
        "         .fields_by_name['kv'].message_type.fields],\n"
        "  'map': d.nested_types_by_name['Extras'].fields_by_name['kv']\n"
        "         .message_type.GetOptions().map_entry}))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    field = p4config_pb2.P4DeviceConfig.DESCRIPTOR.fields[0]
    assert found == {
        "file": "p4/tmp/p4config.proto",
        "package": "p4.tmp",
        "fields": {"reassign": [1, field.TYPE_BOOL], "extras": [2, field.TYPE_MESSAGE],
                   "device_data": [3, field.TYPE_BYTES]},
        "kv": [["key", field.TYPE_STRING], ["value", field.TYPE_STRING]],
        "map": True,
    }
