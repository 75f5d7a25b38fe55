"""The P4Runtime gRPC service of bufferlab-switch and `serve()`."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from . import packetio, pipeline
from . import target as tgt
from .arbitration import MAX_STREAMS, Arbitration, election_id_of
from .digests import DigestManager
from .entities import ControlState, Entities
from .roles import RoleConfig, role_name
from .status import (
    P4RuntimeError,
    abort_with_details,
    batch_status,
    from_target,
)

API_VERSION = "1.4.1"
# PI raises gRPC's 4 MB default so that large BMv2 JSONs fit (spec "gRPC Server Maximum
# Receive Message Size").
MAX_RECEIVE_BYTES = 256 * 1024 * 1024

log = logging.getLogger(__name__)
Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
_END = object()


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    """P4Runtime for one device backed by a `Target`."""

    def __init__(self, target: tgt.Target, device_id: int) -> None:
        self.target = target
        self.device_id = device_id
        # One lock serialises target calls and pipeline/state changes (target.py: "Threads").
        self._lock = threading.RLock()
        self.arbitration = Arbitration(device_id)
        self.pipelines = pipeline.PipelineStore()
        self.state = ControlState()
        self.digests = DigestManager(self._send_to_primary)
        target.set_packet_in_handler(self._on_packet_in)
        target.set_digest_handler(self.digests.on_message)

    def close(self) -> None:
        """Detach from the target and stop background work."""
        self.target.set_packet_in_handler(None)
        self.target.set_digest_handler(None)
        self.digests.close()

    # ------------------------------------------------------------ helpers

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise P4RuntimeError("NOT_FOUND", f"unknown device_id {device_id}")

    def _entities(self) -> Entities:
        return Entities(self.pipelines.active().index, self.target, self.state, self.digests)

    def _call(self, function: object, *args: object) -> object:
        """Call the target under the lock, turning its typed errors into P4RuntimeErrors."""
        try:
            with self._lock:
                return function(*args)
        except tgt.TargetError as error:
            raise from_target(error) from None

    def _send_to_primary(self, response: p4runtime_pb2.StreamMessageResponse) -> None:
        """Hand a DigestList to the primary of every role that owns the digest."""
        digest_id = response.digest.digest_id
        for send in self.arbitration.primary_sends(lambda c: c.receives_digest(digest_id)):
            send(response)

    def _on_packet_in(self, frame: bytes) -> None:
        current = self.pipelines.current
        if current is None or not self.pipelines.committed:
            return
        packet = packetio.decode_packet_in(current.index.controller_headers.get("packet_in"), frame)
        if packet is not None:
            response = p4runtime_pb2.StreamMessageResponse(packet=packet)
            for send in self.arbitration.primary_sends(lambda c: c.packet_io):
                send(response)

    # --------------------------------------------------------------- RPCs

    def Capabilities(  # noqa: N802 - gRPC method name
        self, request: p4runtime_pb2.CapabilitiesRequest, context: grpc.ServicerContext
    ) -> p4runtime_pb2.CapabilitiesResponse:
        """The P4Runtime version this server implements."""
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(  # noqa: N802 - gRPC method name
        self,
        request: p4runtime_pb2.SetForwardingPipelineConfigRequest,
        context: grpc.ServicerContext,
    ) -> p4runtime_pb2.SetForwardingPipelineConfigResponse:
        """VERIFY, VERIFY_AND_SAVE, VERIFY_AND_COMMIT, COMMIT; RECONCILE_AND_COMMIT is
        UNIMPLEMENTED."""
        try:
            self._check_device(request.device_id)
            config = self.arbitration.check_primary(election_id_of(request), role_name(request))
            if not config.pipeline:
                raise P4RuntimeError("PERMISSION_DENIED",
                                     f"role {request.role!r} may not set the pipeline")
            self._set_pipeline(request)
        except P4RuntimeError as error:
            context.abort(error.grpc_code, error.message)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _set_pipeline(self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest) -> None:
        action = request.action
        if action == Action.RECONCILE_AND_COMMIT:
            raise P4RuntimeError("UNIMPLEMENTED", "RECONCILE_AND_COMMIT is not supported")
        if action == Action.COMMIT:
            if request.HasField("config"):
                raise P4RuntimeError("INVALID_ARGUMENT", "COMMIT takes no config")
            with self._lock:
                saved = self.pipelines.current
                if saved is None:
                    raise P4RuntimeError("NOT_FOUND", "no saved config to commit")
                if not self.pipelines.committed:
                    self._commit(saved)
            return
        if action not in (Action.VERIFY, Action.VERIFY_AND_SAVE, Action.VERIFY_AND_COMMIT):
            raise P4RuntimeError("INVALID_ARGUMENT", f"unknown pipeline action {action}")
        if not request.HasField("config"):
            raise P4RuntimeError("INVALID_ARGUMENT", "request has no config")
        verified = pipeline.verify(request.config)
        with self._lock:
            if action == Action.VERIFY_AND_SAVE:
                self.pipelines.save(verified)
                self.state = ControlState()
                self.digests.reset(verified.index)
            elif action == Action.VERIFY_AND_COMMIT:
                self._commit(verified)

    def _commit(self, verified: pipeline.Pipeline) -> None:
        """Load the JSON into the target and start from clean control state (lock held)."""
        self._call(self.target.load_pipeline, verified.device_json)
        self.pipelines.commit(verified)
        self.state = ControlState()
        self.digests.reset(verified.index)

    def GetForwardingPipelineConfig(  # noqa: N802 - gRPC method name
        self,
        request: p4runtime_pb2.GetForwardingPipelineConfigRequest,
        context: grpc.ServicerContext,
    ) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
        """The saved config, reduced to the requested parts; the cookie always."""
        try:
            self._check_device(request.device_id)
            with self._lock:
                return self.pipelines.get_response(request.response_type)
        except P4RuntimeError as error:
            context.abort(error.grpc_code, error.message)

    def Write(  # noqa: N802 - gRPC method name
        self, request: p4runtime_pb2.WriteRequest, context: grpc.ServicerContext
    ) -> p4runtime_pb2.WriteResponse:
        """Apply updates in order; any failure ⇒ UNKNOWN with one p4.v1.Error per update."""
        # The whole batch runs under the lock: it is serialisable against other writes and
        # against a pipeline change.
        with self._lock:
            try:
                self._check_device(request.device_id)
                config = self.arbitration.check_primary(election_id_of(request),
                                                        role_name(request))
                entities = self._entities()
                if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                    raise P4RuntimeError("UNIMPLEMENTED", "only CONTINUE_ON_ERROR atomicity")
            except P4RuntimeError as error:
                context.abort(error.grpc_code, error.message)
            errors = [
                self._guard(lambda u=update: self._write_one(entities, config, request.role, u))
                for update in request.updates
            ]
        failed = [e for e in errors if e is not None]
        if failed:
            summary = f"{len(failed)} of {len(errors)} updates failed: {failed[0].message}"
            abort_with_details(context, batch_status(errors, summary))
        return p4runtime_pb2.WriteResponse()

    def _write_one(
        self, entities: Entities, config: RoleConfig, role: str, update: p4runtime_pb2.Update
    ) -> None:
        """One update, if the writer's role owns its entity (spec "Role Config")."""
        if not config.may_write(update.entity):
            raise P4RuntimeError("PERMISSION_DENIED",
                                 f"role {role!r} may not write this {update.entity.WhichOneof('entity')}")
        self._call(entities.write, update)

    @staticmethod
    def _guard(work: object) -> P4RuntimeError | None:
        """Run one update/read; its error, INTERNAL for anything unexpected."""
        try:
            work()
        except P4RuntimeError as error:
            return error
        except Exception as error:  # noqa: BLE001 - one bad update must not end the batch
            log.exception("P4Runtime request failed inside the target")
            return P4RuntimeError("INTERNAL", f"{type(error).__name__}: {error}")
        return None

    def Read(  # noqa: N802 - gRPC method name
        self, request: p4runtime_pb2.ReadRequest, context: grpc.ServicerContext
    ) -> object:
        """Entities for each (wildcard) request entity, in one ReadResponse."""
        response = p4runtime_pb2.ReadResponse()
        errors: list[P4RuntimeError | None] = []
        with self._lock:
            try:
                self._check_device(request.device_id)
                self.arbitration.check_role_known(role_name(request))
                entities = self._entities()
            except P4RuntimeError as error:
                context.abort(error.grpc_code, error.message)
            for entity in request.entities:
                found: list[p4runtime_pb2.Entity] = []
                errors.append(
                    self._guard(
                        lambda e=entity, out=found: out.extend(self._call(entities.read, e))
                    )
                )
                response.entities.extend(found)
        yield response
        failed = [e for e in errors if e is not None]
        if failed:
            summary = f"{len(failed)} of {len(errors)} read requests failed: {failed[0].message}"
            abort_with_details(context, batch_status(errors, summary))

    def StreamChannel(  # noqa: N802 - gRPC method name
        self, request_iterator: object, context: grpc.ServicerContext
    ) -> object:
        """Arbitration, PacketOut/PacketIn, DigestList/DigestListAck on one stream."""
        outbox: queue.Queue = queue.Queue()
        stream = object()
        context.add_callback(lambda: outbox.put(_END))
        reader = threading.Thread(
            target=self._read_stream,
            args=(stream, request_iterator, outbox),
            daemon=True,
            name="p4rt-stream",
        )
        reader.start()
        try:
            while True:
                item = outbox.get()
                if item is _END:
                    return
                if isinstance(item, P4RuntimeError):
                    context.abort(item.grpc_code, item.message)
                yield item
        finally:
            self.arbitration.remove(stream)

    def _read_stream(self, stream: object, requests: object, outbox: queue.Queue) -> None:
        """Handle the client's messages until it closes the stream or breaks a rule."""
        try:
            for message in requests:
                if isinstance(message, Undecodable):
                    raise P4RuntimeError("INVALID_ARGUMENT", message.message)
                kind = message.WhichOneof("update")
                if kind == "arbitration":
                    self.arbitration.arbitrate(stream, message.arbitration, outbox.put)
                elif kind == "packet":
                    self._packet_out(stream, message.packet, outbox)
                elif kind == "digest_ack":
                    if self.arbitration.is_primary_stream(stream):
                        self.digests.ack(message.digest_ack)
                else:
                    outbox.put(_stream_error("UNIMPLEMENTED", f"stream message {kind}"))
        except P4RuntimeError as error:
            outbox.put(error)
            return
        except Exception as error:  # noqa: BLE001 - a cancelled or broken call ends the stream like a close
            log.debug("stream closed: %s", error)
        outbox.put(_END)

    def _packet_out(
        self, stream: object, packet: p4runtime_pb2.PacketOut, outbox: queue.Queue
    ) -> None:
        """Inject a primary's PacketOut; errors go back as a StreamError."""
        config = self.arbitration.stream_config(stream)
        if config is None or not config.packet_io:
            outbox.put(_stream_error("PERMISSION_DENIED", "only a primary whose role has packet"
                                     " I/O may send packets", packet))
            return
        current = self.pipelines.current
        if current is None or not self.pipelines.committed:
            outbox.put(_stream_error("FAILED_PRECONDITION", "no pipeline committed", packet))
            return
        try:
            frame = packetio.encode_packet_out(
                current.index.controller_headers.get("packet_out"), packet
            )
            self._call(self.target.packet_out, frame)
        except P4RuntimeError as error:
            outbox.put(_stream_error(error.code, error.message, packet))


def _stream_error(
    code: str, message: str, packet: p4runtime_pb2.PacketOut | None = None
) -> p4runtime_pb2.StreamMessageResponse:
    """A StreamError response, carrying the offending PacketOut when there is one."""
    response = p4runtime_pb2.StreamMessageResponse()
    response.error.canonical_code = code_pb2.Code.Value(code)
    response.error.message = message
    if packet is not None:
        response.error.packet_out.packet_out.CopyFrom(packet)
    return response


@dataclass(frozen=True)
class ServerTls:
    """simple_switch_grpc's TLS options: the server's PEM certificate and key, the PEM CA that
    client certificates must chain to, and whether a client must present one (mutual TLS)."""

    cert_path: str
    key_path: str
    cacert_path: str | None = None
    client_auth: bool = False

    def credentials(self) -> grpc.ServerCredentials:
        """gRPC server credentials from the files; OSError if one cannot be read."""
        pair = (Path(self.key_path).read_bytes(), Path(self.cert_path).read_bytes())
        root = Path(self.cacert_path).read_bytes() if self.cacert_path else None
        return grpc.ssl_server_credentials([pair], root_certificates=root,
                                           require_client_auth=self.client_auth)


@dataclass
class RunningServer:
    """A started P4Runtime server: the gRPC server, the service and the bound port."""

    grpc_server: grpc.Server
    service: P4RuntimeService
    port: int

    def stop(self, grace_s: float | None = None) -> None:
        """Stop serving (waiting up to `grace_s` seconds for RPCs) and detach the target."""
        self.grpc_server.stop(grace_s).wait()
        self.service.close()

    def wait_for_termination(self) -> None:
        """Block until the server stops."""
        self.grpc_server.wait_for_termination()


@dataclass(frozen=True)
class Undecodable:
    """Request bytes that do not parse as the RPC's message: INVALID_ARGUMENT, where gRPC
    itself would answer INTERNAL ("Exception deserializing request!")."""

    message: str


def _decoder(message_type: type) -> Callable[[bytes], object]:
    """A request deserializer that hands undecodable bytes to the servicer as Undecodable."""

    def decode(data: bytes) -> object:
        try:
            return message_type.FromString(data)
        except Exception as error:  # noqa: BLE001 - protobuf raises DecodeError, UnicodeDecodeError, ...
            return Undecodable(f"not a valid {message_type.DESCRIPTOR.full_name}: {error}")

    return decode


def _refusing_undecodable(method: Callable) -> Callable:
    """A unary-request handler that ends an Undecodable request with INVALID_ARGUMENT."""

    def handle(request: object, context: grpc.ServicerContext) -> object:
        if isinstance(request, Undecodable):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)
        return method(request, context)

    return handle


def _register(service: P4RuntimeService, server: grpc.Server) -> None:
    """What p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server does, with our decoders."""
    handlers = {}
    for method in p4runtime_pb2.DESCRIPTOR.services_by_name["P4Runtime"].methods:
        request_type = getattr(p4runtime_pb2, method.input_type.name)
        response_type = getattr(p4runtime_pb2, method.output_type.name)
        implementation = getattr(service, method.name)
        # protobuf 3.20's descriptors do not say which RPCs stream: the proto does.
        if method.name == "StreamChannel":
            # Each message is checked where the stream is read.
            make = grpc.stream_stream_rpc_method_handler
        else:
            implementation = _refusing_undecodable(implementation)
            make = (grpc.unary_stream_rpc_method_handler if method.name == "Read"
                    else grpc.unary_unary_rpc_method_handler)
        handlers[method.name] = make(implementation,
                                     request_deserializer=_decoder(request_type),
                                     response_serializer=response_type.SerializeToString)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("p4.v1.P4Runtime", handlers),))


def serve(
    target: tgt.Target, device_id: int, address: str, tls: ServerTls | None = None
) -> RunningServer:
    """Start a P4Runtime server for `target` as device `device_id` on `address` (host:port;
    port 0 picks a free one, see `RunningServer.port`), over TLS when `tls` is given."""
    # Read the TLS files before anything starts, so that a missing one leaves nothing behind.
    credentials = tls.credentials() if tls is not None else None
    service = P4RuntimeService(target, device_id)
    # Every open StreamChannel holds a worker for its lifetime; leave room for unary RPCs.
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=MAX_STREAMS + 16, thread_name_prefix="p4rt"),
        options=[
            ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
            ("grpc.max_send_message_length", MAX_RECEIVE_BYTES),
        ],
    )
    _register(service, server)
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        service.close()
        raise OSError(f"cannot listen on {address}")
    server.start()
    return RunningServer(server, service, port)
