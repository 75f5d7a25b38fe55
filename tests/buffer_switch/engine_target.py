"""The parts of the P4Runtime server's `Target` protocol the controller uses (tables, counters,
registers, PRE), over the in-process engine, so bufferlab-ctl can be tested end to end
through the real gRPC server. Everything else the protocol has is left out: the server turns
a missing method into INTERNAL, which no test here reaches."""

from __future__ import annotations

import json

from bufferlab.switch import AlreadyExistsError, Engine, NotFoundError
from bufferlab.switch import _engine as raw
from bufferlab.switch.p4runtime import target as tgt

# Clone sessions with several replicas ride on a multicast group 32768 + session id, as
# BMv2's P4Runtime server does it (formats.md).
HIDDEN_GROUP_BASE = 32768


def _bytes(value: int, width: int) -> bytes:
    return value.to_bytes((width + 7) // 8, "big")


def _int(value: bytes | None) -> int | None:
    return None if value is None else int.from_bytes(value, "big")


class EngineTarget:
    """One engine behind the P4Runtime server; `engine` is None until a pipeline is set."""

    def __init__(self, pool_bytes: int) -> None:
        self.pool_bytes = pool_bytes
        self.engine: Engine | None = None
        self.register_widths: dict[str, int] = {}
        self.groups: dict[int, tuple[tgt.Replica, ...]] = {}
        self.sessions: dict[int, tgt.CloneSession] = {}

    def load_pipeline(self, json_text: str) -> None:
        self.engine = Engine(json_text, seed=1, pool_bytes=self.pool_bytes)
        self.register_widths = {r["name"]: r["bitwidth"]
                                for r in json.loads(json_text).get("register_arrays", [])}
        self.groups, self.sessions = {}, {}

    def _key(self, key: tuple[tgt.MatchParam, ...]) -> list[tuple]:
        out = []
        for param in key:
            second = {"exact": None, "lpm": param.prefix_len, "ternary": _int(param.mask),
                      "range": _int(param.high)}[param.kind]
            out.append((param.kind, _int(param.value), second))
        return out

    def _data(self, action: tgt.ActionCall) -> list[int]:
        return [_int(p) for p in action.params]

    def table_add(self, table: str, entry: tgt.TableEntry) -> None:
        try:
            raw.Engine.table_add(self.engine, table, self._key(entry.key), entry.action.name,
                                 self._data(entry.action), entry.priority)
        except AlreadyExistsError as err:
            raise tgt.AlreadyExists(str(err)) from None

    def table_modify(self, table: str, entry: tgt.TableEntry) -> None:
        try:
            handle = raw.Engine.table_find(self.engine, table, self._key(entry.key), entry.priority)
        except NotFoundError as err:
            raise tgt.NotFound(str(err)) from None
        raw.Engine.table_modify(self.engine, table, handle, entry.action.name,
                                self._data(entry.action))

    def _action(self, name: str, data: list[int]) -> tgt.ActionCall:
        widths = [w for _n, w in self.engine.action_params(name)]
        return tgt.ActionCall(name, tuple(_bytes(v, w) for v, w in zip(data, widths, strict=True)))

    def table_entries(self, table: str) -> list[tgt.TableEntry]:
        widths = [w for _n, _k, w in self.engine.table_keys(table)]
        entries = []
        for found in self.engine.table_entries(table):
            key = []
            for (kind, value, second), width in zip(found["keys"], widths, strict=True):
                if kind == "lpm":
                    key.append(tgt.MatchParam("lpm", _bytes(value, width), prefix_len=second))
                else:
                    key.append(tgt.MatchParam(kind, _bytes(value, width)))
            entries.append(tgt.TableEntry(tuple(key), self._action(found["action"], found["data"]),
                                          found["priority"]))
        return entries

    def table_set_default(self, table: str, action: tgt.ActionCall) -> None:
        raw.Engine.table_set_default(self.engine, table, action.name, self._data(action))

    def table_get_default(self, table: str) -> tgt.ActionCall:
        name, data = self.engine.table_default(table)
        return self._action(name, data)

    def counter_read(self, counter: str, index: int) -> tgt.CounterValue:
        packets, octets = self.engine.counter_read(counter, index)
        return tgt.CounterValue(packets, octets)

    def register_read(self, register: str, index: int) -> bytes:
        return _bytes(self.engine.register_read(register, index), self.register_widths[register])

    def mc_group_add(self, group_id: int, replicas: tuple[tgt.Replica, ...]) -> None:
        if group_id in self.groups:
            raise tgt.AlreadyExists(f"multicast group {group_id}")
        self.engine.mc_group_set(group_id, [(r.port, r.instance) for r in replicas])
        self.groups[group_id] = replicas

    def mc_groups(self) -> dict[int, tuple[tgt.Replica, ...]]:
        return dict(self.groups)

    def clone_session_add(self, session_id: int, session: tgt.CloneSession) -> None:
        if session_id in self.sessions:
            raise tgt.AlreadyExists(f"clone session {session_id}")
        if len(session.replicas) == 1:
            self.engine.clone_session_set(session_id, port=session.replicas[0].port)
        else:
            hidden = HIDDEN_GROUP_BASE + session_id
            self.engine.mc_group_set(hidden, [(r.port, r.instance) for r in session.replicas])
            self.engine.clone_session_set(session_id, mcast_grp=hidden)
        self.sessions[session_id] = session

    def clone_sessions(self) -> dict[int, tgt.CloneSession]:
        return dict(self.sessions)

    def set_packet_in_handler(self, handler: tgt.PacketInHandler | None) -> None:
        """Packet-in is not used by these tests."""

    def set_digest_handler(self, handler: tgt.DigestHandler | None) -> None:
        """buffer_switch.p4 sends no digests."""
