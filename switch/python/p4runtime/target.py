"""The `Target` protocol: what the P4Runtime server asks of a switch, in BMv2 JSON terms.

This module is the contract between the P4Runtime server (which speaks P4Info ids and
P4Runtime messages) and the switch engine (which speaks BMv2 JSON names, like simple_switch's
runtime interface). The server validates every request against the P4Info (entity rules and
bytestring rules of the P4Runtime spec) *before* calling the target, then calls the target with
already-checked, already-translated arguments:

Names
    Every object is named by its BMv2 JSON `name`: tables (`MyIngress.ipv4_lpm`), actions
    (`MyIngress.set_port`, `NoAction`), counter/meter/register arrays, action profiles and
    learn lists (digests). The server resolves P4Info ids to these names (see
    `p4info_index.P4InfoIndex`). An action name given for a table entry is always one of that
    table's JSON `actions`; p4c may emit several JSON actions with the same name (one copy per
    table that uses it), so the target resolves an action name within the table's own list.

Values
    Every value is `bytes`, big-endian, padded to exactly ceil(bitwidth / 8) bytes (BMv2's
    form, never P4Runtime's canonical form): match values, masks, range bounds, action
    parameters, register cells, digest fields. The target returns values in the same padded
    form; the server canonicalizes them for the client.

Match keys
    A key is a tuple with one `MatchParam` per JSON table key element, in JSON key order
    (= P4Info match-field order). Omitted ("don't care") P4Runtime fields arrive as explicit
    wildcards: ternary mask all-zero, lpm prefix_len 0, range 0..2^W-1. P4Runtime `optional`
    arrives as `ternary` with an all-ones mask (present) or all-zero mask (wildcard), as BMv2
    JSON writes optional keys as ternary. Ternary values are already masked (value & mask).

Priorities
    BMv2's convention: a *smaller* number wins. The server converts P4Runtime's "larger wins"
    priority p to `2**31 - 1 - p` (as PI does for simple_switch_grpc) and back on reads.
    Tables without ternary/range/optional keys always get priority 0. An entry is identified
    by (table, key, priority).

Counters, meters, time
    Counters count packets and bytes together (BMv2 counters always do). Meter rates are in
    units per second and bursts in units, where the unit is the meter's JSON `type` (bytes or
    packets): `MeterRates(cir, cburst, pir, pburst)`; `None` means "not configured" (every
    packet is GREEN). The target converts to its own representation (BMv2 stores rates per
    microsecond).

Errors
    A target reports failure by raising one of the `TargetError` subclasses below; the server
    turns each into the gRPC code of the same name (per update inside a Write batch). Any
    other exception becomes INTERNAL. A target must leave its state unchanged when it raises.

Threads
    The server calls the target from gRPC worker threads, one call at a time (the server
    holds a lock around every target call). The packet-in and digest callbacks may be
    invoked from any thread, including the engine's packet threads; they only enqueue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

MatchKind = Literal["exact", "lpm", "ternary", "range"]


class TargetError(Exception):
    """Base of the typed errors a target raises; the class name is the gRPC code."""


class NotFound(TargetError):
    """The entry, member, group, session or object does not exist (NOT_FOUND)."""


class AlreadyExists(TargetError):
    """An entry with the same key already exists (ALREADY_EXISTS)."""


class InvalidArgument(TargetError):
    """The request cannot be realised as given, e.g. a bad JSON (INVALID_ARGUMENT)."""


class ResourceExhausted(TargetError):
    """A table, profile, group or PRE resource is full (RESOURCE_EXHAUSTED)."""


class OutOfRange(TargetError):
    """An index or id is beyond the object's size (OUT_OF_RANGE)."""


class Unimplemented(TargetError):
    """The target does not support this feature, e.g. clone class_of_service (UNIMPLEMENTED)."""


class FailedPrecondition(TargetError):
    """The target is not in a state to do this, e.g. no pipeline loaded (FAILED_PRECONDITION)."""


@dataclass(frozen=True)
class MatchParam:
    """One key element of a table entry.

    kind "exact": `value`. kind "lpm": `value` and `prefix_len` (bits). kind "ternary":
    `value` and `mask`. kind "range": `value` is the low bound and `high` the high bound
    (both inclusive).
    """

    kind: MatchKind
    value: bytes
    mask: bytes | None = None
    prefix_len: int | None = None
    high: bytes | None = None


@dataclass(frozen=True)
class ActionCall:
    """A direct action: JSON action name and its parameters in JSON `runtime_data` order."""

    name: str
    params: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class MemberRef:
    """An indirect table entry's action: an action profile member id (chosen by the client)."""

    member_id: int


@dataclass(frozen=True)
class GroupRef:
    """An indirect table entry's action: an action selector group id (chosen by the client)."""

    group_id: int


EntryAction = ActionCall | MemberRef | GroupRef


@dataclass(frozen=True)
class TableEntry:
    """A table entry as the target stores it; `priority` in BMv2 convention (smaller wins)."""

    key: tuple[MatchParam, ...]
    action: EntryAction
    priority: int = 0


@dataclass(frozen=True)
class CounterValue:
    """A counter cell: packets and bytes."""

    packets: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class MeterRates:
    """A two-rate three-colour meter configuration; rates in units/s, bursts in units."""

    cir: int
    cburst: int
    pir: int
    pburst: int


@dataclass(frozen=True)
class GroupMember:
    """A member of an action selector group with its weight (weight 1 = plain member)."""

    member_id: int
    weight: int = 1


@dataclass(frozen=True)
class Replica:
    """A PRE replica: egress port and instance (becomes egress_rid)."""

    port: int
    instance: int


@dataclass(frozen=True)
class CloneSession:
    """A clone (mirror) session; packet_length_bytes 0 means no truncation."""

    replicas: tuple[Replica, ...]
    class_of_service: int = 0
    packet_length_bytes: int = 0


@dataclass(frozen=True)
class DigestMessage:
    """One digest message from the data plane: learn-list name and its field values."""

    name: str
    fields: tuple[bytes, ...] = field(default_factory=tuple)


PacketInHandler = Callable[[bytes], None]
DigestHandler = Callable[[DigestMessage], None]


@runtime_checkable
class Target(Protocol):
    """The switch as the P4Runtime server drives it; all names are BMv2 JSON names."""

    # -- pipeline ---------------------------------------------------------------------------

    def load_pipeline(self, json_text: str) -> None:
        """Replace the running program with this BMv2 JSON, clearing all forwarding state.

        Afterwards every table holds only its JSON `entries` and JSON `default_entry`,
        counters/registers are zero, meters unconfigured, PRE groups and clone sessions empty.
        Raises InvalidArgument if the JSON cannot be loaded (the old program keeps running).
        """
        ...

    # -- match-action tables ----------------------------------------------------------------

    def table_add(self, table: str, entry: TableEntry) -> None:
        """Insert an entry; AlreadyExists if (key, priority) is present, ResourceExhausted
        if the table is full, NotFound if a MemberRef/GroupRef does not exist."""
        ...

    def table_modify(self, table: str, entry: TableEntry) -> None:
        """Replace the action of the entry with this (key, priority); NotFound if absent.
        Direct counter and meter state of the entry is kept."""
        ...

    def table_delete(self, table: str, key: tuple[MatchParam, ...], priority: int) -> None:
        """Delete the entry with this (key, priority); NotFound if absent."""
        ...

    def table_entries(self, table: str) -> list[TableEntry]:
        """All entries of the table (JSON const entries included), in insertion order."""
        ...

    def table_set_default(self, table: str, action: ActionCall) -> None:
        """Set the action run on a miss."""
        ...

    def table_reset_default(self, table: str) -> None:
        """Restore the JSON `default_entry` of the table."""
        ...

    def table_get_default(self, table: str) -> ActionCall:
        """The action currently run on a miss."""
        ...

    # -- action profiles and selectors ------------------------------------------------------

    def act_prof_add_member(self, profile: str, member_id: int, action: ActionCall) -> None:
        """Create a member; AlreadyExists if the id is used, ResourceExhausted if full."""
        ...

    def act_prof_modify_member(self, profile: str, member_id: int, action: ActionCall) -> None:
        """Change a member's action; NotFound if absent."""
        ...

    def act_prof_delete_member(self, profile: str, member_id: int) -> None:
        """Delete a member; NotFound if absent, FailedPrecondition if a group or entry uses it."""
        ...

    def act_prof_members(self, profile: str) -> dict[int, ActionCall]:
        """All members by id."""
        ...

    def act_prof_add_group(
        self, profile: str, group_id: int, members: tuple[GroupMember, ...], max_size: int
    ) -> None:
        """Create a group; AlreadyExists if the id is used, NotFound for an unknown member."""
        ...

    def act_prof_modify_group(
        self, profile: str, group_id: int, members: tuple[GroupMember, ...], max_size: int
    ) -> None:
        """Replace a group's member set; NotFound if the group or a member is absent."""
        ...

    def act_prof_delete_group(self, profile: str, group_id: int) -> None:
        """Delete a group; NotFound if absent, FailedPrecondition if an entry uses it."""
        ...

    def act_prof_groups(self, profile: str) -> dict[int, tuple[tuple[GroupMember, ...], int]]:
        """All groups by id: (members, max_size)."""
        ...

    # -- counters ---------------------------------------------------------------------------

    def counter_read(self, counter: str, index: int) -> CounterValue:
        """Read one cell of an indirect counter array (index already range-checked)."""
        ...

    def counter_write(self, counter: str, index: int, value: CounterValue) -> None:
        """Overwrite one cell of an indirect counter array."""
        ...

    def direct_counter_read(
        self, table: str, key: tuple[MatchParam, ...], priority: int
    ) -> CounterValue:
        """Read the direct counter of a table entry; NotFound if the entry is absent."""
        ...

    def direct_counter_write(
        self, table: str, key: tuple[MatchParam, ...], priority: int, value: CounterValue
    ) -> None:
        """Overwrite the direct counter of a table entry; NotFound if the entry is absent."""
        ...

    # -- meters -----------------------------------------------------------------------------

    def meter_set(self, meter: str, index: int, rates: MeterRates | None) -> None:
        """Configure one cell of an indirect meter array; None resets it to unconfigured."""
        ...

    def meter_get(self, meter: str, index: int) -> MeterRates | None:
        """The configuration of one cell of an indirect meter array."""
        ...

    def direct_meter_set(
        self, table: str, key: tuple[MatchParam, ...], priority: int, rates: MeterRates | None
    ) -> None:
        """Configure the direct meter of a table entry; NotFound if the entry is absent."""
        ...

    def direct_meter_get(
        self, table: str, key: tuple[MatchParam, ...], priority: int
    ) -> MeterRates | None:
        """The direct meter configuration of a table entry; NotFound if absent."""
        ...

    # -- registers --------------------------------------------------------------------------

    def register_read(self, register: str, index: int) -> bytes:
        """One register cell, padded to ceil(bitwidth / 8) bytes."""
        ...

    def register_write(self, register: str, index: int, value: bytes) -> None:
        """Overwrite one register cell (value padded to ceil(bitwidth / 8) bytes)."""
        ...

    # -- packet replication engine ----------------------------------------------------------

    def mc_group_add(self, group_id: int, replicas: tuple[Replica, ...]) -> None:
        """Create a multicast group; AlreadyExists if present, ResourceExhausted if full."""
        ...

    def mc_group_modify(self, group_id: int, replicas: tuple[Replica, ...]) -> None:
        """Replace a multicast group's replicas; NotFound if absent."""
        ...

    def mc_group_delete(self, group_id: int) -> None:
        """Delete a multicast group; NotFound if absent."""
        ...

    def mc_groups(self) -> dict[int, tuple[Replica, ...]]:
        """All multicast groups by id."""
        ...

    def clone_session_add(self, session_id: int, session: CloneSession) -> None:
        """Create a clone session; AlreadyExists if present; Unimplemented for a feature
        the target lacks (non-zero class_of_service, truncation)."""
        ...

    def clone_session_modify(self, session_id: int, session: CloneSession) -> None:
        """Replace a clone session; NotFound if absent."""
        ...

    def clone_session_delete(self, session_id: int) -> None:
        """Delete a clone session; NotFound if absent."""
        ...

    def clone_sessions(self) -> dict[int, CloneSession]:
        """All clone sessions by id."""
        ...

    # -- packet I/O and digests -------------------------------------------------------------

    def packet_out(self, data: bytes) -> None:
        """Inject a frame as received on the CPU port (packet_out header already prepended)."""
        ...

    def set_packet_in_handler(self, handler: PacketInHandler | None) -> None:
        """Call `handler(frame)` for every frame leaving egress on the CPU port (None: drop)."""
        ...

    def set_digest_handler(self, handler: DigestHandler | None) -> None:
        """Call `handler(message)` for every digest message the data plane generates."""
        ...
