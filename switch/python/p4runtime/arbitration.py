"""Client arbitration (spec "Client Arbitration and Controller Replication"), default role only.

A primary exists for the device when the live client with the highest election id holds an
id at least as high as any id ever seen; when the primary leaves, nobody is primary until a
client claims an id ≥ the highest seen. Every client is told whenever the primary changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from .status import P4RuntimeError

ElectionId = tuple[int, int]

# PI (simple_switch_grpc) accepts at most this many concurrent streams.
MAX_STREAMS = 16


def election_id_of(message: object) -> ElectionId | None:
    """(high, low) of a message's `election_id`, or None when the field is unset."""
    if not message.HasField("election_id"):
        return None
    return (message.election_id.high, message.election_id.low)


def check_default_role(message: object) -> None:
    """Refuse any role but the default one (UNIMPLEMENTED)."""
    role = getattr(message, "role", None)
    role_name = role if isinstance(role, str) else (role.name if role is not None else "")
    role_id = getattr(message, "role_id", 0)
    if role_name or role_id:
        raise P4RuntimeError("UNIMPLEMENTED", "only the default role is supported")


@dataclass
class _Client:
    election_id: ElectionId | None
    send: Callable[[p4runtime_pb2.StreamMessageResponse], None]


class Arbitration:
    """Tracks the streams of one device and which of them is primary."""

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._lock = threading.Lock()
        self._clients: dict[object, _Client] = {}
        self._highest: ElectionId | None = None
        self._primary: object | None = None

    def arbitrate(
        self,
        stream: object,
        update: p4runtime_pb2.MasterArbitrationUpdate,
        send: Callable[[p4runtime_pb2.StreamMessageResponse], None],
    ) -> None:
        """Handle an arbitration update from `stream`; raises the code that ends the stream."""
        with self._lock:
            known = stream in self._clients
            if update.device_id != self.device_id:
                if known:
                    raise P4RuntimeError(
                        "FAILED_PRECONDITION", "arbitration changed the stream's device_id"
                    )
                raise P4RuntimeError("NOT_FOUND", f"unknown device_id {update.device_id}")
            if update.HasField("role") and (update.role.name or update.role.id):
                if known:
                    raise P4RuntimeError(
                        "FAILED_PRECONDITION", "arbitration changed the stream's role"
                    )
                raise P4RuntimeError("UNIMPLEMENTED", "only the default role is supported")
            election_id = election_id_of(update)
            if election_id is not None and any(
                c.election_id == election_id
                for s, c in self._clients.items()
                if s is not stream
            ):
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", f"election_id {election_id} is used by another client"
                )
            if not known and len(self._clients) >= MAX_STREAMS:
                raise P4RuntimeError("RESOURCE_EXHAUSTED", "too many streams open")
            self._clients[stream] = _Client(election_id, send)
            if election_id is not None and (self._highest is None or election_id > self._highest):
                self._highest = election_id
            changed = self._elect()
            targets = list(self._clients) if changed else [stream]
            for client_stream in targets:
                self._notify(client_stream)

    def remove(self, stream: object) -> None:
        """Forget a closed stream and notify the others if it was the primary."""
        with self._lock:
            if self._clients.pop(stream, None) is None:
                return
            if self._elect():
                for client_stream in self._clients:
                    self._notify(client_stream)

    def is_primary_stream(self, stream: object) -> bool:
        """True iff `stream` is the current primary's stream."""
        with self._lock:
            return self._primary is not None and self._primary is stream

    def primary_send(self) -> Callable[[p4runtime_pb2.StreamMessageResponse], None] | None:
        """The send function of the primary's stream, or None without a primary."""
        with self._lock:
            if self._primary is None:
                return None
            return self._clients[self._primary].send

    def check_primary(self, election_id: ElectionId | None) -> None:
        """PERMISSION_DENIED unless `election_id` is the primary's.

        As PI does, a request without election id is accepted while no stream is open.
        """
        with self._lock:
            if election_id is None and not self._clients:
                return
            if self._primary is None or self._clients[self._primary].election_id != election_id:
                raise P4RuntimeError("PERMISSION_DENIED", "not the primary client")

    def _elect(self) -> bool:
        """Recompute the primary; True if it changed."""
        candidates = [
            (c.election_id, s) for s, c in self._clients.items() if c.election_id is not None
        ]
        primary = None
        if candidates:
            best_id, best_stream = max(candidates, key=lambda item: item[0])
            if self._highest is not None and best_id >= self._highest:
                primary = best_stream
        changed = primary is not self._primary
        self._primary = primary
        return changed

    def _notify(self, stream: object) -> None:
        """Send the arbitration status as seen by `stream`."""
        response = p4runtime_pb2.StreamMessageResponse()
        arbitration = response.arbitration
        arbitration.device_id = self.device_id
        if self._highest is not None:
            arbitration.election_id.high, arbitration.election_id.low = self._highest
        if self._primary is stream:
            arbitration.status.code = code_pb2.OK
            arbitration.status.message = "is primary"
        elif self._primary is not None:
            arbitration.status.code = code_pb2.ALREADY_EXISTS
            arbitration.status.message = "is backup, a primary exists"
        else:
            arbitration.status.code = code_pb2.NOT_FOUND
            arbitration.status.message = "is backup, no primary"
        self._clients[stream].send(response)
