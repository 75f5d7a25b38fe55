"""The forwarding pipeline config store (spec "SetForwardingPipelineConfig")."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import DecodeError
from p4.tmp import p4config_pb2
from p4.v1 import p4runtime_pb2

from .p4info_index import P4InfoIndex
from .status import P4RuntimeError


@dataclass(frozen=True)
class Pipeline:
    """A verified config: the message as the client sent it, its index and JSON text."""

    config: p4runtime_pb2.ForwardingPipelineConfig
    index: P4InfoIndex
    device_json: str


def verify(config: p4runtime_pb2.ForwardingPipelineConfig) -> Pipeline:
    """Check a config (P4Info present, JSON text, every P4Info object found in the JSON)."""
    if not config.HasField("p4info"):
        raise P4RuntimeError("INVALID_ARGUMENT", "config has no p4info")
    device_json = device_json_of(config.p4_device_config)
    stored = p4runtime_pb2.ForwardingPipelineConfig()
    stored.CopyFrom(config)
    return Pipeline(stored, P4InfoIndex(config.p4info, device_json), device_json)


def device_json_of(p4_device_config: bytes) -> str:
    """The BMv2 JSON text of a p4_device_config: the JSON itself (p4runtime-shell sends that)
    or PI's `p4.tmp.P4DeviceConfig` whose device_data holds it (the p4lang tutorials' form)."""
    if not p4_device_config:
        raise P4RuntimeError("INVALID_ARGUMENT",
                             "config has no p4_device_config (BMv2 JSON or p4.tmp.P4DeviceConfig)")
    # A JSON object starts with "{" after JSON whitespace; a serialized P4DeviceConfig starts
    # with the tag of field 1, 2 or 3 (0x08, 0x12, 0x1a), never with these bytes.
    if p4_device_config.lstrip(b" \t\r\n").startswith(b"{"):
        return _utf8(p4_device_config, "p4_device_config")
    try:
        wrapper = p4config_pb2.P4DeviceConfig.FromString(p4_device_config)
    except DecodeError as error:
        raise P4RuntimeError(
            "INVALID_ARGUMENT",
            "p4_device_config is neither BMv2 JSON (which starts with '{') nor a"
            f" p4.tmp.P4DeviceConfig (protobuf: {error})") from None
    if not wrapper.device_data:
        raise P4RuntimeError("INVALID_ARGUMENT", "p4_device_config is a p4.tmp.P4DeviceConfig"
                             " without device_data (field 3, the BMv2 JSON)")
    # reassign and extras have nothing to act on: the device is this process, already set up
    # from the command line.
    return _utf8(wrapper.device_data, "P4DeviceConfig.device_data")


def _utf8(data: bytes, what: str) -> str:
    """`data` as text, or INVALID_ARGUMENT naming `what` and the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise P4RuntimeError("INVALID_ARGUMENT", f"{what} is not UTF-8 JSON (byte"
                             f" {error.start}: {data[error.start:error.start + 1]!r})") from None


class PipelineStore:
    """The saved config (what Read/Write/Get use) and whether the target runs it."""

    def __init__(self) -> None:
        self.current: Pipeline | None = None
        self.committed = False

    def save(self, pipeline: Pipeline) -> None:
        """VERIFY_AND_SAVE: Read/Write use the new P4Info, forwarding is unchanged."""
        self.current = pipeline
        self.committed = False

    def commit(self, pipeline: Pipeline) -> None:
        """Record that the target now runs `pipeline`."""
        self.current = pipeline
        self.committed = True

    def active(self) -> Pipeline:
        """The config requests are checked against, else FAILED_PRECONDITION."""
        if self.current is None:
            raise P4RuntimeError("FAILED_PRECONDITION", "no forwarding pipeline config set")
        return self.current

    def get_response(self, response_type: int) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
        """The Get reply for a response type; without a config, `config` stays unset."""
        response = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if self.current is None:
            return response
        request_type = p4runtime_pb2.GetForwardingPipelineConfigRequest
        source = self.current.config
        config = response.config
        if source.HasField("cookie"):
            config.cookie.CopyFrom(source.cookie)
        if response_type in (request_type.ALL, request_type.P4INFO_AND_COOKIE):
            config.p4info.CopyFrom(source.p4info)
        if response_type in (request_type.ALL, request_type.DEVICE_CONFIG_AND_COOKIE):
            config.p4_device_config = source.p4_device_config
        if response_type not in (
            request_type.ALL,
            request_type.COOKIE_ONLY,
            request_type.P4INFO_AND_COOKIE,
            request_type.DEVICE_CONFIG_AND_COOKIE,
        ):
            raise P4RuntimeError("INVALID_ARGUMENT", f"unknown response_type {response_type}")
        return response
