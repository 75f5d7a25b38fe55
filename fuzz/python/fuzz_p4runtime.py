"""Fuzz target: the P4Runtime server's request handling, with the real engine behind it
(buffer_switch.p4 committed as the pipeline). The first input byte picks the RPC (Write,
Read, SetForwardingPipelineConfig, GetForwardingPipelineConfig), the rest is its request
message (mutated serialised requests: wrong ids, oversize and undersize bytestrings, huge
batches). Every request must end in a P4Runtime status: INTERNAL, for a whole request or
for one update, is a finding; so is any exception besides the RPC's abort."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import atheris
import grpc

sys.path.insert(0, str(Path(__file__).parent))
from harness import Finding, main  # noqa: E402

with atheris.instrument_imports(include=["bufferlab.switch.p4runtime", "bufferlab.switch.target"]):
    from google.rpc import code_pb2, status_pb2
    from p4.v1 import p4runtime_pb2

    from bufferlab.compiler import compile as compile_p4
    from bufferlab.switch import Engine
    from bufferlab.switch.p4runtime.server import P4RuntimeService
    from bufferlab.switch.target import EngineTarget

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "buffer_switch.p4"
RPCS = (
    ("Write", p4runtime_pb2.WriteRequest),
    ("Read", p4runtime_pb2.ReadRequest),
    ("SetForwardingPipelineConfig", p4runtime_pb2.SetForwardingPipelineConfigRequest),
    ("GetForwardingPipelineConfig", p4runtime_pb2.GetForwardingPipelineConfigRequest),
)


class Aborted(Exception):
    """How the RPC ended: a canonical code name and the status's details."""

    def __init__(self, code: str, details: list[p4runtime_pb2.Error]) -> None:
        super().__init__(code)
        self.code = code
        self.details = details


class Context:
    """The one part of grpc.ServicerContext the servicer uses: ending the RPC."""

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        """End the RPC with `code`."""
        raise Aborted(code.name, [])

    def abort_with_status(self, status: grpc.Status) -> None:
        """End the RPC with a rich status (per-update p4.v1.Errors)."""
        details = []
        for key, value in status.trailing_metadata:
            if key == "grpc-status-details-bin":
                for packed in status_pb2.Status.FromString(value).details:
                    item = p4runtime_pb2.Error()
                    packed.Unpack(item)
                    details.append(item)
        raise Aborted(status.code.name, details)


def make_service() -> P4RuntimeService:
    """The server in front of an engine, with buffer_switch.p4 committed."""
    document, p4info = compile_p4(PROGRAM)
    json_text = json.dumps(document)
    service = P4RuntimeService(EngineTarget(Engine(json_text), json_text), 0)
    request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
        device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    request.config.p4info.CopyFrom(p4info)
    request.config.p4_device_config = json_text.encode()
    service.SetForwardingPipelineConfig(request, Context())
    return service


SERVICE = make_service()


def test_one_input(data: bytes) -> None:
    """One request; it must end in a P4Runtime status that is not INTERNAL."""
    if not data:
        return
    name, message_type = RPCS[data[0] % len(RPCS)]
    try:
        request = message_type.FromString(data[1:])
    except Exception:  # noqa: BLE001 - protobuf's own errors; the server answers INVALID_ARGUMENT
        return
    try:
        result = getattr(SERVICE, name)(request, Context())
        if name == "Read":
            list(result)
    except Aborted as ended:
        internal = [d.message for d in ended.details if d.canonical_code == code_pb2.INTERNAL]
        if ended.code == "INTERNAL" or internal:
            raise Finding(f"{name}: INTERNAL {internal}") from None


if __name__ == "__main__":
    main(test_one_input)
