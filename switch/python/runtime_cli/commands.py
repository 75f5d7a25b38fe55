"""simple_switch_CLI command syntax: one line of text into a `Command`.

The parser is purely syntactic so that anything reading simple_switch_CLI
lines (the runtime CLI, the STF runner) can use it without a loaded program:
it checks the command name, the argument count and the shape of every
argument (integers, rates, match keys, action data), and leaves names and
widths to whoever applies the command to a program.
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


class CommandError(Exception):
    """A line that is not a well-formed command; `str()` is the message for the user."""

    def __init__(self, message: str, usage: str | None = None) -> None:
        """Message without the `Error: ` prefix, and the usage line to show with it."""
        super().__init__(message)
        self.message = message
        self.usage = usage

    def __str__(self) -> str:
        """BMv2-style `Error: …` text, followed by the usage when there is one."""
        text = f"Error: {self.message}"
        return f"{text}\nUsage: {self.usage}" if self.usage else text


@dataclass(frozen=True)
class Number:
    """A value as typed (decimal, 0x hex, 0b binary, IPv4, IPv6 or MAC) and its integer."""

    value: int
    text: str


@dataclass(frozen=True)
class Key:
    """One match-key field: `value`, `lpm` (v/len), `ternary` (v&&&mask), `range` (lo->hi) or `any` (*)."""

    form: str
    a: Number | None
    b: Number | None
    text: str


@dataclass(frozen=True)
class Command:
    """A parsed command: its BMv2 name and its arguments by name."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


def parse_number(text: str) -> Number:
    """Parses a decimal, 0x/0b/0o, IPv4, IPv6 or MAC value (non-negative)."""
    t = text.strip()
    if t.count(".") == 3:
        try:
            return Number(int(ipaddress.IPv4Address(t)), text)
        except ValueError:
            raise CommandError(f"Invalid IPv4 address '{text}'") from None
    parts = t.replace("-", ":").split(":")
    if len(parts) == 6 and all(1 <= len(p) <= 2 for p in parts):
        try:
            return Number(int("".join(p.zfill(2) for p in parts), 16), text)
        except ValueError:
            raise CommandError(f"Invalid MAC address '{text}'") from None
    if ":" in t:
        try:
            return Number(int(ipaddress.IPv6Address(t)), text)
        except ValueError:
            raise CommandError(f"Invalid IPv6 address '{text}'") from None
    try:
        v = int(t, 0)
    except ValueError:
        raise CommandError(
            f"Invalid input '{text}', could not cast to integer, try in hex with 0x prefix"
        ) from None
    if v < 0:
        raise CommandError(f"Invalid input '{text}': values are non-negative")
    return Number(v, text)


def parse_key(text: str) -> Key:
    """Parses one match field: `v`, `v/len`, `v&&&mask`, `lo->hi` or `*`."""
    if text == "*":
        return Key("any", None, None, text)
    if "&&&" in text:
        v, _, m = text.partition("&&&")
        return Key("ternary", parse_number(v), parse_number(m), text)
    if "->" in text:
        lo, _, hi = text.partition("->")
        return Key("range", parse_number(lo), parse_number(hi), text)
    if "/" in text:
        v, _, plen = text.partition("/")
        return Key("lpm", parse_number(v), _int(plen, "prefix length"), text)
    return Key("value", parse_number(text), None, text)


def _int(text: str, what: str) -> Number:
    try:
        v = int(text, 0)
    except ValueError:
        raise CommandError(f"Bad format for {what}, expected integer (got '{text}')") from None
    if v < 0:
        raise CommandError(f"Bad format for {what}, expected a non-negative integer (got '{text}')")
    return Number(v, text)


_SI = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def _bits_per_s(text: str, what: str) -> int:
    t = text.removesuffix("bps").removesuffix("bit/s")
    scale = _SI.get(t[-1:], 1) if t else 1
    digits = t[:-1] if scale != 1 else t
    try:
        v = float(digits) * scale
    except ValueError:
        raise CommandError(f"Bad format for {what}: '{text}' is not a rate in bit/s (e.g. 10000000 or 10M)") from None
    if v < 0:
        raise CommandError(f"Bad format for {what}: rates are non-negative bit/s")
    return round(v)


def _rate(text: str, what: str) -> tuple[float, int]:
    rate, sep, burst = text.partition(":")
    try:
        if not sep:
            raise ValueError
        r, b = float(rate), int(burst, 0)
    except ValueError:
        raise CommandError(
            f"Error while parsing rates: '{text}' is not <rate>:<burst> "
            "(rate in units per microsecond, burst in units; units are the meter's packets or bytes)"
        ) from None
    if r < 0 or b < 0:
        raise CommandError(f"Error while parsing rates: '{text}' has a negative rate or burst")
    return r, b


def _bool(text: str, what: str) -> bool:
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    try:
        return bool(int(text, 0))
    except ValueError:
        raise CommandError(f"Invalid bool parameter for {what}: '{text}' (true, false, 1 or 0)") from None


# Argument types: each turns one token into a value, or raises CommandError.
NAME = "name"
INT = "int"
NUMBER = "number"
RATE = "rate"
BPS = "bps"
BOOL = "bool"

_CONVERT: dict[str, Callable[[str, str], Any]] = {
    NAME: lambda t, _w: t,
    INT: lambda t, w: _int(t, w).value,
    NUMBER: lambda t, _w: parse_number(t),
    RATE: _rate,
    BPS: _bits_per_s,
    BOOL: _bool,
}


@dataclass(frozen=True)
class Arg:
    """One positional argument: its name (with unit), its type, and whether it may be left out or repeated."""

    name: str
    kind: str = INT
    optional: bool = False
    variadic: bool = False


@dataclass(frozen=True)
class Spec:
    """A command: its name, its arguments or its own parse function, its usage and help."""

    name: str
    help: str
    args: tuple[Arg, ...] = ()
    usage_text: str | None = None
    parse: Callable[[Spec, list[str]], dict[str, Any]] | None = None

    @property
    def usage(self) -> str:
        """The usage line, e.g. `mirroring_add <mirror_id> <egress_port>`."""
        if self.usage_text is not None:
            return f"{self.name} {self.usage_text}".rstrip()
        parts, nested = [], 0
        for a in self.args:
            p = f"<{a.name}>" + (" ..." if a.variadic else "")
            if a.optional:
                # Later optional arguments need the earlier ones: `[<port> [<priority>]]`.
                p, nested = f"[{p}", nested + 1
            parts.append(p)
        return " ".join([self.name, *parts]) + "]" * nested


def _positional(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    required = sum(1 for a in spec.args if not a.optional and not a.variadic)
    variadic = any(a.variadic for a in spec.args)
    if len(tokens) < required:
        raise CommandError(
            f"Insufficient number of args, expected at least {required} but got {len(tokens)}"
            if variadic or required < len(spec.args)
            else f"Wrong number of args, expected {required} but got {len(tokens)}",
            spec.usage,
        )
    if not variadic and len(tokens) > len(spec.args):
        expected = str(len(spec.args)) if required == len(spec.args) else f"at most {len(spec.args)}"
        raise CommandError(f"Wrong number of args, expected {expected} but got {len(tokens)}", spec.usage)
    out: dict[str, Any] = {}
    rest = list(tokens)
    for a in spec.args:
        if a.variadic:
            out[a.name] = [_convert(a, t, spec) for t in rest]
            rest = []
        elif rest:
            out[a.name] = _convert(a, rest.pop(0), spec)
        else:
            out[a.name] = None
    return out


def _convert(a: Arg, token: str, spec: Spec) -> Any:
    try:
        return _CONVERT[a.kind](token, a.name)
    except CommandError as e:
        raise CommandError(e.message, spec.usage) from None


def _split_arrow(spec: Spec, tokens: list[str], first: int) -> tuple[list[str], list[str]]:
    """Splits tokens[first:] at `=>` into match fields and what follows."""
    body = tokens[first:]
    if "=>" not in body:
        raise CommandError("Missing '=>' between the match fields and the action data", spec.usage)
    i = body.index("=>")
    return body[:i], body[i + 1 :]


def _keys(spec: Spec, texts: list[str]) -> list[Key]:
    try:
        return [parse_key(t) for t in texts]
    except CommandError as e:
        raise CommandError(f"Invalid match key: {e.message}", spec.usage) from None


def _numbers(spec: Spec, texts: list[str]) -> list[Number]:
    try:
        return [parse_number(t) for t in texts]
    except CommandError as e:
        raise CommandError(f"Invalid runtime data: {e.message}", spec.usage) from None


def _parse_table_add(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if len(tokens) < 3:
        raise CommandError(f"Insufficient number of args, expected at least 3 but got {len(tokens)}", spec.usage)
    keys, after = _split_arrow(spec, tokens, 2)
    # The trailing priority cannot be told from an action parameter without the
    # program, so it stays in `params`; the executor splits it off.
    return {"table": tokens[0], "action": tokens[1], "keys": _keys(spec, keys), "params": _numbers(spec, after)}


def _parse_indirect_add(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if len(tokens) < 3:
        raise CommandError(f"Insufficient number of args, expected at least 3 but got {len(tokens)}", spec.usage)
    keys, after = _split_arrow(spec, tokens, 1)
    if len(after) not in (1, 2):
        raise CommandError("Invalid arguments, expected one handle and an optional priority after '=>'", spec.usage)
    what = "group handle" if spec.name.endswith("group") else "member handle"
    return {
        "table": tokens[0],
        "keys": _keys(spec, keys),
        "handle": _convert(Arg(what), after[0], spec),
        "priority": _convert(Arg("priority"), after[1], spec) if len(after) == 2 else None,
    }


def _parse_action_call(spec: Spec, tokens: list[str], handle_name: str | None) -> dict[str, Any]:
    """`<owner> <action> [<handle>] [=>] [params]`: table_modify, act_prof_*_member, table_set_default."""
    need = 3 if handle_name else 2
    if len(tokens) < need:
        raise CommandError(f"Insufficient number of args, expected at least {need} but got {len(tokens)}", spec.usage)
    out: dict[str, Any] = {"owner": tokens[0], "action": tokens[1]}
    rest = tokens[2:]
    if handle_name:
        out["handle"] = _convert(Arg(handle_name), rest.pop(0), spec)
    if rest[:1] == ["=>"]:
        rest = rest[1:]
    out["params"] = _numbers(spec, rest)
    return out


def _parse_entry_from_key(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if not tokens:
        raise CommandError("Insufficient number of args, expected at least 1 but got 0", spec.usage)
    # A trailing priority parses as a plain value; the executor takes it off
    # for tables whose entries have priorities.
    return {"table": tokens[0], "keys": _keys(spec, tokens[1:])}


def _parse_node_ports(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if not tokens:
        raise CommandError("Insufficient number of args, expected at least 1 but got 0", spec.usage)
    first = "rid" if spec.name == "mc_node_create" else "node_handle"
    ports_text = tokens[1:]
    lags: list[int] = []
    if "|" in ports_text:
        i = ports_text.index("|")
        lags = [_convert(Arg("lag"), t, spec) for t in ports_text[i + 1 :]]
        ports_text = ports_text[:i]
    ports = []
    for t in ports_text:
        p = _convert(Arg("port"), t, spec)
        if p in ports:
            raise CommandError(f"Found duplicate port number '{p}'", spec.usage)
        ports.append(p)
    return {first: _convert(Arg(first), tokens[0], spec), "ports": sorted(ports), "lags": lags}


def _parse_threshold(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if len(tokens) < 2:
        raise CommandError(f"Insufficient number of args, expected at least 2 but got {len(tokens)}", spec.usage)
    port = _convert(Arg("port"), tokens[0], spec)
    rest = tokens[1:]
    if rest == ["none"]:
        return {"port": port, "threshold": ("none", None, None)}
    if len(rest) == 2 and rest[0] == "alpha":
        num, sep, den = rest[1].partition("/")
        n = _convert(Arg("alpha numerator"), num, spec)
        d = _convert(Arg("alpha denominator"), den, spec) if sep else 1
        if d == 0:
            raise CommandError("alpha denominator must be at least 1", spec.usage)
        return {"port": port, "threshold": ("dynamic", n, d)}
    if len(rest) == 1 and rest[0].endswith("%"):
        p = _convert(Arg("percent of pool"), rest[0][:-1], spec)
        if not 1 <= p <= 100:
            raise CommandError(f"percent of pool must be 1..100, got {p}", spec.usage)
        return {"port": port, "threshold": ("percent_of_pool", p, None)}
    if len(rest) == 1:
        return {"port": port, "threshold": ("static_bytes", _convert(Arg("threshold_bytes"), rest[0], spec), None)}
    raise CommandError(f"Wrong number of args, expected 2 or 3 but got {len(tokens)}", spec.usage)


def _parse_scheduler(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if len(tokens) < 2:
        raise CommandError(f"Insufficient number of args, expected at least 2 but got {len(tokens)}", spec.usage)
    port = _convert(Arg("port"), tokens[0], spec)
    mode, quanta = tokens[1], tokens[2:]
    if mode == "strict":
        if quanta:
            raise CommandError(f"strict takes no quanta, got {len(quanta)}", spec.usage)
        return {"port": port, "quantum_bytes": None}
    if mode != "drr":
        raise CommandError(f"Unknown scheduling '{mode}': write strict, or drr and one quantum per queue", spec.usage)
    if not 1 <= len(quanta) <= 8:
        raise CommandError(f"drr takes one quantum per queue (1 to 8), got {len(quanta)}", spec.usage)
    values = [_convert(Arg("quantum_bytes"), t, spec) for t in quanta]
    if 0 in values:
        raise CommandError(f"DRR quanta must be at least 1 byte (queue {values.index(0)} has 0)", spec.usage)
    return {"port": port, "quantum_bytes": values}


_TABLE = (Arg("table_name", NAME),)
_PROF = (Arg("act_prof_name", NAME),)

SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec("show_tables", "List tables defined in the P4 program"),
        Spec("show_actions", "List actions defined in the P4 program"),
        Spec("show_pvs", "List parser value sets defined in the P4 program"),
        Spec("table_info", "Show a table's keys (match kind, width in bits) and actions", _TABLE),
        Spec("table_show_actions", "List one table's actions with their parameters (width in bits)", _TABLE),
        Spec("table_num_entries", "Number of entries in a match table (direct or indirect)", _TABLE),
        Spec("table_clear", "Delete all entries of a match table, keeping the default entry", _TABLE),
        Spec("table_dump", "Display the entries, members, groups and default entry of a table", _TABLE),
        Spec("table_dump_entry", "Display one table entry", (*_TABLE, Arg("entry_handle"))),
        Spec("table_delete", "Delete an entry from a match table", (*_TABLE, Arg("entry_handle"))),
        Spec("table_indirect_delete", "Delete an entry from an indirect match table", (*_TABLE, Arg("entry_handle"))),
        Spec("table_reset_default", "Restore the program's default action of a table", _TABLE),
        Spec(
            "table_dump_entry_from_key",
            "Display the entry with this key (and priority, for ternary, range or optional tables)",
            usage_text="<table name> <match fields> [priority]",
            parse=_parse_entry_from_key,
        ),
        Spec(
            "table_add",
            "Add an entry: match fields exact v, lpm v/len, ternary v&&&mask, range lo->hi, optional v or *; "
            "values decimal, 0x hex, IPv4, IPv6 or MAC; ternary/range/optional tables need a priority "
            "(lower number wins)",
            usage_text="<table name> <action name> <match fields> => <action parameters> [priority]",
            parse=_parse_table_add,
        ),
        Spec(
            "table_set_default",
            "Set the default (miss) action of a table",
            usage_text="<table name> <action name> <action parameters>",
            parse=lambda s, t: _parse_action_call(s, t, None),
        ),
        Spec(
            "table_modify",
            "Change the action and action data of an entry",
            usage_text="<table name> <action name> <entry handle> [action parameters]",
            parse=lambda s, t: _parse_action_call(s, t, "entry handle"),
        ),
        Spec(
            "table_indirect_add",
            "Add an entry of an indirect table pointing at an action profile member",
            usage_text="<table name> <match fields> => <member handle> [priority]",
            parse=_parse_indirect_add,
        ),
        Spec(
            "table_indirect_add_with_group",
            "Add an entry of an indirect table pointing at an action selector group",
            usage_text="<table name> <match fields> => <group handle> [priority]",
            parse=_parse_indirect_add,
        ),
        Spec(
            "table_indirect_modify",
            "Point an entry of an indirect table at another action profile member",
            (*_TABLE, Arg("entry_handle"), Arg("member_handle")),
        ),
        Spec(
            "table_indirect_modify_with_group",
            "Point an entry of an indirect table at another action selector group",
            (*_TABLE, Arg("entry_handle"), Arg("group_handle")),
        ),
        Spec(
            "act_prof_create_member",
            "Add a member to an action profile; prints its handle",
            usage_text="<action profile name> <action_name> [action parameters]",
            parse=lambda s, t: _parse_action_call(s, t, None),
        ),
        Spec(
            "act_prof_modify_member",
            "Change a member's action and action data",
            usage_text="<action profile name> <action_name> <member_handle> [action parameters]",
            parse=lambda s, t: _parse_action_call(s, t, "member handle"),
        ),
        Spec("act_prof_delete_member", "Delete a member of an action profile", (*_PROF, Arg("member_handle"))),
        Spec("act_prof_create_group", "Add an empty group to an action selector; prints its handle", _PROF),
        Spec("act_prof_delete_group", "Delete a group of an action selector", (*_PROF, Arg("group_handle"))),
        Spec(
            "act_prof_add_member_to_group",
            "Add a member to a group of an action selector",
            (*_PROF, Arg("member_handle"), Arg("group_handle")),
        ),
        Spec(
            "act_prof_remove_member_from_group",
            "Remove a member from a group of an action selector",
            (*_PROF, Arg("member_handle"), Arg("group_handle")),
        ),
        Spec("act_prof_dump", "Display the members and groups of an action profile", _PROF),
        Spec("act_prof_dump_member", "Display one member of an action profile", (*_PROF, Arg("member_handle"))),
        Spec("act_prof_dump_group", "Display one group of an action selector", (*_PROF, Arg("group_handle"))),
        Spec("counter_read", "Read a counter cell (packets and bytes); for a direct counter the index is the entry handle",
             (Arg("name", NAME), Arg("index"))),
        Spec(
            "counter_write",
            "Write a counter cell: packets, bytes",
            (Arg("name", NAME), Arg("index"), Arg("packets"), Arg("bytes")),
        ),
        Spec("counter_reset", "Zero every cell of a counter array", (Arg("name", NAME),)),
        Spec("register_read", "Read a register cell, or the whole array without an index",
             (Arg("name", NAME), Arg("index", optional=True))),
        Spec("register_write", "Write a register cell", (Arg("name", NAME), Arg("index"), Arg("value", NUMBER))),
        Spec("register_reset", "Zero every cell of a register array", (Arg("name", NAME),)),
        Spec(
            "meter_array_set_rates",
            "Configure every cell of a meter array; rate in units per microsecond, burst in units "
            "(units: the meter's packets or bytes); committed rate first, then peak",
            usage_text="<name> <rate_1>:<burst_1> <rate_2>:<burst_2>",
            args=(Arg("name", NAME), Arg("rates", RATE, variadic=True)),
        ),
        Spec(
            "meter_set_rates",
            "Configure one meter cell (for a direct meter the index is the entry handle); rate in units "
            "per microsecond, burst in units (packets or bytes); committed rate first, then peak",
            usage_text="<name> <index> <rate_1>:<burst_1> <rate_2>:<burst_2>",
            args=(Arg("name", NAME), Arg("index"), Arg("rates", RATE, variadic=True)),
        ),
        Spec("meter_get_rates", "Show a meter cell's rates (units per microsecond) and bursts (units)",
             (Arg("name", NAME), Arg("index"))),
        Spec("mirroring_add", "Add (or replace) a clone session sending to a port",
             (Arg("mirror_id"), Arg("egress_port"))),
        Spec("mirroring_add_mc", "Add (or replace) a clone session sending to a multicast group",
             (Arg("mirror_id"), Arg("mgrp"))),
        Spec("mirroring_delete", "Delete a clone session", (Arg("mirror_id"),)),
        Spec("mirroring_get", "Display a clone session", (Arg("mirror_id"),)),
        Spec("mc_mgrp_create", "Create a multicast group", (Arg("group_id"),)),
        Spec("mc_mgrp_destroy", "Destroy a multicast group", (Arg("group_id"),)),
        Spec(
            "mc_node_create",
            "Create a multicast node (replication id and ports); prints its handle",
            usage_text="<rid> <space-separated port list> [ | <space-separated lag list> ]",
            parse=_parse_node_ports,
        ),
        Spec(
            "mc_node_update",
            "Replace the ports of a multicast node",
            usage_text="<node handle> <space-separated port list> [ | <space-separated lag list> ]",
            parse=_parse_node_ports,
        ),
        Spec("mc_node_associate", "Add a node to a multicast group", (Arg("group_handle"), Arg("node_handle"))),
        Spec("mc_node_dissociate", "Remove a node from a multicast group", (Arg("group_handle"), Arg("node_handle"))),
        Spec("mc_node_destroy", "Destroy a multicast node", (Arg("node_handle"),)),
        Spec("mc_dump", "Display the multicast groups and their nodes"),
        Spec(
            "set_queue_depth",
            "Set the depth in packets of every egress queue, of a port's queues, or of one priority queue",
            (Arg("nb_pkts"), Arg("egress_port", optional=True), Arg("priority", optional=True)),
        ),
        Spec(
            "set_queue_rate",
            "Set the departure rate in packets per second of every egress queue, of a port's queues, "
            "or of one priority queue (0 = unlimited)",
            (Arg("rate_pps"), Arg("egress_port", optional=True), Arg("priority", optional=True)),
        ),
        Spec(
            "set_all_queue_depth",
            "Set the depth in packets of the egress queues of every port (with a priority: that queue of every port)",
            (Arg("nb_pkts"), Arg("priority", optional=True)),
        ),
        Spec(
            "set_all_queue_rate",
            "Set the departure rate in packets per second of the egress queues of every port "
            "(with a priority: that queue of every port; 0 = unlimited)",
            (Arg("rate_pps"), Arg("priority", optional=True)),
        ),
        Spec("pvs_add", "Add a value to a parser value set", (Arg("pvs_name", NAME), Arg("value", NUMBER))),
        Spec("pvs_remove", "Remove a value from a parser value set", (Arg("pvs_name", NAME), Arg("value", NUMBER))),
        Spec("pvs_get", "Print the values of a parser value set", (Arg("pvs_name", NAME),)),
        Spec("pvs_clear", "Remove every value of a parser value set", (Arg("pvs_name", NAME),)),
        Spec("get_time_elapsed", "Time since the switch started, in microseconds"),
        *(
            Spec(
                f"set_crc{w}_parameters",
                f"Change the parameters of the program's crc{w}_custom hash",
                (Arg("name", NAME), Arg("polynomial"), Arg("initial remainder"), Arg("final xor value"),
                 Arg("reflect data?", BOOL), Arg("reflect remainder?", BOOL)),
            )
            for w in (16, 32)
        ),
        Spec(
            "set_port_rate",
            "Set a port's shaper rate in bit/s, counting wire overhead (0 = unlimited; k/M/G suffixes allowed)",
            (Arg("port"), Arg("bits_per_s", BPS)),
        ),
        Spec("set_port_delay", "Set a port's propagation delay in nanoseconds", (Arg("port"), Arg("delay_ns"))),
        Spec(
            "set_port_overhead",
            "Set the wire overhead in bytes added to each frame by a port's shaper "
            "(default 24: preamble 8 + inter-frame gap 12 + FCS 4)",
            (Arg("port"), Arg("overhead_bytes")),
        ),
        Spec("set_pool_size", "Set the shared buffer pool size in bytes", (Arg("pool_bytes"),)),
        Spec(
            "set_port_threshold",
            "Set a port's share of the shared pool: static bytes, a percentage of the pool, "
            "a dynamic threshold alpha*(pool - used) with alpha = N/D, or none",
            usage_text="<port> (<bytes> | <percent>% | alpha <N>/<D> | none)",
            parse=_parse_threshold,
        ),
        Spec(
            "set_port_scheduler",
            "Set how a port's queues share it: strict priority (highest queue first), or deficit round "
            "robin with one quantum in bytes per queue, queue 0 first (byte shares follow the quanta)",
            usage_text="<port> (strict | drr <quantum_bytes> ...)",
            parse=_parse_scheduler,
        ),
        Spec(
            "show_port_counters",
            "Show ports' live counters (frames received, sent and lost outside the traffic manager: "
            "kernel receive drops, oversize, transmit drops), each queue's frames enqueued, dequeued "
            "and dropped, and the switch's drop counters",
            (Arg("port", variadic=True),),
            usage_text="[<port> ...]",
        ),
        Spec(
            "show_ports",
            "Show port settings (rate bit/s, overhead bytes, delay ns, queues, depths packets, rates pps, "
            "threshold) and occupancy bytes",
            (Arg("port", variadic=True),),
            usage_text="[<port> ...]",
        ),
        Spec("help", "List commands, or show one command's usage", (Arg("command", NAME, optional=True),)),
    )
}


def parse_command(line: str) -> Command | None:
    """Parses one simple_switch_CLI line; None for a blank line or a `#` comment."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError as e:
        raise CommandError(f"Cannot split the line into words: {e}") from None
    if not tokens:
        return None
    name, rest = tokens[0], tokens[1:]
    spec = SPECS.get(name)
    if spec is None:
        raise CommandError(f"Unknown command '{name}' (type 'help' for the list of commands)")
    args = spec.parse(spec, rest) if spec.parse else _positional(spec, rest)
    return Command(name, args)


def command_names() -> Sequence[str]:
    """Every command name, sorted."""
    return sorted(SPECS)
