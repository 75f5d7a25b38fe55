"""Client arbitration (spec "Client Arbitration and Controller Replication"), per role.

For each role of the device, a primary exists when the live client with the highest
election id holds an id at least as high as any id ever seen for that role; when the
primary leaves, nobody is primary until a client claims an id ≥ the highest seen. Every
client of the role is told whenever its primary changes. The primary's `role.config`
(roles.py) decides what that role may do; the server remembers it per role.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from google.protobuf import any_pb2
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from .roles import DEFAULT_ROLE, FULL_ACCESS, RoleConfig, parse_role_config
from .status import P4RuntimeError

ElectionId = tuple[int, int]
Send = Callable[[p4runtime_pb2.StreamMessageResponse], None]

# PI (simple_switch_grpc) accepts at most this many concurrent streams.
MAX_STREAMS = 16


def election_id_of(message: object) -> ElectionId | None:
    """(high, low) of a message's `election_id`, or None when the field is unset."""
    if not message.HasField("election_id"):
        return None
    return (message.election_id.high, message.election_id.low)


@dataclass
class _Client:
    role: str
    election_id: ElectionId | None
    send: Send


@dataclass
class _Role:
    """One role's election: its highest id ever, its primary, the config its primary gave."""

    highest: ElectionId | None = None
    primary: object | None = None
    config: RoleConfig = FULL_ACCESS
    config_message: any_pb2.Any | None = None
    streams: list[object] = field(default_factory=list)


class Arbitration:
    """Tracks the streams of one device, their roles and each role's primary."""

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._lock = threading.Lock()
        self._clients: dict[object, _Client] = {}
        self._roles: dict[str, _Role] = {}

    def arbitrate(
        self, stream: object, update: p4runtime_pb2.MasterArbitrationUpdate, send: Send
    ) -> None:
        """Handle an arbitration update from `stream`; raises the code that ends the stream."""
        with self._lock:
            known = self._clients.get(stream)
            if update.device_id != self.device_id:
                if known:
                    raise P4RuntimeError(
                        "FAILED_PRECONDITION", "arbitration changed the stream's device_id"
                    )
                raise P4RuntimeError("NOT_FOUND", f"unknown device_id {update.device_id}")
            role_name = update.role.name
            if known and known.role != role_name:
                raise P4RuntimeError(
                    "FAILED_PRECONDITION",
                    "arbitration changed the stream's role: open a new stream for another role",
                )
            config = parse_role_config(update.role)
            election_id = election_id_of(update)
            role = self._roles.setdefault(role_name, _Role())
            if election_id is not None and any(
                self._clients[s].election_id == election_id for s in role.streams if s is not stream
            ):
                raise P4RuntimeError(
                    "INVALID_ARGUMENT",
                    f"election_id {election_id} is used by another client of role {role_name!r}",
                )
            if not known and len(self._clients) >= MAX_STREAMS:
                raise P4RuntimeError("RESOURCE_EXHAUSTED", "too many streams open")
            self._clients[stream] = _Client(role_name, election_id, send)
            if not known:
                role.streams.append(stream)
            if election_id is not None and (role.highest is None or election_id > role.highest):
                role.highest = election_id
            changed = self._elect(role)
            config_changed = False
            if role.primary is stream:
                message = update.role.config if update.role.HasField("config") else None
                config_changed = message != role.config_message
                role.config, role.config_message = config, message
            targets = role.streams if changed or config_changed else [stream]
            for client_stream in targets:
                self._notify(role_name, role, client_stream)

    def remove(self, stream: object) -> None:
        """Forget a closed stream and notify its role's others if it was the primary."""
        with self._lock:
            client = self._clients.pop(stream, None)
            if client is None:
                return
            role = self._roles[client.role]
            role.streams.remove(stream)
            if self._elect(role):
                for client_stream in role.streams:
                    self._notify(client.role, role, client_stream)

    def is_primary_stream(self, stream: object) -> bool:
        """True iff `stream` is the primary of its role."""
        with self._lock:
            client = self._clients.get(stream)
            return client is not None and self._roles[client.role].primary is stream

    def stream_config(self, stream: object) -> RoleConfig | None:
        """The role config of the role whose primary `stream` is, or None for a backup."""
        with self._lock:
            client = self._clients.get(stream)
            if client is None or self._roles[client.role].primary is not stream:
                return None
            return self._roles[client.role].config

    def primary_sends(self, wants: Callable[[RoleConfig], bool]) -> list[Send]:
        """The send functions of every role's primary whose config `wants` the message."""
        with self._lock:
            return [
                self._clients[role.primary].send
                for role in self._roles.values()
                if role.primary is not None and wants(role.config)
            ]

    def check_primary(self, election_id: ElectionId | None, role_name: str) -> RoleConfig:
        """The role's config if `election_id` is its primary's; NOT_FOUND for a role nobody
        has arbitrated for, PERMISSION_DENIED for anyone but the primary.

        As PI does, a request of the default role without election id is accepted while no
        stream is open.
        """
        with self._lock:
            if role_name == DEFAULT_ROLE and election_id is None and not self._clients:
                return FULL_ACCESS
            role = self._roles.get(role_name)
            if role is None:
                if role_name == DEFAULT_ROLE:
                    raise P4RuntimeError("PERMISSION_DENIED", "not the primary client")
                raise P4RuntimeError("NOT_FOUND", f"no client has arbitrated for role {role_name!r}")
            if role.primary is None or self._clients[role.primary].election_id != election_id:
                raise P4RuntimeError(
                    "PERMISSION_DENIED",
                    "not the primary client" + (f" of role {role_name!r}" if role_name else ""),
                )
            return role.config

    def check_role_known(self, role_name: str) -> None:
        """NOT_FOUND for a named role no client has arbitrated for."""
        with self._lock:
            if role_name != DEFAULT_ROLE and role_name not in self._roles:
                raise P4RuntimeError("NOT_FOUND", f"no client has arbitrated for role {role_name!r}")

    def _elect(self, role: _Role) -> bool:
        """Recompute the role's primary; True if it changed."""
        candidates = [
            (self._clients[s].election_id, s)
            for s in role.streams
            if self._clients[s].election_id is not None
        ]
        primary = None
        if candidates:
            best_id, best_stream = max(candidates, key=lambda item: item[0])
            if role.highest is not None and best_id >= role.highest:
                primary = best_stream
        changed = primary is not role.primary
        role.primary = primary
        return changed

    def _notify(self, role_name: str, role: _Role, stream: object) -> None:
        """Send the role's arbitration status as seen by `stream`."""
        response = p4runtime_pb2.StreamMessageResponse()
        arbitration = response.arbitration
        arbitration.device_id = self.device_id
        if role_name:
            arbitration.role.name = role_name
            if role.config_message is not None:
                arbitration.role.config.CopyFrom(role.config_message)
        if role.highest is not None:
            arbitration.election_id.high, arbitration.election_id.low = role.highest
        if role.primary is stream:
            arbitration.status.code = code_pb2.OK
            arbitration.status.message = "is primary"
        elif role.primary is not None:
            arbitration.status.code = code_pb2.ALREADY_EXISTS
            arbitration.status.message = "is backup, a primary exists"
        else:
            arbitration.status.code = code_pb2.NOT_FOUND
            arbitration.status.message = "is backup, no primary"
        self._clients[stream].send(response)
