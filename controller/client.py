"""A P4Runtime connection to one switch: arbitration, pipeline, writes, reads, packet I/O.

Works with any P4Runtime server (bufferlab-switch or BMv2's simple_switch_grpc). Failed
writes come back as a `P4RuntimeError` that carries the gRPC code and, for batches, each
failed update's own code and message decoded from `grpc-status-details-bin`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import grpc
from google.protobuf import any_pb2, struct_pb2
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

ARBITRATION_TIMEOUT_S = 5.0
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class UpdateError:
    """One failed update of a batch: its position, gRPC code name and message."""

    index: int
    code: str
    message: str


@dataclass(frozen=True)
class ClientTls:
    """TLS towards the switch (p4runtime-shell's --cacert, --cert, --private-key): the PEM CA
    that signed the switch's certificate (None: the system's CAs) and, for mutual TLS, this
    client's PEM certificate and key."""

    cacert_path: str | None = None
    cert_path: str | None = None
    key_path: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        """gRPC channel credentials from the files; OSError if one cannot be read."""

        def pem(path: str | None) -> bytes | None:
            return Path(path).read_bytes() if path else None

        return grpc.ssl_channel_credentials(pem(self.cacert_path), pem(self.key_path),
                                            pem(self.cert_path))


def role_config(p4_ids: Iterable[int], packet_io: bool = False,
                pipeline: bool = False) -> any_pb2.Any:
    """bufferlab-switch's `role.config` (a google.protobuf.Struct; switch/python/p4runtime/
    roles.py): the P4Info ids the role may write, whether it has packet I/O, and whether it
    may set the pipeline."""
    fields = struct_pb2.Struct()
    fields.update({"p4_ids": [float(i) for i in p4_ids], "packet_io": packet_io,
                   "pipeline": pipeline})
    packed = any_pb2.Any()
    packed.Pack(fields)
    return packed


class P4RuntimeError(RuntimeError):
    """A P4Runtime RPC that failed; `code` is the gRPC status code's name (e.g. NOT_FOUND)."""

    def __init__(self, rpc: str, code: str, message: str, updates: list[UpdateError] | None = None):
        self.rpc = rpc
        self.code = code
        self.updates = updates or []
        detail = "; ".join(f"update {u.index}: {u.code} {u.message}" for u in self.updates)
        super().__init__(f"{rpc} failed: {code} {message}" + (f" ({detail})" if detail else ""))


def _error(rpc: str, err: grpc.RpcError) -> P4RuntimeError:
    updates: list[UpdateError] = []
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for i, detail in enumerate(status.details):
            p4_error = p4runtime_pb2.Error()
            if detail.Unpack(p4_error) and p4_error.canonical_code != code_pb2.OK:
                updates.append(UpdateError(i, code_pb2.Code.Name(p4_error.canonical_code),
                                           p4_error.message))
    return P4RuntimeError(rpc, err.code().name, err.details() or "", updates)


class SwitchConnection:
    """One client session with a switch, as primary (or backup) for `election_id`."""

    def __init__(
        self,
        address: str,
        device_id: int = 0,
        election_id: tuple[int, int] = (0, 1),
        role: str | None = None,
        request_log: TextIO | None = None,
        tls: ClientTls | None = None,
        role_config: any_pb2.Any | None = None,
    ) -> None:
        """A connection to `address`, plain or over `tls`, for `role` (None: the default role,
        full access) with its `role_config` (see `role_config()`)."""
        self.address = address
        self.request_log = request_log
        self.device_id = device_id
        self.election_id = p4runtime_pb2.Uint128(high=election_id[0], low=election_id[1])
        self.role = role
        self.role_config = role_config
        #: Whether this client is primary, as the switch's latest arbitration notice says.
        self.is_primary = False
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)]
        if tls is None:
            self._channel = grpc.insecure_channel(address, options=options)
        else:
            self._channel = grpc.secure_channel(address, tls.credentials(), options=options)
        self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        self._requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[p4runtime_pb2.MasterArbitrationUpdate | grpc.RpcError] = (
            queue.Queue())
        self.packets: queue.Queue[p4runtime_pb2.PacketIn] = queue.Queue()
        self.digests: queue.Queue[p4runtime_pb2.DigestList] = queue.Queue()
        self.stream_errors: queue.Queue[p4runtime_pb2.StreamError] = queue.Queue()
        self._reader: threading.Thread | None = None

    def connect(self, timeout_s: float = ARBITRATION_TIMEOUT_S) -> bool:
        """Open the stream and take part in arbitration; returns whether we are primary."""
        responses = self._stub.StreamChannel(self._request_stream())
        self._reader = threading.Thread(target=self._read_stream, args=(responses,), daemon=True)
        self._reader.start()
        self._send_arbitration()
        try:
            update = self._arbitration.get(timeout=timeout_s)
        except queue.Empty:
            self.close()
            raise P4RuntimeError("StreamChannel", "DEADLINE_EXCEEDED",
                                 f"no arbitration answer from {self.address} in {timeout_s} s") from None
        if isinstance(update, grpc.RpcError):
            # The switch ended the stream (a refused arbitration, a failed TLS handshake).
            self.close()
            raise _error("StreamChannel", update)
        return self.is_primary

    def next_arbitration(
        self, timeout_s: float = ARBITRATION_TIMEOUT_S
    ) -> p4runtime_pb2.MasterArbitrationUpdate:
        """The switch's next arbitration notice to this client (queue.Empty after
        `timeout_s`); P4RuntimeError if the switch ended the stream."""
        update = self._arbitration.get(timeout=timeout_s)
        if isinstance(update, grpc.RpcError):
            raise _error("StreamChannel", update)
        return update

    def _send_arbitration(self) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.CopyFrom(self.election_id)
        if self.role:
            request.arbitration.role.name = self.role
            if self.role_config is not None:
                request.arbitration.role.config.CopyFrom(self.role_config)
        self._requests.put(request)

    def _request_stream(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            request = self._requests.get()
            if request is None:
                return
            yield request

    def _read_stream(self, responses: Iterable[p4runtime_pb2.StreamMessageResponse]) -> None:
        try:
            for response in responses:
                which = response.WhichOneof("update")
                if which == "arbitration":
                    # Kept current with every notification: another controller may take
                    # over (or leave) at any time.
                    self.is_primary = response.arbitration.status.code == code_pb2.OK
                    self._arbitration.put(response.arbitration)
                elif which == "packet":
                    self.packets.put(response.packet)
                elif which == "digest":
                    self.digests.put(response.digest)
                elif which == "error":
                    self.stream_errors.put(response.error)
        except grpc.RpcError as err:
            # The stream ends with an error when either side closes it; a connect() still
            # waiting for its arbitration answer learns why.
            self._arbitration.put(err)

    def set_pipeline(
        self,
        p4info: p4info_pb2.P4Info,
        device_config: bytes,
        action: int = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        cookie: int | None = None,
    ) -> None:
        """Install a pipeline: P4Info plus the target's device config (BMv2 JSON bytes)."""
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self.election_id, action=action
        )
        if self.role:
            request.role = self.role
        request.config.p4info.CopyFrom(p4info)
        request.config.p4_device_config = device_config
        if cookie is not None:
            request.config.cookie.cookie = cookie
        self._call("SetForwardingPipelineConfig", self._stub.SetForwardingPipelineConfig, request)

    def get_pipeline(
        self,
        response_type: int = p4runtime_pb2.GetForwardingPipelineConfigRequest.ALL,
    ) -> p4runtime_pb2.ForwardingPipelineConfig:
        """The installed pipeline (P4Info, device config and cookie, as `response_type` asks)."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id, response_type=response_type
        )
        return self._call("GetForwardingPipelineConfig", self._stub.GetForwardingPipelineConfig,
                          request).config

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        """Apply a batch of updates (CONTINUE_ON_ERROR); any failure raises with per-update codes."""
        request = p4runtime_pb2.WriteRequest(device_id=self.device_id,
                                             election_id=self.election_id)
        if self.role:
            request.role = self.role
        request.updates.extend(updates)
        self._call("Write", self._stub.Write, request)

    def insert(self, *entities: p4runtime_pb2.Entity) -> None:
        """INSERT each entity, in one batch."""
        self.write([_update(p4runtime_pb2.Update.INSERT, e) for e in entities])

    def modify(self, *entities: p4runtime_pb2.Entity) -> None:
        """MODIFY each entity, in one batch."""
        self.write([_update(p4runtime_pb2.Update.MODIFY, e) for e in entities])

    def delete(self, *entities: p4runtime_pb2.Entity) -> None:
        """DELETE each entity, in one batch."""
        self.write([_update(p4runtime_pb2.Update.DELETE, e) for e in entities])

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """Every entity matching the (possibly wildcard) entities given."""
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        if self.role:
            request.role = self.role
        request.entities.extend(entities)
        try:
            return [e for response in self._stub.Read(request) for e in response.entities]
        except grpc.RpcError as err:
            raise _error("Read", err) from None

    def packet_out(self, payload: bytes, metadata: dict[int, bytes]) -> None:
        """Send a frame to the switch's CPU port with the given packet_out metadata (id -> value)."""
        request = p4runtime_pb2.StreamMessageRequest()
        request.packet.payload = payload
        for metadata_id, value in sorted(metadata.items()):
            request.packet.metadata.add(metadata_id=metadata_id, value=value)
        self._requests.put(request)

    def ack_digest(self, digest_id: int, list_id: int) -> None:
        """Acknowledge a DigestList so the switch may send that digest's data again."""
        request = p4runtime_pb2.StreamMessageRequest()
        request.digest_ack.digest_id = digest_id
        request.digest_ack.list_id = list_id
        self._requests.put(request)

    def _call(self, rpc: str, method: grpc.UnaryUnaryMultiCallable, request: object) -> object:
        if self.request_log is not None and rpc != "SetForwardingPipelineConfig":
            # The pipeline request holds the whole JSON: the log names it instead.
            self.request_log.write(f"[{rpc}]\n{request}\n")
            self.request_log.flush()
        elif self.request_log is not None:
            self.request_log.write(f"[{rpc}] pipeline config ({len(request.config.p4_device_config)}"
                                   " bytes of device config)\n")
            self.request_log.flush()
        try:
            return method(request)
        except grpc.RpcError as err:
            raise _error(rpc, err) from None

    def close(self) -> None:
        """End the stream and the channel."""
        self._requests.put(None)
        if self._reader is not None:
            self._reader.join(timeout=2)
        self._channel.close()

    def __enter__(self) -> SwitchConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _update(kind: int, entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=kind, entity=entity)


def entity(message: object) -> p4runtime_pb2.Entity:
    """Wrap a TableEntry, CounterEntry, PacketReplicationEngineEntry, … in an Entity."""
    fields = {
        p4runtime_pb2.TableEntry: "table_entry",
        p4runtime_pb2.CounterEntry: "counter_entry",
        p4runtime_pb2.DirectCounterEntry: "direct_counter_entry",
        p4runtime_pb2.MeterEntry: "meter_entry",
        p4runtime_pb2.DirectMeterEntry: "direct_meter_entry",
        p4runtime_pb2.RegisterEntry: "register_entry",
        p4runtime_pb2.PacketReplicationEngineEntry: "packet_replication_engine_entry",
        p4runtime_pb2.ActionProfileMember: "action_profile_member",
        p4runtime_pb2.ActionProfileGroup: "action_profile_group",
        p4runtime_pb2.DigestEntry: "digest_entry",
    }
    wrapped = p4runtime_pb2.Entity()
    getattr(wrapped, fields[type(message)]).CopyFrom(message)
    return wrapped
