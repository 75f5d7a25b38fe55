"""gRPC status for P4Runtime errors, incl. `grpc-status-details-bin` with `p4.v1.Error`s."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

from . import target as tgt

# The target's typed errors map one to one onto canonical codes.
_TARGET_CODES: dict[type[tgt.TargetError], str] = {
    tgt.NotFound: "NOT_FOUND",
    tgt.AlreadyExists: "ALREADY_EXISTS",
    tgt.InvalidArgument: "INVALID_ARGUMENT",
    tgt.ResourceExhausted: "RESOURCE_EXHAUSTED",
    tgt.OutOfRange: "OUT_OF_RANGE",
    tgt.Unimplemented: "UNIMPLEMENTED",
    tgt.FailedPrecondition: "FAILED_PRECONDITION",
}


class P4RuntimeError(Exception):
    """A request failure with its canonical code name (e.g. "INVALID_ARGUMENT")."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def grpc_code(self) -> grpc.StatusCode:
        """The matching `grpc.StatusCode`."""
        return grpc.StatusCode[self.code]

    @property
    def canonical_code(self) -> int:
        """The numeric `google.rpc.Code`."""
        return code_pb2.Code.Value(self.code)


def from_target(error: tgt.TargetError) -> P4RuntimeError:
    """The P4RuntimeError for a target's typed error."""
    for cls, code in _TARGET_CODES.items():
        if isinstance(error, cls):
            return P4RuntimeError(code, str(error) or cls.__name__)
    return P4RuntimeError("INTERNAL", f"target error: {error}")


def p4_error(error: P4RuntimeError | None) -> p4runtime_pb2.Error:
    """The per-update `p4.v1.Error` (canonical_code OK for a successful update)."""
    if error is None:
        return p4runtime_pb2.Error(canonical_code=code_pb2.OK)
    return p4runtime_pb2.Error(canonical_code=error.canonical_code, message=error.message)


# The details travel base64-encoded in one trailer; gRPC clients refuse trailers above their
# metadata limit (8 KiB soft, 16 KiB hard by default) and then lose the whole status.
MAX_DETAILS_BYTES = 4096


def batch_status(errors: list[P4RuntimeError | None], summary: str) -> status_pb2.Status:
    """The UNKNOWN `google.rpc.Status` whose details hold one p4.v1.Error per update, in order.

    A batch too large for the trailer first loses the error messages (codes stay); if even
    the codes do not fit, the details are left out and the message says so.
    """
    for keep_messages in (True, False):
        status = status_pb2.Status(code=code_pb2.UNKNOWN, message=summary)
        for error in errors:
            item = p4_error(error)
            if not keep_messages:
                item.ClearField("message")
            detail = any_pb2.Any()
            detail.Pack(item)
            status.details.append(detail)
        if status.ByteSize() <= MAX_DETAILS_BYTES:
            return status
    return status_pb2.Status(
        code=code_pb2.UNKNOWN,
        message=f"{summary} (per-update details left out: {len(errors)} updates exceed "
        "the gRPC trailer limit)",
    )


def abort_with_details(context: grpc.ServicerContext, status: status_pb2.Status) -> None:
    """End the RPC with `status` carried in the `grpc-status-details-bin` trailer."""
    context.abort_with_status(_RichStatus(status))


class _RichStatus(grpc.Status):
    """A `grpc.Status` built from a google.rpc.Status (what grpcio-status does)."""

    def __init__(self, status: status_pb2.Status) -> None:
        self.code = grpc.StatusCode[code_pb2.Code.Name(status.code)]
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)
