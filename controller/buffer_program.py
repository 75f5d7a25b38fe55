"""Config file -> the P4Runtime writes `p4src/buffer_switch.p4` needs, and live changes.

`program_updates` turns a checked `Config` into an ordered list of updates: first MODIFYs
of the tables' default entries (switch-wide values), then INSERTs of the PRE entries
(the all-ports multicast group, one clone session per port, the all-ports clone session),
the forwarding entries, the class map and one entry per configured port (and queue) in
each parameter table, so that a live change is always a MODIFY of an existing entry.
`BufferSwitch` applies a config over a `SwitchConnection` and makes those live changes.

The same config drives the TNA port (`p4src/tna/buffer_switch.p4`), told apart by its
P4Info's architecture: there the tables whose work Tofino's traffic manager does
(`TM_TABLES`) are not written, the mirror sessions truncate a BCN copy, and the keys
those tables stood for become TM settings (`tofino_mapping.tm_plan`), which `BufferSwitch`
hands, as runtime CLI `tm_*` lines, to the `tm` callable it was given (P4Runtime does not
reach a TM; `bufferlab-ctl tm CONFIG | bufferlab-switch-cli` on a live switch).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.bcn_quantise import TABLE_SIZE as QUANTISE_TABLE_SIZE
from bufferlab.controller.bcn_quantise import quantise_entries
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.config import (
    DEFAULT_FEEDBACK,
    NO_CAP,
    PAGE_BYTES,
    Bcn,
    Config,
    ConfigError,
    Pause,
    Threshold,
    bcn_section,
    pause_section,
)
from bufferlab.controller.p4info import P4InfoIndex, UnknownName
from bufferlab.controller.runtime_json import load_runtime
from bufferlab.controller.tofino_mapping import TmPlan, cell_bytes_of, on_tofino, tm_plan
from bufferlab.controller.values import decode

LOG = logging.getLogger(__name__)

MODIFY = p4runtime_pb2.Update.MODIFY
INSERT = p4runtime_pb2.Update.INSERT
DELETE = p4runtime_pb2.Update.DELETE

# Names users type in `set PORT bcn|pause NAME VALUE`, and the config keys they stand for.
BCN_NAMES = {"enable": "enable", "qeq": "qeq_bytes", "w": "w", "qsc": "qsc_bytes",
             "sample": "sample_bytes", "jitter": "jitter_bytes", "fb_bits": "fb_bits",
             "fb_range": "fb_range_bytes", "positive_to": "positive_to",
             "qoff_max": "qoff_max_bytes"}
FEEDBACK_KEYS = ("qoff_max_bytes", "fb_bits", "fb_range_bytes", "positive_to")
PAUSE_NAMES = {"mode": "mode", "xoff": "xoff_bytes", "xon": "xon_bytes", "quanta": "quanta",
               "refresh": "refresh_us"}
#: The v1model program's tables whose work Tofino's TM does (p4src/README.md).
TM_TABLES = ("buffer_threshold", "queue_threshold", "pause_config")
#: What a TNA mirror session keeps of a BCN copy: its 21-byte mirror header and the 90
#: sample bytes a BCN frame carries (p4src/README.md "The Tofino port").
BCN_MIRROR_BYTES = 21 + 90


def _entry(index: P4InfoIndex, table: str, match: dict[str, Any] | None,
           action: tuple[str, dict[str, int]], default: bool = False) -> p4runtime_pb2.Entity:
    name, params = action
    return entity(entities.table_entry(index, table, match=match, action_name=name,
                                       params=params, default_action=default, what=table))


def _update(kind: int, message: p4runtime_pb2.Entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=kind, entity=message)


def default_updates(index: P4InfoIndex, config: Config) -> list[p4runtime_pb2.Update]:
    """MODIFYs of every parameter table's default entry with the switch-wide values (on a
    TNA program, of the tables it has: `TM_TABLES` are the TM's)."""
    defaults = [
        ("switch_config", ("set_switch", {
            "switch_id": config.switch_id, "pool_bytes": config.pool_bytes,
            "port_session_base": config.port_session_base,
            "all_ports_session": config.all_ports_session})),
        ("l2_forward", ("flood", {"group": config.flood_group})),
        ("dscp_class", ("set_queue", {"queue": config.default_queue})),
        ("buffer_threshold", config.threshold.action()),
        ("queue_threshold", ("queue_cap", {"cap_bytes": config.queue_cap_bytes})),
        ("ecn_threshold", ecn_action(config.ecn_k_bytes)),
        ("bcn_config", config.bcn.action()),
        ("pause_config", config.pause.action()),
    ]
    # bcn_feedback is written only where it differs from the program's default (Fb as
    # computed, positive to tagged sources), so configs without its keys write what they did.
    if config.bcn.feedback_action() != DEFAULT_FEEDBACK:
        defaults.append(("bcn_feedback", config.bcn.feedback_action()))
    tofino = on_tofino(index)
    return [_update(MODIFY, _entry(index, table, None, action, default=True))
            for table, action in defaults if not (tofino and table in TM_TABLES)]


def pre_updates(config: Config, tofino: bool = False) -> list[p4runtime_pb2.Update]:
    """INSERTs of the all-ports multicast group, each port's clone session and the all-ports
    session; on Tofino (``tofino``) each port's E2E mirror session truncates a BCN copy to
    `BCN_MIRROR_BYTES`, and there is no all-ports session (the TM sends PAUSE/PFC)."""
    ports = sorted(config.ports)
    every_port = [(port, 0) for port in ports]
    updates = [_update(INSERT, entity(entities.multicast_group(config.flood_group, every_port)))]
    for port in ports:
        session = entities.clone_session(config.port_session_base + port, [(port, 0)],
                                         packet_length_bytes=BCN_MIRROR_BYTES if tofino else 0)
        updates.append(_update(INSERT, entity(session)))
    if not tofino:
        # A clone session with every port as a replica is BMv2's mirroring_add_mc to group G.
        all_ports = entities.clone_session(config.all_ports_session, every_port)
        updates.append(_update(INSERT, entity(all_ports)))
    return updates


def forwarding_updates(index: P4InfoIndex, config: Config) -> list[p4runtime_pb2.Update]:
    """INSERTs of the L2 entries and IPv4 routes, in config order."""
    updates = [_update(INSERT, _entry(index, "l2_forward", {"dst_addr": e.mac},
                                      ("l2_to_port", {"port": e.port})))
               for e in config.l2]
    updates += [_update(INSERT, _entry(index, "ipv4_lpm", {"dst_addr": [r.prefix, r.prefix_len]},
                                       ("ipv4_forward", {"dst_mac": r.next_hop_mac,
                                                         "port": r.port})))
                for r in config.routes]
    return updates


def port_updates(index: P4InfoIndex, config: Config) -> list[p4runtime_pb2.Update]:
    """INSERTs of the class map and of every port's (and queue's) parameter entries (on a
    TNA program, of the tables it has: `TM_TABLES` are the TM's)."""
    updates = [_update(INSERT, _entry(index, "dscp_class", {"dscp": dscp},
                                      ("set_queue", {"queue": queue})))
               for dscp, queue in sorted(config.classes.items())]
    ports = [config.ports[p] for p in sorted(config.ports)]
    queues = range(config.priority_queues)
    tofino = on_tofino(index)
    if not tofino:
        updates += [_update(INSERT, _entry(index, "buffer_threshold", {"port": p.port},
                                           p.threshold.action()))
                    for p in ports]
        updates += [_update(INSERT, _entry(index, "queue_threshold", {"port": p.port, "queue": q},
                                           ("queue_cap", {"cap_bytes": p.queue_caps_bytes[q]})))
                    for p in ports for q in queues]
    updates += [_update(INSERT, _entry(index, "ecn_threshold", {"port": p.port, "queue": q},
                                       ecn_action(p.ecn_k_bytes)))
                for p in ports for q in queues]
    updates += [_update(INSERT, _entry(index, "bcn_config", {"port": p.port, "queue": q},
                                       p.bcn.action()))
                for p in ports for q in queues]
    switch_feedback = config.bcn.feedback_action()
    updates += [_update(INSERT, _entry(index, "bcn_feedback", {"port": p.port, "queue": q},
                                       p.bcn.feedback_action()))
                for p in ports for q in queues
                if p.bcn.enable and p.bcn.feedback_action() != switch_feedback]
    if not tofino:
        updates += [_update(INSERT, _entry(index, "pause_config", {"port": p.port},
                                           p.pause.action()))
                    for p in ports]
    else:
        updates += quantise_updates(index, config)
        updates += ghost_queue_updates(index, config)
    return updates


def ghost_queue_id(port: int, queue: int) -> int:
    """The TM's id of (port, queue) as the T2NA ghost thread reports it on bufferlab's engine:
    the port's low 7 bits, then the queue (0..15). On hardware the id is read from BF
    Runtime's TM tables instead."""
    return (port & 0x7F) << 4 | queue


def ghost_queue_updates(index: P4InfoIndex, config: Config) -> list[p4runtime_pb2.Update]:
    """On the T2NA variant, INSERTs of ghost_queue: each configured (port, queue)'s TM queue
    id, so ingress reads the length of the queue a frame joins (none on the TNA port)."""
    try:
        index.get("table", "ghost_queue")
    except UnknownName:
        return []
    return [_update(INSERT, _entry(index, "ghost_queue", {"port": p, "queue": q},
                                   ("set_ghost_queue", {"qid": ghost_queue_id(p, q)})))
            for p in sorted(config.ports) for q in range(min(config.priority_queues, 16))]


def quantise_inserts(index: P4InfoIndex, port: int, queue: int, bcn: Bcn
                     ) -> list[p4runtime_pb2.Update]:
    """INSERTs of the TNA port's bcn_quantise entries of one (port, queue) for ``bcn``'s
    Fb quantisation (none when it has no fb_bits)."""
    if bcn.fb_bits is None:
        return []
    range_pages = bcn.feedback_action()[1]["fb_range_pages"]
    return [_update(INSERT, entity(entities.table_entry(
                index, "bcn_quantise", match={"port": port, "queue": queue, "fb": [value, mask]},
                action_name="bcn_quantised", params={"fb": fb}, priority=1,
                what="bcn_quantise")))
            for value, mask, fb in quantise_entries(bcn.fb_bits, range_pages)]


def quantise_updates(index: P4InfoIndex, config: Config) -> list[p4runtime_pb2.Update]:
    """The TNA port's bcn_quantise entries for every BCN (port, queue) with fb_bits; a
    ConfigError when they do not fit the table."""
    updates = []
    where = []
    for number in sorted(config.ports):
        bcn = config.ports[number].bcn
        if bcn.enable and bcn.fb_bits is not None:
            where.append(f"ports.{number}.bcn.fb_bits")
            for queue in range(config.priority_queues):
                updates += quantise_inserts(index, number, queue, bcn)
    if len(updates) > QUANTISE_TABLE_SIZE:
        raise ConfigError([f"{where[0]}: the TNA port quantises Fb through bcn_quantise, "
                           f"{QUANTISE_TABLE_SIZE} entries in all; this config's fb_bits and "
                           f"fb_range_bytes need {len(updates)} over {len(where)} port(s) "
                           "(fewer bits, or BCN on fewer queues)"])
    return updates


def program_updates(index: P4InfoIndex, config: Config) -> list[p4runtime_pb2.Update]:
    """Every update a config stands for, in the order they are written."""
    updates = default_updates(index, config)
    runtime = load_runtime(config.runtime_json, index.p4info) if config.runtime_json else None
    if runtime is not None:
        updates += [_update(MODIFY, e) for e in runtime.defaults]
    updates += pre_updates(config, tofino=on_tofino(index))
    updates += forwarding_updates(index, config)
    if runtime is not None:
        updates += [_update(INSERT, e) for e in runtime.inserts]
    return updates + port_updates(index, config)


def entry_action(index: P4InfoIndex, entry: p4runtime_pb2.TableEntry) -> tuple[str, dict[str, int]]:
    """A table entry's action name and parameter values by name."""
    action = entry.action.action
    info = index.by_id(action.action_id)
    names = {p.id: p.name for p in info.params}
    return info.preamble.name, {names[p.param_id]: decode(p.value) for p in action.params}


def entry_match(index: P4InfoIndex, entry: p4runtime_pb2.TableEntry) -> dict[str, Any]:
    """A table entry's match as {field name: value, or (value, prefix_len/mask/high)}."""
    fields = {f.id: f.name for f in index.get("table", index.by_id(entry.table_id).preamble.name)
              .match_fields}
    out: dict[str, Any] = {}
    for m in entry.match:
        kind = m.WhichOneof("field_match_type")
        part = getattr(m, kind)
        if kind in ("exact", "optional"):
            out[fields[m.field_id]] = decode(part.value)
        elif kind == "lpm":
            out[fields[m.field_id]] = (decode(part.value), part.prefix_len)
        elif kind == "ternary":
            out[fields[m.field_id]] = (decode(part.value), decode(part.mask))
        else:
            out[fields[m.field_id]] = (decode(part.low), decode(part.high))
    return out


def threshold_update(index: P4InfoIndex, port: int, threshold: Threshold) -> p4runtime_pb2.Update:
    """MODIFY of a port's buffer_threshold entry."""
    return _update(MODIFY, _entry(index, "buffer_threshold", {"port": port}, threshold.action()))


def queue_cap_update(index: P4InfoIndex, port: int, queue: int, cap_bytes: int | None) -> p4runtime_pb2.Update:
    """MODIFY of a (port, queue)'s queue_threshold entry; None removes the cap."""
    cap = NO_CAP if cap_bytes is None else cap_bytes
    return _update(MODIFY, _entry(index, "queue_threshold", {"port": port, "queue": queue},
                                  ("queue_cap", {"cap_bytes": cap})))


def ecn_action(k_bytes: int | None) -> tuple[str, dict[str, int]]:
    """ecn_threshold's action: CE above `k_bytes` queued ahead, or no marking (None)."""
    return ("ecn_off", {}) if k_bytes is None else ("ecn_mark_above", {"k_bytes": k_bytes})


def ecn_update(index: P4InfoIndex, port: int, queue: int, k_bytes: int | None) -> p4runtime_pb2.Update:
    """MODIFY of a (port, queue)'s ecn_threshold entry; None turns marking off."""
    return _update(MODIFY, _entry(index, "ecn_threshold", {"port": port, "queue": queue},
                                  ecn_action(k_bytes)))


def bcn_of(name: str, params: dict[str, int]) -> dict[str, Any]:
    """A bcn_config action as a config section (bytes); {} for bcn_disable."""
    if name != "bcn_enable":
        return {}
    return {"qeq_bytes": params["qeq_pages"] * PAGE_BYTES, "w": params["w"],
            "qsc_bytes": params["qsc_pages"] * PAGE_BYTES,
            "sample_bytes": params["sample_bytes"], "jitter_bytes": params["jitter_bytes"]}


def feedback_of(name: str, params: dict[str, int]) -> dict[str, Any]:
    """A bcn_feedback action as the config keys it stands for."""
    out: dict[str, Any] = {"positive_to": "any" if params["positive_any"] else "tagged",
                           "fb_bits": None,
                           "qoff_max_bytes": params["qoff_max_pages"] * PAGE_BYTES or None}
    pages = params["fb_range_pages"]
    if pages:
        # code_mul = ⌈2^32·steps/range⌉, so ⌊code_mul·range / 2^32⌋ is steps.
        steps = params["fb_code_mul"] * pages >> 32
        out.update(fb_bits=steps.bit_length(), fb_range_bytes=pages * PAGE_BYTES)
    return out


def feedback_update(index: P4InfoIndex, port: int, queue: int, bcn: Bcn,
                    switch_default: tuple[str, dict[str, int]], present: bool
                    ) -> p4runtime_pb2.Update | None:
    """The write that gives (port, queue) `bcn`'s feedback where the switch-wide default is
    `switch_default` and an entry is `present` or not; None when nothing changes."""
    wanted = bcn.feedback_action()
    match = {"port": port, "queue": queue}
    if wanted == switch_default:
        if not present:
            return None
        return _update(DELETE, _entry(index, "bcn_feedback", match, wanted))
    return _update(MODIFY if present else INSERT, _entry(index, "bcn_feedback", match, wanted))


def pause_of(name: str, params: dict[str, int]) -> dict[str, Any]:
    """A pause_config action as a config section; {} for pause_disable."""
    if name == "pause_disable":
        return {}
    return {"mode": "802.3x" if name == "pause_enable" else "pfc", **params}


def bcn_update(index: P4InfoIndex, port: int, queue: int, current: dict[str, Any],
               changes: dict[str, Any]) -> p4runtime_pb2.Update:
    """MODIFY of one (port, queue)'s bcn_config entry: `current` section with `changes` applied."""
    bcn: Bcn = bcn_section({**current, **changes}, f"ports.{port}.bcn")
    return _update(MODIFY, _entry(index, "bcn_config", {"port": port, "queue": queue},
                                  bcn.action()))


def pause_update(index: P4InfoIndex, port: int, current: dict[str, Any],
                 changes: dict[str, Any]) -> p4runtime_pb2.Update:
    """MODIFY of a port's pause_config entry: `current` section with `changes` applied."""
    merged = {**current, **changes}
    if merged.get("mode", "802.3x") == "off":
        merged = {"mode": "off"}
    pause: Pause = pause_section(merged, f"ports.{port}.pause")
    return _update(MODIFY, _entry(index, "pause_config", {"port": port}, pause.action()))


def parse_changes(kind: str, pairs: Iterable[str]) -> dict[str, Any]:
    """`set PORT bcn|pause NAME VALUE ...` pairs as config keys and values; ConfigError if bad."""
    names = BCN_NAMES if kind == "bcn" else PAUSE_NAMES
    words = list(pairs)
    if not words or len(words) % 2:
        raise ConfigError([f"{kind}: give NAME VALUE pairs (names: {', '.join(names)})"])
    changes: dict[str, Any] = {}
    for name, text in zip(words[::2], words[1::2], strict=True):
        if name not in names:
            raise ConfigError([f"{kind}.{name}: unknown (names: {', '.join(names)})"])
        key = names[name]
        if key in ("mode", "positive_to"):
            changes[key] = text
        elif key in ("fb_bits", "qoff_max_bytes") and text in ("off", "none"):
            changes[key] = None
        elif key == "enable":
            if text not in ("on", "off", "true", "false"):
                raise ConfigError([f"{kind}.enable: {text!r} is not on or off"])
            changes[key] = text in ("on", "true")
        else:
            try:
                changes[key] = int(text.replace("_", ""), 0)
            except ValueError:
                raise ConfigError([f"{kind}.{key}: {text!r} is not a whole number"]) from None
    return changes


class BufferSwitch:
    """buffer_switch.p4 on one switch, over P4Runtime: apply a config, change it live, read it."""

    def __init__(self, connection: SwitchConnection, index: P4InfoIndex,
                 tm: Callable[[str], object] | None = None,
                 warn: Callable[[str], object] = LOG.warning) -> None:
        """``tm`` takes the runtime CLI `tm_*` lines of a TNA program's TM settings (a live
        switch's runtime CLI, or an engine's executor); without it `apply` writes only
        what P4Runtime reaches and the caller applies `tm_plan` itself. ``warn`` takes
        each of the mapping's warnings (logged by default)."""
        self.connection = connection
        self.index = index
        self.tm = tm
        self.warn = warn

    @property
    def tofino(self) -> bool:
        """Whether the program is the TNA port (its P4Info's architecture is tna or t2na)."""
        return on_tofino(self.index)

    def tm_plan(self, config: Config, bmv2_json: bytes | str | None = None) -> TmPlan:
        """The TM settings ``config`` stands for on this TNA program (cells from its JSON
        when given), with the mapping's warnings."""
        return tm_plan(config, cell_bytes_of(self.index, bmv2_json))

    def apply(self, config: Config, bmv2_json: bytes | None) -> int:
        """Install the pipeline (when given) and write every entry; on a TNA program, also
        hand the TM settings to `tm` (warnings logged). Returns the number of updates."""
        plan = self.tm_plan(config, bmv2_json) if self.tofino else None
        updates = program_updates(self.index, config)
        if bmv2_json is not None:
            self.connection.set_pipeline(self.index.p4info, bmv2_json)
        # Defaults first, in their own batch: a P4Runtime server may reorder a batch.
        modifies = [u for u in updates if u.type == MODIFY]
        inserts = [u for u in updates if u.type == INSERT]
        for batch in (modifies, inserts):
            if batch:
                self.connection.write(batch)
        if plan is not None:
            for warning in plan.warnings:
                self.warn(warning)
            if self.tm is not None:
                for line in plan.commands:
                    self.tm(line)
        return len(updates)

    def _p4_table(self, table: str, port: int) -> None:
        """Refuses a live change of a table the TNA port leaves to the TM."""
        if self.tofino and table in TM_TABLES:
            raise ConfigError([f"ports.{port}: {table} is Tofino TM configuration on this TNA "
                               "program, not a P4 table: change the config and apply "
                               "`bufferlab-ctl tm CONFIG | bufferlab-switch-cli`"])

    def entries(self, table: str) -> list[p4runtime_pb2.TableEntry]:
        """Every entry of a table (not its default entry), as the switch reports them."""
        request = p4runtime_pb2.TableEntry(table_id=self.index.get("table", table).preamble.id)
        return [e.table_entry for e in self.connection.read(entity(request))]

    def default_entry(self, table: str) -> p4runtime_pb2.TableEntry | None:
        """A table's default entry as the switch reports it."""
        request = p4runtime_pb2.TableEntry(table_id=self.index.get("table", table).preamble.id,
                                           is_default_action=True)
        found = [e.table_entry for e in self.connection.read(entity(request))]
        return found[0] if found else None

    def _port_entries(self, table: str, port: int, queue: int | None = None
                      ) -> list[p4runtime_pb2.TableEntry]:
        found = []
        for entry in self.entries(table):
            match = entry_match(self.index, entry)
            if match.get("port") == port and (queue is None or match.get("queue") == queue):
                found.append(entry)
        if not found:
            which = f"port {port}" + (f" queue {queue}" if queue is not None else "")
            raise ConfigError([f"ports.{port}: {which} has no {table} entry (add the port to"
                               " the config's ports and apply it)"])
        return found

    def set_threshold(self, port: int, threshold: Threshold) -> None:
        """A port's share of the pool (static percent or dynamic alpha, see `port_threshold`)."""
        self._p4_table("buffer_threshold", port)
        self._port_entries("buffer_threshold", port)
        self.connection.write([threshold_update(self.index, port, threshold)])

    def set_queue_cap(self, port: int, queue: int, cap_bytes: int | None) -> None:
        """Byte cap of one (port, queue); None removes it."""
        if cap_bytes is not None and not 1 <= cap_bytes <= NO_CAP:
            raise ConfigError([f"ports.{port}.queue_caps_bytes.{queue}: {cap_bytes} is outside"
                               f" 1..{NO_CAP}"])
        self._p4_table("queue_threshold", port)
        self._port_entries("queue_threshold", port, queue)
        self.connection.write([queue_cap_update(self.index, port, queue, cap_bytes)])

    def set_ecn_k(self, port: int, queue: int, k_bytes: int | None) -> None:
        """ECN marking threshold K of one (port, queue), bytes; None turns marking off."""
        if k_bytes is not None and not 0 <= k_bytes <= NO_CAP:
            raise ConfigError([f"ports.{port}.ecn_k_bytes: {k_bytes} is outside 0..{NO_CAP}"])
        self._port_entries("ecn_threshold", port, queue)
        self.connection.write([ecn_update(self.index, port, queue, k_bytes)])

    def set_bcn(self, port: int, changes: dict[str, Any], queue: int | None = None) -> int:
        """Change BCN parameters of a port's queues (or one queue); returns entries changed.

        What the congestion point sends (fb_bits, fb_range_bytes, positive_to) goes to
        bcn_feedback: an entry where the queue differs from the switch-wide default, none
        where it does not; a range the switch holds stays unless changed or fb_bits is off.
        """
        feedback = any(key in changes for key in FEEDBACK_KEYS)
        if feedback:
            default = self.default_entry("bcn_feedback")
            switch_default = (entry_action(self.index, default) if default is not None
                              else DEFAULT_FEEDBACK)
            present = {entry_match(self.index, e)["queue"]: e
                       for e in self.entries("bcn_feedback")
                       if entry_match(self.index, e)["port"] == port}
        updates: list[p4runtime_pb2.Update] = []
        inserts: list[p4runtime_pb2.Update] = []
        for entry in self._port_entries("bcn_config", port, queue):
            current = bcn_of(*entry_action(self.index, entry))
            entry_queue = entry_match(self.index, entry)["queue"]
            if not feedback:
                updates.append(bcn_update(self.index, port, entry_queue, current, changes))
                continue
            held = present.get(entry_queue)
            current.update(feedback_of(*(entry_action(self.index, held) if held is not None
                                         else switch_default)))
            if "fb_bits" in changes and changes["fb_bits"] is None:
                current.pop("fb_range_bytes", None)
            bcn = bcn_section({**current, **changes}, f"ports.{port}.bcn")
            updates.append(_update(MODIFY, _entry(self.index, "bcn_config",
                                                  {"port": port, "queue": entry_queue},
                                                  bcn.action())))
            write = feedback_update(self.index, port, entry_queue, bcn, switch_default,
                                    held is not None)
            if write is not None:
                updates.append(write)
            if self.tofino:
                # The port quantises by table: the queue's entries go, its new ones follow.
                updates += [_update(DELETE, entity(e)) for e in self.entries("bcn_quantise")
                            if entry_match(self.index, e)["port"] == port
                            and entry_match(self.index, e)["queue"] == entry_queue]
                inserts += quantise_inserts(self.index, port, entry_queue, bcn)
        self.connection.write(updates)
        # After the deletes: a server may reorder one batch.
        if inserts:
            self.connection.write(inserts)
        return len(updates) + len(inserts)

    def set_pause(self, port: int, changes: dict[str, Any]) -> None:
        """Change PAUSE/PFC parameters of a port."""
        self._p4_table("pause_config", port)
        (entry,) = self._port_entries("pause_config", port)
        current = pause_of(*entry_action(self.index, entry))
        self.connection.write([pause_update(self.index, port, current, changes)])
