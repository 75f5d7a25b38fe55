"""Samples a buffer_switch.p4 switch over P4Runtime: one Read request per tick.

Each sample holds, per watched port: buffer occupancy (bytes) and the port's threshold
(bytes; a dynamic threshold is alpha times the pool free at that moment), tail drops,
BCN frames sent and the Fb of the last one (64-byte pages), PAUSE frames and XONs sent,
whether the port's host is paused by us and whether the port's own buffer holds an XOFF,
and the rates of frames received from the port's host and sent to it (bit/s, from the
`port_rx` and `queue_tx` byte counters); per queue the same where the program counts per
queue. A name the running program does not have (a student's skeleton may leave one out)
is simply not sampled, and its plot stays empty. Names are looked up as the controller does
(a unique suffix), so a TNA program's `pipe.queue_tx` is read as `queue_tx`.

On a TNA program the buffer is Tofino's traffic manager's: given a `TmReader` (the switch's
runtime CLI), each sample also holds every port's and queue's depth in TM cells
(`occupancy_cells`) and, where the program keeps no occupancy registers, its occupancy in
bytes (cells × the cell size: the buffer the TM holds for it) and its drops (the TM's); the
frames' own bytes (`frame_bytes`), the cell size and the pool in use come from the TM too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.buffer_program import entry_action, entry_match
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.p4info import P4InfoIndex, UnknownName
from bufferlab.controller.values import decode
from bufferlab.controller.view.tm import TmError, TmReader, TmSnapshot

QUEUES_PER_PORT = 8  # register index of (port, queue) is port * 8 + queue (p4src/README.md)
UNITS_PER_PORT = 16  # PAUSE state index is port * 16 + unit
LINK_UNIT = 8  # the 802.3x unit (PFC priorities are units 0..7)

# (kind, P4 name, what the cell index is) for every cell array the view reads.
PORT_CELLS = (("register", "port_occupancy"), ("counter", "port_drops"),
              ("counter", "pause_frames"), ("counter", "xon_frames"), ("counter", "port_rx"))
QUEUE_CELLS = (("register", "queue_occupancy"), ("counter", "queue_drops"),
               ("counter", "bcn_frames"), ("register", "bcn_last_fb"), ("counter", "queue_tx"))
UNIT_CELLS = (("register", "paused"), ("register", "xoff_active"))


@dataclass
class Sample:
    """What the switch said at one instant; times in s since the sampler started."""

    t_s: float
    pool_bytes: int
    pool_used_bytes: int
    ports: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: The TM's cell size (None: the program's buffer counts bytes), its XOFF and XON frames,
    #: and why the TM could not be read this time.
    cell_bytes: int | None = None
    tm_xoff: int | None = None
    tm_xon: int | None = None
    tm_error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The sample as the page receives it (port and queue keys as strings)."""
        return {"t_s": round(self.t_s, 4), "pool_bytes": self.pool_bytes,
                "pool_used_bytes": self.pool_used_bytes, "cell_bytes": self.cell_bytes,
                "tm_xoff": self.tm_xoff, "tm_xon": self.tm_xon, "tm_error": self.tm_error,
                "ports": {str(p): v for p, v in self.ports.items()}}


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >> 31 else value


def threshold_bytes(action: str, params: dict[str, int], pool_bytes: int, pool_used: int) -> int:
    """A buffer_threshold action as the bytes a port may hold now."""
    if action == "dynamic_threshold":
        free = max(pool_bytes - pool_used, 0)
        return params["alpha_num"] * free >> params["alpha_shift"]
    return pool_bytes * params.get("percent", 100) // 100


class Sampler:
    """Reads the watched ports' state from one switch; `sample()` returns a `Sample`."""

    def __init__(self, connection: SwitchConnection, index: P4InfoIndex, ports: Iterable[int],
                 queues: int = 1, clock: Callable[[], float] = time.monotonic,
                 tm: TmReader | None = None) -> None:
        """Prepare the one Read request every sample sends; `tm` reads the TM's counters
        (a TNA switch's runtime CLI) with each sample."""
        self.connection = connection
        self.index = index
        self.ports = sorted(ports)
        self.queues = queues
        self.tm = tm
        self._clock = clock
        self._start = clock()
        self._last: tuple[float, dict[tuple[str, int], int]] | None = None
        # P4Info id -> the name the view asked for (a TNA program's carry the pipe's).
        self._names: dict[int, str] = {}
        self._request = self._entities()
        self._threshold_table = self._has("table", "buffer_threshold")

    def _has(self, kind: str, name: str) -> bool:
        try:
            self._names[self.index.get(kind, name).preamble.id] = name
        except UnknownName:
            return False
        return True

    def _cells(self, kind: str, name: str, cells: Iterable[int]) -> list[p4runtime_pb2.Entity]:
        if not self._has(kind, name):
            return []
        make = entities.counter_entry if kind == "counter" else entities.register_entry
        return [entity(make(self.index, name, cell)) for cell in cells]

    def _table(self, name: str, default: bool) -> list[p4runtime_pb2.Entity]:
        if not self._has("table", name):
            return []
        return [entity(p4runtime_pb2.TableEntry(table_id=self.index.get("table", name).preamble.id,
                                                is_default_action=default))]

    def _entities(self) -> list[p4runtime_pb2.Entity]:
        slots = [p * QUEUES_PER_PORT + q for p in self.ports for q in range(self.queues)]
        units = [p * UNITS_PER_PORT + LINK_UNIT for p in self.ports]
        request = self._cells("register", "pool_occupancy", [0])
        for kind, name in PORT_CELLS:
            request += self._cells(kind, name, self.ports)
        for kind, name in QUEUE_CELLS:
            request += self._cells(kind, name, slots)
        for kind, name in UNIT_CELLS:
            request += self._cells(kind, name, units)
        return (request + self._table("switch_config", True) + self._table("buffer_threshold", True)
                + self._table("buffer_threshold", False))

    def sample(self) -> Sample:
        """Read everything once and turn it into occupancies, thresholds, counts and rates."""
        found = self.connection.read(*self._request)
        now = self._clock()
        cells: dict[tuple[str, int], int] = {}
        pool_bytes, default_share, shares = 0, ("static_threshold", {"percent": 100}), {}
        for item in found:
            kind = item.WhichOneof("entity")
            if kind == "counter_entry":
                c = item.counter_entry
                name = self._names[c.counter_id]
                cells[(name, c.index.index)] = c.data.packet_count
                cells[(name + ".bytes", c.index.index)] = c.data.byte_count
            elif kind == "register_entry":
                r = item.register_entry
                cells[(self._names[r.register_id], r.index.index)] = decode(r.data.bitstring)
            elif kind == "table_entry":
                e = item.table_entry
                table = self._names[e.table_id]
                action = entry_action(self.index, e)
                if table == "switch_config":
                    pool_bytes = action[1]["pool_bytes"]
                elif e.is_default_action:
                    default_share = action
                else:
                    shares[entry_match(self.index, e)["port"]] = action
        tm, tm_error = None, None
        if self.tm is not None:
            try:
                tm = self.tm.snapshot(self.ports, self.queues)
            except TmError as err:
                # The P4 side is still worth showing; the page says why the TM's is not.
                tm_error = str(err)
        pool_used = cells.get(("pool_occupancy", 0), 0)
        if tm is not None and ("pool_occupancy", 0) not in cells:
            pool_used = tm.pool_used_cells * tm.cell_bytes
        sample = Sample(now - self._start, pool_bytes, pool_used, tm_error=tm_error)
        if tm is not None:
            sample.cell_bytes, sample.tm_xoff, sample.tm_xon = tm.cell_bytes, tm.xoff, tm.xon
        rates = self._rates(now, cells)
        for port in self.ports:
            action, params = shares.get(port, default_share)
            queues = {}
            for q in range(self.queues):
                slot = port * QUEUES_PER_PORT + q
                queues[str(q)] = {
                    "occupancy_bytes": cells.get(("queue_occupancy", slot)),
                    "drops": cells.get(("queue_drops", slot)),
                    "bcn_frames": cells.get(("bcn_frames", slot)),
                    "bcn_fb_pages": _signed32(cells.get(("bcn_last_fb", slot), 0)),
                    "tx_bps": rates.get(("queue_tx.bytes", slot)),
                }
            unit = port * UNITS_PER_PORT + LINK_UNIT
            tx = [q["tx_bps"] for q in queues.values() if q["tx_bps"] is not None]
            sample.ports[port] = {
                "occupancy_bytes": cells.get(("port_occupancy", port)),
                # A TNA program has no buffer_threshold: its limits are the TM's (in cells).
                "threshold_bytes": (threshold_bytes(action, params, pool_bytes, pool_used)
                                    if self._threshold_table else None),
                "drops": cells.get(("port_drops", port)),
                "bcn_frames": sum(q["bcn_frames"] or 0 for q in queues.values()),
                "pause_frames": cells.get(("pause_frames", port)),
                "xon_frames": cells.get(("xon_frames", port)),
                "paused": cells.get(("paused", unit)),
                "xoff_active": cells.get(("xoff_active", unit)),
                "rx_bps": rates.get(("port_rx.bytes", port)),
                "tx_bps": sum(tx) if tx else None,
                "queues": queues,
            }
            if tm is not None:
                _add_tm(sample.ports[port], port, tm)
        return sample

    def _rates(self, now: float, cells: dict[tuple[str, int], int]) -> dict[tuple[str, int], float]:
        """Bit/s of every byte counter since the previous sample (none for the first)."""
        counters = {k: v for k, v in cells.items() if k[0].endswith(".bytes")}
        last, self._last = self._last, (now, counters)
        if last is None or now <= last[0]:
            return {}
        elapsed = now - last[0]
        return {k: max(v - last[1].get(k, v), 0) * 8 / elapsed for k, v in counters.items()}


def _add_tm(port: dict[str, Any], number: int, tm: TmSnapshot) -> None:
    """A port's sample with the TM's view: cells, bytes (cells × cell size where the program
    keeps no occupancy register) and frame bytes queued, and the TM's drops where the
    program counts none; the same per queue."""
    pairs = [(port, tm.ports.get(number))]
    pairs += [(q, tm.queues.get((number, int(k)))) for k, q in port["queues"].items()]
    for into, counters in pairs:
        if counters is None:
            continue
        into["occupancy_cells"] = counters["usage_cells"]
        into["frame_bytes"] = counters["frame_bytes"]
        if into["occupancy_bytes"] is None:
            into["occupancy_bytes"] = counters["usage_cells"] * tm.cell_bytes
        if into["drops"] is None:
            into["drops"] = counters["drop_count_packets"]
