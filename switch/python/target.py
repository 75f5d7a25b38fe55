"""The engine as a P4Runtime `Target`: what the P4Runtime server asks, done with the engine's API.

The server (`bufferlab.switch.p4runtime`) speaks BMv2 JSON names and padded big-endian
bytes; the engine speaks the same names and ints. This adapter converts values, finds
entries by (key, priority) to get the engine's handles, and keeps what the engine does not:
selector groups' `max_size`, and the widths needed to pad values read back (register cells,
digest fields).

    engine = Engine(json_text)
    target = EngineTarget(engine, json_text, cpu_port=255)
    running = serve(target, device_id=0, address="127.0.0.1:9559")

Packet I/O and digests: `packet_out` injects a frame on the CPU port through `inject`
(default: `engine.send` at the engine's current time, for in-process use; the live switch
passes its own, which stamps the frame with the live clock). The data plane's packet-ins and
digests reach the server's handlers through `dispatch` (the live switch's event thread calls
it) or `poll` (in-process: drains the engine's queues after the caller advanced it).

Every method runs under `lock` (shared with the runtime CLI) so that a compound change (find
an entry, then change it) is not interleaved with another control client's.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from bufferlab.switch import _engine
from bufferlab.switch.engine import (
    AlreadyExistsError,
    Engine,
    EngineError,
    FailedPreconditionError,
    InvalidArgumentError,
    LoadError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
)
from bufferlab.switch.p4runtime import target as tgt

#: How often a pipeline change waiting for frames to drain tries again, s.
DRAIN_POLL_S = 0.005

#: PI maps clone session s to this hidden multicast group + s (formats.md §2.9).
CLONE_GROUP_BASE = 32768

#: Engine error -> P4Runtime target error. A const default action is refused as an
#: invalid request: the server already refuses writes to const tables it knows of.
_ERRORS: dict[type[EngineError], type[tgt.TargetError]] = {
    NotFoundError: tgt.NotFound,
    AlreadyExistsError: tgt.AlreadyExists,
    InvalidArgumentError: tgt.InvalidArgument,
    OutOfRangeError: tgt.OutOfRange,
    ResourceExhaustedError: tgt.ResourceExhausted,
    PermissionDeniedError: tgt.InvalidArgument,
    FailedPreconditionError: tgt.FailedPrecondition,
    LoadError: tgt.InvalidArgument,
}

Injector = Callable[[int, bytes], None]
PacketIn = tuple[int, bytes, int]
Digest = tuple[str, int, Sequence[int], int]
F = TypeVar("F", bound=Callable[..., Any])


def _translated(method: F) -> F:
    """Run a target method under the adapter's lock, engine errors turned into target errors."""

    @functools.wraps(method)
    def run(self: EngineTarget, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            try:
                return method(self, *args, **kwargs)
            except EngineError as error:
                for engine_error, target_error in _ERRORS.items():
                    if isinstance(error, engine_error):
                        raise target_error(str(error)) from None
                raise tgt.InvalidArgument(str(error)) from None

    return run  # type: ignore[return-value]


def _byte_len(width: int) -> int:
    return max(1, (width + 7) // 8)


def _pad(value: int, width: int) -> bytes:
    """`value` as BMv2's padded big-endian bytes for a field of `width` bits."""
    return (value & ((1 << width) - 1)).to_bytes(_byte_len(width), "big")


def _int(value: bytes) -> int:
    return int.from_bytes(value, "big")


class _ProgramWidths:
    """Widths the engine does not report, read from the BMv2 JSON: register cells and the
    fields of each learn list (digest)."""

    def __init__(self, json_text: str, field_width: Callable[[str], int]) -> None:
        document = json.loads(json_text)
        self.registers: dict[str, int] = {
            r["name"]: int(r["bitwidth"]) for r in document.get("register_arrays", [])
        }
        self.learn_lists: dict[str, list[int]] = {}
        for learn in document.get("learn_lists", []):
            widths = []
            for element in learn.get("elements", []):
                value = element.get("value")
                widths.append(field_width(".".join(value)) if isinstance(value, list) else 0)
            self.learn_lists[learn["name"]] = widths


class EngineTarget:
    """The P4Runtime `Target` protocol over one engine (see the module documentation)."""

    def __init__(
        self,
        engine: Engine,
        json_text: str,
        cpu_port: int | None = None,
        inject: Injector | None = None,
        lock: threading.RLock | None = None,
        on_pipeline: Callable[[str], None] | None = None,
        drain_timeout_s: float = 0.0,
    ) -> None:
        """`json_text` is the engine's current program; `on_pipeline(json_text)` is told of
        every program the server loads (e.g. so the runtime CLI learns the new names).
        The engine swaps programs only when no frame is queued or in flight: a live switch
        passes `drain_timeout_s`, how long a pipeline change waits for its packet thread to
        send them out before it is refused (FAILED_PRECONDITION)."""
        self.engine = engine
        self.drain_timeout_s = drain_timeout_s
        self.cpu_port = cpu_port
        self.lock = lock or threading.RLock()
        self._inject = inject or self._send_now
        self._on_pipeline = on_pipeline
        self._widths = _ProgramWidths(json_text, engine.field_width)
        self._group_sizes: dict[tuple[str, int], int] = {}
        self._packet_in_handler: tgt.PacketInHandler | None = None
        self._digest_handler: tgt.DigestHandler | None = None

    def _send_now(self, port: int, frame: bytes) -> None:
        self.engine.send(port, frame, self.engine.now())

    # -- values ---------------------------------------------------------------------------

    def _keys(self, table: str, key: Sequence[tgt.MatchParam]) -> list[tuple]:
        """Match params as the engine's (kind, a, b) tuples, in key order."""
        spec = self.engine.table_keys(table)
        if len(spec) != len(key):
            raise tgt.InvalidArgument(f"table {table}: {len(key)} key values for {len(spec)} keys")
        out: list[tuple] = []
        for (name, kind, width), param in zip(spec, key, strict=True):
            value = _int(param.value)
            if kind == "optional":
                # P4Runtime optional arrives as ternary: all-ones mask = present, 0 = wildcard.
                mask = _int(param.mask) if param.mask is not None else (1 << width) - 1
                out.append(("optional", value if mask else None, None))
            elif param.kind == "exact":
                out.append(("exact", value, None))
            elif param.kind == "lpm":
                out.append(("lpm", value, param.prefix_len or 0))
            elif param.kind == "ternary":
                out.append(("ternary", value, _int(param.mask or b"\x00")))
            elif param.kind == "range":
                out.append(("range", value, _int(param.high or b"\x00")))
            else:
                raise tgt.InvalidArgument(f"table {table}: key {name}: unknown match kind {param.kind}")
        return out

    def _params(self, action: str) -> list[int]:
        return [width for _, width in self.engine.action_params(action)]

    def _action_call(self, action: str, data: Sequence[int]) -> tgt.ActionCall:
        widths = self._params(action)
        return tgt.ActionCall(action, tuple(_pad(v, w) for v, w in zip(data, widths, strict=True)))

    def _match_param(self, value: tuple, width: int) -> tgt.MatchParam:
        match_kind, a, b = value
        if match_kind == "exact":
            return tgt.MatchParam("exact", _pad(a, width))
        if match_kind == "lpm":
            return tgt.MatchParam("lpm", _pad(a, width), prefix_len=b)
        if match_kind == "ternary":
            return tgt.MatchParam("ternary", _pad(a, width), mask=_pad(b, width))
        if match_kind == "range":
            return tgt.MatchParam("range", _pad(a, width), high=_pad(b, width))
        # optional: a ternary with an all-ones (present) or zero (wildcard) mask.
        if a is None:
            return tgt.MatchParam("ternary", _pad(0, width), mask=_pad(0, width))
        return tgt.MatchParam("ternary", _pad(a, width), mask=_pad((1 << width) - 1, width))

    def _handle(self, table: str, key: Sequence[tgt.MatchParam], priority: int) -> int:
        # The raw lookup: Engine.table_find takes values by key name, these are (kind, a, b).
        return _engine.Engine.table_find(self.engine, table, self._keys(table, key), priority)

    # -- pipeline -------------------------------------------------------------------------

    @_translated
    def load_pipeline(self, json_text: str) -> None:
        """Replace the program; everything the program's entries do not hold starts empty."""
        try:
            json.loads(json_text)
        except ValueError as error:
            raise tgt.InvalidArgument(f"BMv2 JSON: {error}") from None
        deadline = time.monotonic() + self.drain_timeout_s
        while True:
            try:
                self.engine.set_program(json_text)
                break
            except FailedPreconditionError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(DRAIN_POLL_S)
        self._widths = _ProgramWidths(json_text, self.engine.field_width)
        self._group_sizes.clear()
        if self._on_pipeline is not None:
            self._on_pipeline(json_text)

    # -- match-action tables --------------------------------------------------------------

    @_translated
    def table_add(self, table: str, entry: tgt.TableEntry) -> None:
        """Insert an entry (direct action, member or group)."""
        keys = self._keys(table, entry.key)
        action = entry.action
        if isinstance(action, tgt.ActionCall):
            self.engine.table_add_raw(table, keys, action.name, [_int(p) for p in action.params],
                                      entry.priority)
        elif isinstance(action, tgt.MemberRef):
            self.engine.table_add_indirect(table, keys, action.member_id, False, entry.priority)
        else:
            self.engine.table_add_indirect(table, keys, action.group_id, True, entry.priority)

    @_translated
    def table_modify(self, table: str, entry: tgt.TableEntry) -> None:
        """Replace an entry's action, keeping its direct counter and meter."""
        handle = self._handle(table, entry.key, entry.priority)
        action = entry.action
        if isinstance(action, tgt.ActionCall):
            self.engine.table_modify(table, handle, action.name, [_int(p) for p in action.params])
            return
        # The engine changes indirect entries by re-adding them: carry the direct state over,
        # and put the old entry back if the new one is refused.
        old = self._entry_view(table, handle)
        rates = self.engine.table_meter_get(table, handle)
        self.engine.table_delete(table, handle)
        group = isinstance(action, tgt.GroupRef)
        target_id = action.group_id if isinstance(action, tgt.GroupRef) else action.member_id
        try:
            handle = self.engine.table_add_indirect(table, old["keys"], target_id, group,
                                                    entry.priority)
        except EngineError:
            self._readd(table, old)
            raise
        self.engine.table_counter_write(table, handle, old["packets"], old["bytes"])
        if rates is not None:
            self.engine.table_meter_set(table, handle, *rates)

    def _entry_view(self, table: str, handle: int) -> dict[str, Any]:
        return next(e for e in self.engine.table_entries(table) if e["handle"] == handle)

    def _readd(self, table: str, view: dict[str, Any]) -> int:
        """Add an entry again from its read-back view, with its direct counter (its direct
        meter starts unconfigured); returns the new handle."""
        if "member" in view or "group" in view:
            group = "group" in view
            handle = self.engine.table_add_indirect(table, view["keys"],
                                                    view["group" if group else "member"], group,
                                                    view["priority"])
        else:
            handle = self.engine.table_add_raw(table, view["keys"], view["action"], view["data"],
                                               view["priority"])
        self.engine.table_counter_write(table, handle, view["packets"], view["bytes"])
        return handle

    @_translated
    def table_delete(self, table: str, key: tuple[tgt.MatchParam, ...], priority: int) -> None:
        """Delete the entry with this key and priority."""
        self.engine.table_delete(table, self._handle(table, key, priority))

    @_translated
    def table_entries(self, table: str) -> list[tgt.TableEntry]:
        """All entries, const ones included, in insertion order."""
        spec = self.engine.table_keys(table)
        entries = []
        for e in self.engine.table_entries(table):
            key = tuple(self._match_param(v, width)
                        for v, (_, _, width) in zip(e["keys"], spec, strict=True))
            action: tgt.EntryAction
            if "member" in e:
                action = tgt.MemberRef(e["member"])
            elif "group" in e:
                action = tgt.GroupRef(e["group"])
            else:
                action = self._action_call(e["action"], e["data"])
            entries.append(tgt.TableEntry(key, action, e["priority"]))
        return entries

    @_translated
    def table_set_default(self, table: str, action: tgt.ActionCall) -> None:
        """Set the action run on a miss."""
        self.engine.table_set_default(table, action.name, [_int(p) for p in action.params])

    @_translated
    def table_reset_default(self, table: str) -> None:
        """Restore the program's default action."""
        self.engine.table_reset_default(table)

    @_translated
    def table_get_default(self, table: str) -> tgt.ActionCall:
        """The action run on a miss."""
        default = self.engine.table_default(table)
        if default is None:
            raise tgt.NotFound(f"table {table} has no direct default action")
        name, data = default
        return self._action_call(name, data)

    # -- action profiles and selectors ----------------------------------------------------

    @_translated
    def act_prof_add_member(self, profile: str, member_id: int, action: tgt.ActionCall) -> None:
        """Create a member."""
        self.engine.profile_member_set(profile, member_id, action.name,
                                       [_int(p) for p in action.params], False)

    @_translated
    def act_prof_modify_member(self, profile: str, member_id: int, action: tgt.ActionCall) -> None:
        """Change a member's action."""
        self.engine.profile_member_set(profile, member_id, action.name,
                                       [_int(p) for p in action.params], True)

    @_translated
    def act_prof_delete_member(self, profile: str, member_id: int) -> None:
        """Delete a member."""
        self.engine.profile_member_delete(profile, member_id)

    @_translated
    def act_prof_members(self, profile: str) -> dict[int, tgt.ActionCall]:
        """All members by id."""
        return {m: self._action_call(action, data)
                for m, action, data in self.engine.profile_members(profile)}

    @staticmethod
    def _weighted(members: Iterable[tgt.GroupMember]) -> list[int]:
        """A weighted member set as the engine's member list: a member of weight w appears
        w times, so the selector's hash picks it w times as often (WCMP)."""
        out: list[int] = []
        for m in members:
            if m.weight < 1:
                raise tgt.InvalidArgument(f"member {m.member_id}: weight must be at least 1")
            out += [m.member_id] * m.weight
        return out

    @_translated
    def act_prof_add_group(self, profile: str, group_id: int, members: tuple[tgt.GroupMember, ...],
                           max_size: int) -> None:
        """Create a group."""
        self.engine.profile_group_set(profile, group_id, self._weighted(members), False)
        self._group_sizes[(profile, group_id)] = max_size

    @_translated
    def act_prof_modify_group(self, profile: str, group_id: int,
                              members: tuple[tgt.GroupMember, ...], max_size: int) -> None:
        """Replace a group's members."""
        self.engine.profile_group_set(profile, group_id, self._weighted(members), True)
        self._group_sizes[(profile, group_id)] = max_size

    @_translated
    def act_prof_delete_group(self, profile: str, group_id: int) -> None:
        """Delete a group."""
        self.engine.profile_group_delete(profile, group_id)
        self._group_sizes.pop((profile, group_id), None)

    @_translated
    def act_prof_groups(self, profile: str) -> dict[int, tuple[tuple[tgt.GroupMember, ...], int]]:
        """All groups by id: (members with weights, max_size)."""
        groups = {}
        for group_id, member_ids in self.engine.profile_groups(profile):
            weights: dict[int, int] = {}
            for m in member_ids:
                weights[m] = weights.get(m, 0) + 1
            members = tuple(tgt.GroupMember(m, w) for m, w in weights.items())
            groups[group_id] = (members, self._group_sizes.get((profile, group_id), 0))
        return groups

    # -- counters -------------------------------------------------------------------------

    @_translated
    def counter_read(self, counter: str, index: int) -> tgt.CounterValue:
        """One cell of an indirect counter."""
        packets, size = self.engine.counter_read(counter, index)
        return tgt.CounterValue(packets, size)

    @_translated
    def counter_write(self, counter: str, index: int, value: tgt.CounterValue) -> None:
        """Overwrite one cell of an indirect counter."""
        self.engine.counter_write(counter, index, value.packets, value.bytes)

    @_translated
    def direct_counter_read(self, table: str, key: tuple[tgt.MatchParam, ...],
                            priority: int) -> tgt.CounterValue:
        """The direct counter of an entry."""
        packets, size = self.engine.table_counter(table, self._handle(table, key, priority))
        return tgt.CounterValue(packets, size)

    @_translated
    def direct_counter_write(self, table: str, key: tuple[tgt.MatchParam, ...], priority: int,
                             value: tgt.CounterValue) -> None:
        """Overwrite the direct counter of an entry."""
        self.engine.table_counter_write(table, self._handle(table, key, priority),
                                        value.packets, value.bytes)

    # -- meters ---------------------------------------------------------------------------

    @_translated
    def meter_set(self, meter: str, index: int, rates: tgt.MeterRates | None) -> None:
        """Configure (or with None reset) one cell of an indirect meter."""
        if rates is None:
            self.engine.meter_clear(meter, index)
        else:
            self.engine.meter_set(meter, index, rates.cir, rates.cburst, rates.pir, rates.pburst)

    @_translated
    def meter_get(self, meter: str, index: int) -> tgt.MeterRates | None:
        """One cell's configuration, None when unconfigured."""
        rates = self.engine.meter_get(meter, index)
        return None if rates is None else tgt.MeterRates(*rates)

    @_translated
    def direct_meter_set(self, table: str, key: tuple[tgt.MatchParam, ...], priority: int,
                         rates: tgt.MeterRates | None) -> None:
        """Configure (or with None reset) the direct meter of an entry."""
        handle = self._handle(table, key, priority)
        if rates is not None:
            self.engine.table_meter_set(table, handle, rates.cir, rates.cburst, rates.pir,
                                        rates.pburst)
            return
        if self.engine.table_meter_get(table, handle) is None:
            return
        # The engine has no "unconfigure": a re-added entry starts with an unconfigured
        # meter; its action and direct counter are carried over.
        view = self._entry_view(table, handle)
        self.engine.table_delete(table, handle)
        self._readd(table, view)

    @_translated
    def direct_meter_get(self, table: str, key: tuple[tgt.MatchParam, ...],
                         priority: int) -> tgt.MeterRates | None:
        """The direct meter configuration of an entry."""
        rates = self.engine.table_meter_get(table, self._handle(table, key, priority))
        return None if rates is None else tgt.MeterRates(*rates)

    # -- registers ------------------------------------------------------------------------

    @_translated
    def register_read(self, register: str, index: int) -> bytes:
        """One register cell, padded to its width."""
        value = self.engine.register_read(register, index)
        return _pad(value, self._widths.registers.get(register, max(1, value.bit_length())))

    @_translated
    def register_write(self, register: str, index: int, value: bytes) -> None:
        """Overwrite one register cell."""
        self.engine.register_write(register, index, _int(value))

    # -- packet replication engine --------------------------------------------------------

    def _user_groups(self) -> list[int]:
        return [g for g in self.engine.mc_groups() if g < CLONE_GROUP_BASE]

    @_translated
    def mc_group_add(self, group_id: int, replicas: tuple[tgt.Replica, ...]) -> None:
        """Create a multicast group."""
        if group_id >= CLONE_GROUP_BASE:
            raise tgt.OutOfRange(f"multicast group ids are below {CLONE_GROUP_BASE}")
        if group_id in self.engine.mc_groups():
            raise tgt.AlreadyExists(f"multicast group {group_id} exists")
        self.engine.mc_group_set(group_id, [(r.port, r.instance) for r in replicas])

    @_translated
    def mc_group_modify(self, group_id: int, replicas: tuple[tgt.Replica, ...]) -> None:
        """Replace a multicast group's replicas."""
        if group_id not in self._user_groups():
            raise tgt.NotFound(f"multicast group {group_id} does not exist")
        self.engine.mc_group_set(group_id, [(r.port, r.instance) for r in replicas])

    @_translated
    def mc_group_delete(self, group_id: int) -> None:
        """Delete a multicast group."""
        if group_id not in self._user_groups():
            raise tgt.NotFound(f"multicast group {group_id} does not exist")
        self.engine.mc_group_delete(group_id)

    @_translated
    def mc_groups(self) -> dict[int, tuple[tgt.Replica, ...]]:
        """All multicast groups (not the hidden ones of clone sessions)."""
        return {g: tuple(tgt.Replica(port, rid) for port, rid in self.engine.mc_group_get(g))
                for g in self._user_groups()}

    def _set_session(self, session_id: int, session: tgt.CloneSession) -> None:
        if session.class_of_service:
            raise tgt.Unimplemented("clone sessions: class_of_service is not supported")
        # As PI does: the session's replicas form a hidden multicast group.
        group = CLONE_GROUP_BASE + session_id
        if group > 0xFFFF:
            raise tgt.OutOfRange(f"clone session id {session_id} is too large")
        self.engine.mc_group_set(group, [(r.port, r.instance) for r in session.replicas])
        self.engine.clone_session_set(session_id, None, group, session.packet_length_bytes or None)

    @_translated
    def clone_session_add(self, session_id: int, session: tgt.CloneSession) -> None:
        """Create a clone session."""
        if session_id in self.engine.clone_sessions():
            raise tgt.AlreadyExists(f"clone session {session_id} exists")
        self._set_session(session_id, session)

    @_translated
    def clone_session_modify(self, session_id: int, session: tgt.CloneSession) -> None:
        """Replace a clone session."""
        if session_id not in self.engine.clone_sessions():
            raise tgt.NotFound(f"clone session {session_id} does not exist")
        self._set_session(session_id, session)

    @_translated
    def clone_session_delete(self, session_id: int) -> None:
        """Delete a clone session and its hidden group."""
        _, group, _ = self.engine.clone_session_get(session_id)
        self.engine.clone_session_delete(session_id)
        if group is not None and group >= CLONE_GROUP_BASE:
            self.engine.mc_group_delete(group)

    @_translated
    def clone_sessions(self) -> dict[int, tgt.CloneSession]:
        """All clone sessions by id."""
        sessions = {}
        for session_id in self.engine.clone_sessions():
            port, group, truncate = self.engine.clone_session_get(session_id)
            replicas: list[tgt.Replica] = []
            if port is not None:
                replicas.append(tgt.Replica(port, 0))
            if group is not None:
                replicas += [tgt.Replica(p, rid) for p, rid in self.engine.mc_group_get(group)]
            sessions[session_id] = tgt.CloneSession(tuple(replicas), 0, truncate or 0)
        return sessions

    # -- packet I/O and digests -----------------------------------------------------------

    @_translated
    def packet_out(self, data: bytes) -> None:
        """Inject a frame as received on the CPU port."""
        if self.cpu_port is None:
            raise tgt.FailedPrecondition("the switch has no CPU port (start it with --cpu-port N)")
        self._inject(self.cpu_port, data)

    def set_packet_in_handler(self, handler: tgt.PacketInHandler | None) -> None:
        """Where frames leaving on the CPU port go (None: dropped)."""
        self._packet_in_handler = handler

    def set_digest_handler(self, handler: tgt.DigestHandler | None) -> None:
        """Where digest messages go (None: dropped)."""
        self._digest_handler = handler

    def dispatch(self, packet_ins: Iterable[PacketIn], digests: Iterable[Digest]) -> None:
        """Hand the data plane's packet-ins (port, frame, t_ns) and digests (name, list id,
        values, t_ns) to the server's handlers."""
        packet_in_handler, digest_handler = self._packet_in_handler, self._digest_handler
        for _, frame, _ in packet_ins:
            if packet_in_handler is not None:
                packet_in_handler(bytes(frame))
        for name, _, values, _ in digests:
            if digest_handler is None:
                continue
            widths = self._widths.learn_lists.get(name)
            if widths is None or len(widths) != len(values):
                widths = [max(1, v.bit_length()) for v in values]
            digest_handler(tgt.DigestMessage(
                name, tuple(_pad(v, w) for v, w in zip(values, widths, strict=True))))

    def poll(self) -> None:
        """In-process use: hand the packet-ins and digests the engine holds to the handlers."""
        with self.lock:
            packet_ins, digests = self.engine.packet_in(), self.engine.digests()
        self.dispatch(packet_ins, digests)
