"""In-process switch engine: load BMv2 JSON, write entries by name, send frames
in virtual time and read what comes out.

    e = Engine("build/prog.json", seed=1)            # path or JSON text (jit=False: interpret)
    e.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)},
                "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:01", "port": 1})
    e.configure_port(1, rate_bps=10**9, delay_ns=5_000)
    e.send(2, frame, t_ns=0)                         # ingress runs at t_ns
    e.advance(1_000_000)                             # egress at tx_start, delivery at arrival
    for port, data, t_ns in e.received(): ...

Time is virtual and in ns; `send` first runs everything due up to its time and
refuses a time before the engine's. Values may be given as ints, bytes
(big-endian), IPv4/IPv6 strings or MAC strings. Match values per key kind:
exact ``v``; lpm ``(v, prefix_len)``; ternary ``(v, mask)``; range ``(lo, hi)``;
optional ``v`` or ``None`` (don't care). Control-plane errors are typed
(`NotFoundError`, `AlreadyExistsError`, `InvalidArgumentError`,
`OutOfRangeError`, `ResourceExhaustedError`, `PermissionDeniedError`,
`FailedPreconditionError`, all `EngineError`), one per gRPC status a
P4Runtime server returns; a JSON that cannot be loaded raises `LoadError`
naming the JSON object and the reason. The raw engine methods (counters,
meters, registers, multicast, clone sessions, queue stats, ...) are
inherited from `_engine.Engine` and documented there.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bufferlab.switch import _engine
from bufferlab.switch.errors import (
    AlreadyExistsError,
    EngineError,
    FailedPreconditionError,
    InvalidArgumentError,
    LoadError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
)

__all__ = [
    "AlreadyExistsError",
    "Engine",
    "EngineApi",
    "EngineError",
    "FailedPreconditionError",
    "InvalidArgumentError",
    "LoadError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "to_int",
]

Value = int | bytes | str

#: Default shared buffer size, bytes (the traffic manager's default).
DEFAULT_POOL_BYTES = 1 << 20


def to_int(v: Value) -> int:
    """Converts an int, big-endian bytes, IPv4/IPv6 text or MAC text to an int."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, bytes | bytearray):
        return int.from_bytes(v, "big")
    if isinstance(v, str):
        s = v.strip()
        if ":" in s and len(s.split(":")) == 6 and all(len(p) <= 2 for p in s.split(":")):
            return int(s.replace(":", ""), 16)
        try:
            return int(ipaddress.ip_address(s))
        except ValueError:
            return int(s, 0)
    raise InvalidArgumentError(f"cannot use {v!r} as a value")


def _read_json(json: str | Path) -> str:
    if isinstance(json, Path):
        return json.read_text()
    # Text that starts like any JSON document is the document (a wrong one gets the loader's
    # error, not "no such file").
    if json.lstrip().startswith(("{", "[")):
        return json
    return Path(json).read_text()


class EngineApi:
    """Name-based conveniences over a native engine class (mixed in before it).

    The same methods serve `Engine` (this package's native module) and the simulator's
    switches (`bufferlab.sim`), whose native module carries the engine's class too.
    """

    def __new__(
        cls, json: str | Path, *, seed: int = 0, pool_bytes: int = DEFAULT_POOL_BYTES, jit: bool = True
    ) -> EngineApi:
        """Loads BMv2 JSON from a path or from text; ``jit=False`` interprets every action
        and control instead of compiling them to machine code (``--no-jit``)."""
        # Only a request for the interpreter is passed on, so a native class built before
        # the JIT (its default) still loads.
        extra = {} if jit else {"jit": False}
        return super().__new__(cls, _read_json(json), seed, pool_bytes, **extra)

    def _keys(self, table: str, match: Mapping[str, Any] | Sequence[Any]) -> list[tuple]:
        spec = self.table_keys(table)
        if isinstance(match, Mapping):
            unknown = set(match) - {name for name, _, _ in spec}
            if unknown:
                raise InvalidArgumentError(f"table {table}: no key named {sorted(unknown)}")
            values = [match.get(name) for name, _, _ in spec]
            missing = [name for (name, kind, _), v in zip(spec, values, strict=True) if v is None and kind != "optional"]
            if missing:
                raise InvalidArgumentError(f"table {table}: missing key values {missing}")
        else:
            values = list(match)
            if len(values) != len(spec):
                raise InvalidArgumentError(f"table {table}: {len(values)} key values for {len(spec)} keys")
        out = []
        for (name, kind, _width), v in zip(spec, values, strict=True):
            if kind == "exact":
                out.append(("exact", to_int(v), None))
            elif kind == "optional":
                out.append(("optional", None if v is None else to_int(v), None))
            elif isinstance(v, tuple) and len(v) == 2:
                out.append((kind, to_int(v[0]), to_int(v[1])))
            elif kind == "lpm":
                out.append(("lpm", to_int(v), _width))
            elif kind == "ternary":
                out.append(("ternary", to_int(v), (1 << _width) - 1))
            elif kind == "range":
                out.append(("range", to_int(v), to_int(v)))
            else:
                raise InvalidArgumentError(f"table {table}: key {name} ({kind}) needs a pair, got {v!r}")
        return out

    def _data(self, action: str, params: Mapping[str, Value] | Sequence[Value]) -> list[int]:
        spec = self.action_params(action)
        if isinstance(params, Mapping):
            unknown = set(params) - {n for n, _ in spec}
            missing = [n for n, _ in spec if n not in params]
            if unknown or missing:
                raise InvalidArgumentError(
                    f"action {action}: unknown parameters {sorted(unknown)}, missing {missing}"
                )
            return [to_int(params[n]) for n, _ in spec]
        return [to_int(v) for v in params]

    def table_add(
        self,
        table: str,
        match: Mapping[str, Any] | Sequence[Any],
        action: str,
        params: Mapping[str, Value] | Sequence[Value] = (),
        priority: int = 0,
    ) -> int:
        """Adds an entry by names; returns its handle."""
        return super().table_add(table, self._keys(table, match), action, self._data(action, params), priority)

    def table_add_raw(
        self, table: str, keys: Sequence[tuple], action: str, data: Sequence[int], priority: int = 0
    ) -> int:
        """Adds an entry from (kind, a, b) key tuples in key order and data ints."""
        return super().table_add(table, list(keys), action, list(data), priority)

    def table_add_member(self, table: str, match: Mapping[str, Any] | Sequence[Any], member: int, priority: int = 0) -> int:
        """Adds an entry of an indirect table pointing at an action profile member."""
        return super().table_add_indirect(table, self._keys(table, match), member, False, priority)

    def table_add_group(self, table: str, match: Mapping[str, Any] | Sequence[Any], group: int, priority: int = 0) -> int:
        """Adds an entry of an indirect table pointing at a selector group."""
        return super().table_add_indirect(table, self._keys(table, match), group, True, priority)

    def table_find(self, table: str, match: Mapping[str, Any] | Sequence[Any], priority: int = 0) -> int:
        """Handle of the entry with this key."""
        return super().table_find(table, self._keys(table, match), priority)

    def table_modify(
        self, table: str, handle: int, action: str, params: Mapping[str, Value] | Sequence[Value] = ()
    ) -> None:
        """Changes an entry's action and parameters."""
        super().table_modify(table, handle, action, self._data(action, params))

    def table_set_default(
        self, table: str, action: str, params: Mapping[str, Value] | Sequence[Value] = ()
    ) -> None:
        """Sets the table's default (miss) action."""
        super().table_set_default(table, action, self._data(action, params))

    def profile_member_set(
        self,
        profile: str,
        member: int,
        action: str,
        params: Mapping[str, Value] | Sequence[Value] = (),
        modify: bool = False,
    ) -> None:
        """Adds (or with ``modify`` replaces) an action profile member."""
        super().profile_member_set(profile, member, action, self._data(action, params), modify)

    def register_write(self, name: str, index: int, value: Value) -> None:
        """Writes a register cell."""
        super().register_write(name, index, to_int(value))

    def send(self, port: int, frame: bytes, t_ns: int) -> None:
        """Receives ``frame`` on ``port`` at ``t_ns`` (everything due before runs first)."""
        super().send(port, bytes(frame), t_ns)


class Engine(EngineApi, _engine.Engine):
    """The switch engine in deterministic mode: virtual time (ns), seeded randomness."""
