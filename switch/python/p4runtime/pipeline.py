"""The forwarding pipeline config store (spec "SetForwardingPipelineConfig")."""

from __future__ import annotations

from dataclasses import dataclass

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
    if not config.p4_device_config:
        raise P4RuntimeError("INVALID_ARGUMENT", "config has no p4_device_config (BMv2 JSON)")
    try:
        device_json = config.p4_device_config.decode("utf-8")
    except UnicodeDecodeError:
        raise P4RuntimeError("INVALID_ARGUMENT", "p4_device_config is not UTF-8 JSON") from None
    stored = p4runtime_pb2.ForwardingPipelineConfig()
    stored.CopyFrom(config)
    return Pipeline(stored, P4InfoIndex(config.p4info, device_json), device_json)


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
