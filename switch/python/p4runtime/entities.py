"""Write and Read of every P4Runtime entity against the target (spec "P4 Entity Messages")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from . import codec
from . import target as tgt
from .digests import DigestManager
from .p4info_index import ArrayInfo, P4InfoIndex, TableInfo
from .status import P4RuntimeError
from .tables import (
    Key,
    action_call_to_p4runtime,
    action_to_p4runtime,
    check_priority,
    check_table_action,
    from_target_priority,
    match_to_p4runtime,
    to_target_priority,
    translate_action_call,
    translate_entry_action,
    translate_match,
)

Update = p4runtime_pb2.Update
CounterUnit = p4info_pb2.CounterSpec.Unit
EntryId = tuple[int, Key, int]


@dataclass
class ControlState:
    """What the server keeps beside the target: opaque entry metadata, replica port form."""

    # (table id, key, BMv2 priority) -> (controller_metadata, metadata): opaque to the
    # target, but the spec wants them back on reads.
    entry_metadata: dict[EntryId, tuple[int, bytes]] = field(default_factory=dict)
    # ("mc" | "clone", id) -> True when the client used Replica.port (bytes), False when it
    # used the deprecated egress_port: reads answer in the client's form.
    replica_bytes: dict[tuple[str, int], bool] = field(default_factory=dict)


class Entities:
    """Applies updates to and reads entities from one target under one P4Info."""

    def __init__(
        self,
        index: P4InfoIndex,
        target: tgt.Target,
        state: ControlState,
        digests: DigestManager,
    ) -> None:
        self.index = index
        self.target = target
        self.state = state
        self.digests = digests

    # ---------------------------------------------------------------- write

    def write(self, update: p4runtime_pb2.Update) -> None:
        """Apply one update; raises P4RuntimeError (target errors converted by the caller)."""
        if update.type not in (Update.INSERT, Update.MODIFY, Update.DELETE):
            raise P4RuntimeError("INVALID_ARGUMENT", "update type must be INSERT/MODIFY/DELETE")
        entity = update.entity
        kind = entity.WhichOneof("entity")
        if kind is None:
            raise P4RuntimeError("INVALID_ARGUMENT", "update has no entity")
        handler = {
            "table_entry": self._write_table_entry,
            "action_profile_member": self._write_member,
            "action_profile_group": self._write_group,
            "counter_entry": self._write_counter,
            "direct_counter_entry": self._write_direct_counter,
            "meter_entry": self._write_meter,
            "direct_meter_entry": self._write_direct_meter,
            "register_entry": self._write_register,
            "packet_replication_engine_entry": self._write_pre,
            "digest_entry": self.digests.write,
        }.get(kind)
        if handler is None:
            raise P4RuntimeError("UNIMPLEMENTED", f"{kind} is not supported")
        handler(update.type, getattr(entity, kind))

    def _write_table_entry(self, update_type: int, entry: p4runtime_pb2.TableEntry) -> None:
        table = self.index.table(entry.table_id)
        if entry.is_const:
            raise P4RuntimeError("INVALID_ARGUMENT", "is_const may not be set in a write")
        if entry.is_default_action:
            self._write_default_entry(update_type, table, entry)
            return
        if not table.match_fields:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"table {table.name} has no key: only its default entry"
            )
        if table.is_const and update_type != Update.MODIFY:
            raise P4RuntimeError("PERMISSION_DENIED", f"table {table.name} is const")
        check_priority(table, entry.priority)
        key = translate_match(table, list(entry.match))
        priority = to_target_priority(table, entry.priority)
        entry_id = (table.id, key, priority)
        if update_type == Update.DELETE:
            self.target.table_delete(table.json_name, key, priority)
            self.state.entry_metadata.pop(entry_id, None)
            return
        if entry.idle_timeout_ns:
            if not table.supports_timeout:
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", f"table {table.name} does not support idle timeout"
                )
            raise P4RuntimeError("UNIMPLEMENTED", "idle timeout is not supported")
        action = translate_entry_action(self.index, table, entry.action)
        counter = self._entry_counter(table, entry)
        meter = self._entry_meter(table, entry)
        target_entry = tgt.TableEntry(key, action, priority)
        if table.is_const:
            current = next(
                (
                    e
                    for e in self.target.table_entries(table.json_name)
                    if e.key == key and e.priority == priority
                ),
                None,
            )
            if current is None or current.action != action:
                raise P4RuntimeError(
                    "PERMISSION_DENIED",
                    f"table {table.name} is const: only its direct resources may change",
                )
        elif update_type == Update.INSERT:
            self.target.table_add(table.json_name, target_entry)
        else:
            self.target.table_modify(table.json_name, target_entry)
        if counter is not None:
            self.target.direct_counter_write(table.json_name, key, priority, counter)
        if meter is not None:
            self.target.direct_meter_set(table.json_name, key, priority, meter)
        if entry.controller_metadata or entry.metadata:
            self.state.entry_metadata[entry_id] = (entry.controller_metadata, entry.metadata)
        else:
            self.state.entry_metadata.pop(entry_id, None)

    def _entry_counter(
        self, table: TableInfo, entry: p4runtime_pb2.TableEntry
    ) -> tgt.CounterValue | None:
        """The direct counter value an INSERT/MODIFY carries, if any."""
        if not entry.HasField("counter_data"):
            return None
        if not table.direct_counter_id:
            raise P4RuntimeError("INVALID_ARGUMENT", f"table {table.name} has no direct counter")
        return _counter_value(entry.counter_data)

    def _entry_meter(
        self, table: TableInfo, entry: p4runtime_pb2.TableEntry
    ) -> tgt.MeterRates | None:
        """The direct meter config an INSERT/MODIFY carries, if any."""
        if not entry.HasField("meter_config"):
            return None
        if not table.direct_meter_id:
            raise P4RuntimeError("INVALID_ARGUMENT", f"table {table.name} has no direct meter")
        return _meter_rates(entry.meter_config)

    def _write_default_entry(
        self, update_type: int, table: TableInfo, entry: p4runtime_pb2.TableEntry
    ) -> None:
        """Default entries: MODIFY only, empty match, priority 0; no action resets."""
        if update_type != Update.MODIFY:
            raise P4RuntimeError("INVALID_ARGUMENT", "default entries can only be modified")
        if entry.match or entry.priority:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", "default entry takes no match and no priority"
            )
        if table.const_default_action_id:
            raise P4RuntimeError(
                "PERMISSION_DENIED", f"table {table.name} has a const default action"
            )
        if table.implementation_id:
            raise P4RuntimeError(
                "PERMISSION_DENIED", f"the default action of indirect table {table.name} is fixed"
            )
        kind = entry.action.WhichOneof("type")
        if kind is None:
            self.target.table_reset_default(table.json_name)
            return
        if kind != "action":
            raise P4RuntimeError("INVALID_ARGUMENT", "a default entry takes a direct action")
        action_id = entry.action.action.action_id
        check_table_action(table, action_id, default=True)
        call = translate_action_call(
            self.index, entry.action.action, table.action_json_names[action_id]
        )
        self.target.table_set_default(table.json_name, call)

    def _profile_action(
        self, profile_id: int, action: p4runtime_pb2.Action
    ) -> tgt.ActionCall:
        """A member's action: it must be an entry action of a table using the profile."""
        profile = self.index.profile(profile_id)
        for table_id in profile.table_ids:
            table = self.index.tables.get(table_id)
            if table is not None and action.action_id in table.action_scopes:
                check_table_action(table, action.action_id, default=False)
                return translate_action_call(
                    self.index, action, table.action_json_names[action.action_id]
                )
        raise P4RuntimeError(
            "INVALID_ARGUMENT",
            f"action id {action.action_id} is not an action of profile {profile.name}",
        )

    def _write_member(self, update_type: int, member: p4runtime_pb2.ActionProfileMember) -> None:
        profile = self.index.profile(member.action_profile_id)
        if update_type == Update.DELETE:
            self.target.act_prof_delete_member(profile.json_name, member.member_id)
            return
        if not member.HasField("action"):
            raise P4RuntimeError("INVALID_ARGUMENT", "action profile member needs an action")
        call = self._profile_action(profile.id, member.action)
        if update_type == Update.INSERT:
            self.target.act_prof_add_member(profile.json_name, member.member_id, call)
        else:
            self.target.act_prof_modify_member(profile.json_name, member.member_id, call)

    def _write_group(self, update_type: int, group: p4runtime_pb2.ActionProfileGroup) -> None:
        profile = self.index.profile(group.action_profile_id)
        if not profile.with_selector:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"action profile {profile.name} has no selector: no groups"
            )
        if update_type == Update.DELETE:
            self.target.act_prof_delete_group(profile.json_name, group.group_id)
            return
        members: list[tgt.GroupMember] = []
        seen = set()
        for member in group.members:
            if member.member_id in seen:
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", f"member {member.member_id} listed twice in a group"
                )
            if member.weight <= 0:
                raise P4RuntimeError("INVALID_ARGUMENT", "member weight must be > 0")
            seen.add(member.member_id)
            members.append(tgt.GroupMember(member.member_id, member.weight))
        if group.max_size < 0:
            raise P4RuntimeError("INVALID_ARGUMENT", "max_size must be ≥ 0")
        if profile.max_group_size and group.max_size > profile.max_group_size:
            raise P4RuntimeError(
                "INVALID_ARGUMENT",
                f"max_size {group.max_size} above max_group_size {profile.max_group_size}",
            )
        total_weight = sum(m.weight for m in members)
        limit = group.max_size or profile.max_group_size
        if limit and total_weight > limit:
            raise P4RuntimeError(
                "RESOURCE_EXHAUSTED", f"group weight {total_weight} above its size {limit}"
            )
        if update_type == Update.INSERT:
            self.target.act_prof_add_group(
                profile.json_name, group.group_id, tuple(members), group.max_size
            )
        else:
            self.target.act_prof_modify_group(
                profile.json_name, group.group_id, tuple(members), group.max_size
            )

    def _write_counter(self, update_type: int, entry: p4runtime_pb2.CounterEntry) -> None:
        _modify_only(update_type, "CounterEntry")
        counter = self.index.counter(entry.counter_id)
        value = _counter_value(entry.data)
        for index in _indices(counter, entry):
            self.target.counter_write(counter.json_name, index, value)

    def _write_meter(self, update_type: int, entry: p4runtime_pb2.MeterEntry) -> None:
        _modify_only(update_type, "MeterEntry")
        meter = self.index.meter(entry.meter_id)
        rates = _meter_rates(entry.config) if entry.HasField("config") else None
        for index in _indices(meter, entry):
            self.target.meter_set(meter.json_name, index, rates)

    def _write_register(self, update_type: int, entry: p4runtime_pb2.RegisterEntry) -> None:
        _modify_only(update_type, "RegisterEntry")
        register = self.index.register(entry.register_id)
        if entry.data.WhichOneof("data") != "bitstring":
            raise P4RuntimeError("INVALID_ARGUMENT", "register data must be a bitstring")
        value = codec.decode(
            entry.data.bitstring, register.bitwidth, f"register {register.name} value"
        )
        for index in _indices(register, entry):
            self.target.register_write(register.json_name, index, value)

    def _direct_entry(
        self, entry: p4runtime_pb2.TableEntry, resource: str
    ) -> tuple[TableInfo, Key, int]:
        """The table, key and BMv2 priority a direct counter/meter entry refers to."""
        table = self.index.table(entry.table_id)
        has = table.direct_counter_id if resource == "counter" else table.direct_meter_id
        if not has:
            raise P4RuntimeError("INVALID_ARGUMENT", f"table {table.name} has no direct {resource}")
        if entry.is_default_action:
            raise P4RuntimeError(
                "UNIMPLEMENTED", f"direct {resource} of a default entry is not supported"
            )
        check_priority(table, entry.priority)
        key = translate_match(table, list(entry.match))
        return table, key, to_target_priority(table, entry.priority)

    def _write_direct_counter(
        self, update_type: int, entry: p4runtime_pb2.DirectCounterEntry
    ) -> None:
        _modify_only(update_type, "DirectCounterEntry")
        table, key, priority = self._direct_entry(entry.table_entry, "counter")
        self.target.direct_counter_write(
            table.json_name, key, priority, _counter_value(entry.data)
        )

    def _write_direct_meter(
        self, update_type: int, entry: p4runtime_pb2.DirectMeterEntry
    ) -> None:
        _modify_only(update_type, "DirectMeterEntry")
        table, key, priority = self._direct_entry(entry.table_entry, "meter")
        rates = _meter_rates(entry.config) if entry.HasField("config") else None
        self.target.direct_meter_set(table.json_name, key, priority, rates)

    def _write_pre(
        self, update_type: int, entry: p4runtime_pb2.PacketReplicationEngineEntry
    ) -> None:
        kind = entry.WhichOneof("type")
        if kind == "multicast_group_entry":
            group = entry.multicast_group_entry
            group_id = group.multicast_group_id
            if group_id == 0:
                raise P4RuntimeError("INVALID_ARGUMENT", "multicast_group_id must be > 0")
            if update_type == Update.DELETE:
                self.target.mc_group_delete(group_id)
                self.state.replica_bytes.pop(("mc", group_id), None)
                return
            replicas, as_bytes = _replicas(group.replicas)
            if update_type == Update.INSERT:
                self.target.mc_group_add(group_id, replicas)
            else:
                self.target.mc_group_modify(group_id, replicas)
            self.state.replica_bytes[("mc", group_id)] = as_bytes
        elif kind == "clone_session_entry":
            clone = entry.clone_session_entry
            session_id = clone.session_id
            if session_id == 0:
                raise P4RuntimeError("INVALID_ARGUMENT", "session_id must be > 0")
            if update_type == Update.DELETE:
                self.target.clone_session_delete(session_id)
                self.state.replica_bytes.pop(("clone", session_id), None)
                return
            if clone.packet_length_bytes < 0:
                raise P4RuntimeError("INVALID_ARGUMENT", "packet_length_bytes must be ≥ 0")
            replicas, as_bytes = _replicas(clone.replicas)
            session = tgt.CloneSession(replicas, clone.class_of_service, clone.packet_length_bytes)
            if update_type == Update.INSERT:
                self.target.clone_session_add(session_id, session)
            else:
                self.target.clone_session_modify(session_id, session)
            self.state.replica_bytes[("clone", session_id)] = as_bytes
        else:
            raise P4RuntimeError("INVALID_ARGUMENT", "PRE entry has neither group nor session")

    # ----------------------------------------------------------------- read

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """All entities matching one (possibly wildcard) read request entity."""
        kind = entity.WhichOneof("entity")
        if kind is None:
            raise P4RuntimeError("INVALID_ARGUMENT", "read entity has no type set")
        handler = {
            "table_entry": self._read_table_entries,
            "action_profile_member": self._read_members,
            "action_profile_group": self._read_groups,
            "counter_entry": self._read_counters,
            "direct_counter_entry": self._read_direct_counters,
            "meter_entry": self._read_meters,
            "direct_meter_entry": self._read_direct_meters,
            "register_entry": self._read_registers,
            "packet_replication_engine_entry": self._read_pre,
            "digest_entry": self._read_digests,
        }.get(kind)
        if handler is None:
            raise P4RuntimeError("UNIMPLEMENTED", f"{kind} is not supported")
        return [_entity(kind, message) for message in handler(getattr(entity, kind))]

    def _read_table_entries(
        self, request: p4runtime_pb2.TableEntry
    ) -> Iterator[p4runtime_pb2.TableEntry]:
        if request.table_id == 0:
            if request.ListFields():
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", "a read of all tables (table_id 0) takes no other filter"
                )
            tables = list(self.index.tables.values())
        else:
            tables = [self.index.table(request.table_id)]
        for table in tables:
            if request.is_default_action:
                yield self._default_entry(table)
                continue
            yield from self._table_entries(table, request)

    def _default_entry(self, table: TableInfo) -> p4runtime_pb2.TableEntry:
        """The current default entry of a table."""
        call = self.target.table_get_default(table.json_name)
        result = p4runtime_pb2.TableEntry(table_id=table.id, is_default_action=True)
        result.action.action.CopyFrom(
            action_call_to_p4runtime(self.index, table.action_json_names, call)
        )
        return result

    def _table_entries(
        self, table: TableInfo, request: p4runtime_pb2.TableEntry
    ) -> Iterator[p4runtime_pb2.TableEntry]:
        """The non-default entries of one table that pass the request's filters."""
        key_filter = None
        if request.match:
            key_filter = translate_match(table, list(request.match))
        priority_filter = to_target_priority(table, request.priority) if request.priority else None
        action_filter = request.action if request.HasField("action") else None
        for target_entry in self.target.table_entries(table.json_name):
            if key_filter is not None and target_entry.key != key_filter:
                continue
            if priority_filter is not None and target_entry.priority != priority_filter:
                continue
            result = p4runtime_pb2.TableEntry(
                table_id=table.id,
                priority=from_target_priority(table, target_entry.priority),
                is_const=table.is_const,
            )
            result.match.extend(match_to_p4runtime(table, target_entry.key))
            result.action.CopyFrom(action_to_p4runtime(self.index, table, target_entry.action))
            if action_filter is not None and not _action_matches(action_filter, result.action):
                continue
            controller_metadata, metadata = self.state.entry_metadata.get(
                (table.id, target_entry.key, target_entry.priority), (0, b"")
            )
            if request.controller_metadata and request.controller_metadata != controller_metadata:
                continue
            if request.metadata and request.metadata != metadata:
                continue
            result.controller_metadata = controller_metadata
            result.metadata = metadata
            if request.HasField("counter_data") and table.direct_counter_id:
                value = self.target.direct_counter_read(
                    table.json_name, target_entry.key, target_entry.priority
                )
                result.counter_data.CopyFrom(
                    _counter_data(self.index.direct_counters[table.direct_counter_id], value)
                )
            if request.HasField("meter_config") and table.direct_meter_id:
                rates = self.target.direct_meter_get(
                    table.json_name, target_entry.key, target_entry.priority
                )
                if rates is not None:
                    result.meter_config.CopyFrom(_meter_config(rates))
            yield result

    def _read_members(
        self, request: p4runtime_pb2.ActionProfileMember
    ) -> Iterator[p4runtime_pb2.ActionProfileMember]:
        for profile in self._profiles(request.action_profile_id):
            json_names = self._profile_json_names(profile.id)
            for member_id, call in sorted(self.target.act_prof_members(profile.json_name).items()):
                if request.member_id and request.member_id != member_id:
                    continue
                yield p4runtime_pb2.ActionProfileMember(
                    action_profile_id=profile.id,
                    member_id=member_id,
                    action=action_call_to_p4runtime(self.index, json_names, call),
                )

    def _read_groups(
        self, request: p4runtime_pb2.ActionProfileGroup
    ) -> Iterator[p4runtime_pb2.ActionProfileGroup]:
        for profile in self._profiles(request.action_profile_id):
            if not profile.with_selector:
                continue
            groups = self.target.act_prof_groups(profile.json_name)
            for group_id, (members, max_size) in sorted(groups.items()):
                if request.group_id and request.group_id != group_id:
                    continue
                group = p4runtime_pb2.ActionProfileGroup(
                    action_profile_id=profile.id, group_id=group_id, max_size=max_size
                )
                for member in members:
                    group.members.add(member_id=member.member_id, weight=member.weight)
                yield group

    def _profiles(self, profile_id: int) -> list:
        """One profile, or all when the id is 0 (wildcard)."""
        if profile_id == 0:
            return list(self.index.profiles.values())
        return [self.index.profile(profile_id)]

    def _profile_json_names(self, profile_id: int) -> dict[int, str]:
        """P4Info action id -> JSON action name over the tables that use a profile."""
        names: dict[int, str] = {}
        for table_id in self.index.profiles[profile_id].table_ids:
            table = self.index.tables.get(table_id)
            if table is not None:
                names.update(table.action_json_names)
        return names

    def _read_counters(
        self, request: p4runtime_pb2.CounterEntry
    ) -> Iterator[p4runtime_pb2.CounterEntry]:
        counters = (
            list(self.index.counters.values())
            if request.counter_id == 0
            else [self.index.counter(request.counter_id)]
        )
        for counter in counters:
            for index in _indices(counter, request):
                value = self.target.counter_read(counter.json_name, index)
                entry = p4runtime_pb2.CounterEntry(counter_id=counter.id)
                entry.index.index = index
                entry.data.CopyFrom(_counter_data(counter, value))
                yield entry

    def _read_meters(
        self, request: p4runtime_pb2.MeterEntry
    ) -> Iterator[p4runtime_pb2.MeterEntry]:
        meters = (
            list(self.index.meters.values())
            if request.meter_id == 0
            else [self.index.meter(request.meter_id)]
        )
        for meter in meters:
            for index in _indices(meter, request):
                rates = self.target.meter_get(meter.json_name, index)
                entry = p4runtime_pb2.MeterEntry(meter_id=meter.id)
                entry.index.index = index
                if rates is not None:
                    entry.config.CopyFrom(_meter_config(rates))
                yield entry

    def _read_registers(
        self, request: p4runtime_pb2.RegisterEntry
    ) -> Iterator[p4runtime_pb2.RegisterEntry]:
        registers = (
            list(self.index.registers.values())
            if request.register_id == 0
            else [self.index.register(request.register_id)]
        )
        for register in registers:
            for index in _indices(register, request):
                value = self.target.register_read(register.json_name, index)
                entry = p4runtime_pb2.RegisterEntry(register_id=register.id)
                entry.index.index = index
                entry.data.bitstring = codec.canonical(value)
                yield entry

    def _direct_tables(
        self, request: p4runtime_pb2.TableEntry, resource: str
    ) -> list[tuple[TableInfo, Key | None, int | None]]:
        """(table, key or None for all entries, priority) a direct resource read covers."""
        if request.table_id == 0:
            return [
                (t, None, None)
                for t in self.index.tables.values()
                if (t.direct_counter_id if resource == "counter" else t.direct_meter_id)
            ]
        if not request.match:
            table = self.index.table(request.table_id)
            has = table.direct_counter_id if resource == "counter" else table.direct_meter_id
            if not has:
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", f"table {table.name} has no direct {resource}"
                )
            return [(table, None, None)]
        table, key, priority = self._direct_entry(request, resource)
        return [(table, key, priority)]

    def _direct_keys(
        self, table: TableInfo, key: Key | None, priority: int | None
    ) -> list[tuple[Key, int]]:
        """The (key, priority) pairs one direct read covers."""
        if key is not None and priority is not None:
            return [(key, priority)]
        return [(e.key, e.priority) for e in self.target.table_entries(table.json_name)]

    def _table_entry_ref(self, table: TableInfo, key: Key, priority: int) -> p4runtime_pb2.TableEntry:
        """The TableEntry key part that names an entry in a direct resource reply."""
        entry = p4runtime_pb2.TableEntry(
            table_id=table.id, priority=from_target_priority(table, priority)
        )
        entry.match.extend(match_to_p4runtime(table, key))
        return entry

    def _read_direct_counters(
        self, request: p4runtime_pb2.DirectCounterEntry
    ) -> Iterator[p4runtime_pb2.DirectCounterEntry]:
        for table, key, priority in self._direct_tables(request.table_entry, "counter"):
            counter = self.index.direct_counters[table.direct_counter_id]
            for entry_key, entry_priority in self._direct_keys(table, key, priority):
                value = self.target.direct_counter_read(table.json_name, entry_key, entry_priority)
                yield p4runtime_pb2.DirectCounterEntry(
                    table_entry=self._table_entry_ref(table, entry_key, entry_priority),
                    data=_counter_data(counter, value),
                )

    def _read_direct_meters(
        self, request: p4runtime_pb2.DirectMeterEntry
    ) -> Iterator[p4runtime_pb2.DirectMeterEntry]:
        for table, key, priority in self._direct_tables(request.table_entry, "meter"):
            for entry_key, entry_priority in self._direct_keys(table, key, priority):
                rates = self.target.direct_meter_get(table.json_name, entry_key, entry_priority)
                result = p4runtime_pb2.DirectMeterEntry(
                    table_entry=self._table_entry_ref(table, entry_key, entry_priority)
                )
                if rates is not None:
                    result.config.CopyFrom(_meter_config(rates))
                yield result

    def _read_pre(
        self, request: p4runtime_pb2.PacketReplicationEngineEntry
    ) -> Iterator[p4runtime_pb2.PacketReplicationEngineEntry]:
        kind = request.WhichOneof("type")
        if kind == "multicast_group_entry":
            wanted = request.multicast_group_entry.multicast_group_id
            for group_id, replicas in sorted(self.target.mc_groups().items()):
                if wanted and wanted != group_id:
                    continue
                result = p4runtime_pb2.PacketReplicationEngineEntry()
                result.multicast_group_entry.multicast_group_id = group_id
                _add_replicas(
                    result.multicast_group_entry.replicas,
                    replicas,
                    self.state.replica_bytes.get(("mc", group_id), False),
                )
                yield result
        elif kind == "clone_session_entry":
            wanted = request.clone_session_entry.session_id
            for session_id, session in sorted(self.target.clone_sessions().items()):
                if wanted and wanted != session_id:
                    continue
                result = p4runtime_pb2.PacketReplicationEngineEntry()
                clone = result.clone_session_entry
                clone.session_id = session_id
                clone.class_of_service = session.class_of_service
                clone.packet_length_bytes = session.packet_length_bytes
                _add_replicas(
                    clone.replicas,
                    session.replicas,
                    self.state.replica_bytes.get(("clone", session_id), False),
                )
                yield result
        else:
            raise P4RuntimeError("INVALID_ARGUMENT", "PRE read needs a group or session entry")

    def _read_digests(
        self, request: p4runtime_pb2.DigestEntry
    ) -> list[p4runtime_pb2.DigestEntry]:
        return self.digests.read(request.digest_id)


def _entity(kind: str, message: object) -> p4runtime_pb2.Entity:
    """Wrap one entity message into an Entity."""
    entity = p4runtime_pb2.Entity()
    getattr(entity, kind).CopyFrom(message)
    return entity


def _modify_only(update_type: int, what: str) -> None:
    """Arrays always exist: INSERT and DELETE make no sense (INVALID_ARGUMENT)."""
    if update_type != Update.MODIFY:
        raise P4RuntimeError("INVALID_ARGUMENT", f"{what} can only be modified")


def _indices(array: ArrayInfo, entry: object) -> range:
    """The cells an entry names: its index, or the whole array when unset."""
    if not entry.HasField("index"):
        return range(array.size)
    index = entry.index.index
    if index < 0:
        raise P4RuntimeError("INVALID_ARGUMENT", f"{array.name}: negative index {index}")
    if index >= array.size:
        raise P4RuntimeError(
            "OUT_OF_RANGE", f"{array.name}: index {index} not below size {array.size}"
        )
    return range(index, index + 1)


def _counter_value(data: p4runtime_pb2.CounterData) -> tgt.CounterValue:
    """Target counter value from CounterData (negative counts are INVALID_ARGUMENT)."""
    if data.packet_count < 0 or data.byte_count < 0:
        raise P4RuntimeError("INVALID_ARGUMENT", "counter values must be ≥ 0")
    return tgt.CounterValue(packets=data.packet_count, bytes=data.byte_count)


def _counter_data(counter: ArrayInfo, value: tgt.CounterValue) -> p4runtime_pb2.CounterData:
    """CounterData with the counts the counter's unit declares."""
    data = p4runtime_pb2.CounterData()
    if counter.unit in (CounterUnit.BYTES, CounterUnit.BOTH):
        data.byte_count = value.bytes
    if counter.unit in (CounterUnit.PACKETS, CounterUnit.BOTH):
        data.packet_count = value.packets
    return data


def _meter_rates(config: p4runtime_pb2.MeterConfig) -> tgt.MeterRates:
    """Target rates from a MeterConfig: non-negative, pir ≥ cir (INVALID_ARGUMENT)."""
    values = (config.cir, config.cburst, config.pir, config.pburst)
    if min(values) < 0:
        raise P4RuntimeError("INVALID_ARGUMENT", "meter rates and bursts must be ≥ 0")
    if config.pir < config.cir:
        raise P4RuntimeError("INVALID_ARGUMENT", "meter pir must be ≥ cir")
    if config.eburst:
        raise P4RuntimeError("UNIMPLEMENTED", "eburst (single-rate meters) is not supported")
    return tgt.MeterRates(*values)


def _meter_config(rates: tgt.MeterRates) -> p4runtime_pb2.MeterConfig:
    """MeterConfig from target rates."""
    return p4runtime_pb2.MeterConfig(
        cir=rates.cir, cburst=rates.cburst, pir=rates.pir, pburst=rates.pburst
    )


def _replicas(replicas: list) -> tuple[tuple[tgt.Replica, ...], bool]:
    """Target replicas (unique (port, instance)) and whether the client used `port` bytes."""
    result = []
    as_bytes = False
    for replica in replicas:
        if replica.WhichOneof("port_kind") == "port":
            if not replica.port:
                raise P4RuntimeError("INVALID_ARGUMENT", "replica port is an empty bytestring")
            port = codec.to_int(replica.port)
            if port >> 32:
                raise P4RuntimeError("OUT_OF_RANGE", "replica port does not fit 32 bits")
            as_bytes = True
        else:
            port = replica.egress_port
        item = tgt.Replica(port, replica.instance)
        if item in result:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"replica (port {port}, instance {replica.instance}) repeated"
            )
        result.append(item)
    return tuple(result), as_bytes


def _add_replicas(field: object, replicas: tuple[tgt.Replica, ...], as_bytes: bool) -> None:
    """Append replicas to a repeated Replica field in the form the client wrote them."""
    for replica in replicas:
        if as_bytes:
            field.add(port=codec.canonical(codec.from_int(replica.port, 32)),
                      instance=replica.instance)
        else:
            field.add(egress_port=replica.port, instance=replica.instance)


def _action_matches(wanted: p4runtime_pb2.TableAction, actual: p4runtime_pb2.TableAction) -> bool:
    """Read filter on the action: same kind and same action/member/group id."""
    kind = wanted.WhichOneof("type")
    if kind is None:
        return True
    if kind != actual.WhichOneof("type"):
        return False
    if kind == "action":
        return wanted.action.action_id == actual.action.action_id
    return getattr(wanted, kind) == getattr(actual, kind)

