"""Applies simple_switch_CLI commands to an engine and answers as BMv2's CLI prints.

The engine's API is keyed by names and ids chosen by the caller; BMv2's CLI
gets handles from the switch instead (members, groups, multicast nodes). The
executor allocates the lowest handle free in the engine, and it remembers the
PRE's nodes and which group holds them so that every change can be written to
the engine as a group's full replica list. Everything it shows (entries,
members, groups, multicast groups, value sets, meters) is read back from the
engine, so what another client (P4Runtime) wrote shows too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bufferlab.switch.engine import (
    AlreadyExistsError,
    Engine,
    EngineError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
)
from bufferlab.switch.runtime_cli.commands import (
    SPECS,
    Command,
    CommandError,
    Key,
    Number,
    command_names,
    parse_command,
)
from bufferlab.switch.runtime_cli.program import ActionInfo, ProgramInfo, TableInfo
from bufferlab.switch.runtime_cli.tm_commands import TofinoTmCommands


@dataclass(frozen=True)
class Answer:
    """What a command printed, and whether it succeeded."""

    text: str
    ok: bool


class OperationError(Exception):
    """A refused operation, reported as BMv2 does: `Invalid <family> operation (<CODE>)`."""

    def __init__(self, code: str, detail: str) -> None:
        """The BMv2 error code name and our explanation."""
        super().__init__(detail)
        self.code = code
        self.detail = detail


# BMv2's error families and the code each engine error maps to; a command may
# override a code (e.g. a missing member is INVALID_MBR_HANDLE, not INVALID_HANDLE).
_FAMILIES: dict[str, tuple[str, dict[type, str]]] = {
    "table": (
        "table",
        {
            NotFoundError: "INVALID_HANDLE",
            AlreadyExistsError: "DUPLICATE_ENTRY",
            ResourceExhaustedError: "TABLE_FULL",
            PermissionDeniedError: "IMMUTABLE_TABLE_ENTRY",
            FailedPreconditionError: "ERROR",
            InvalidArgumentError: "BAD_MATCH_KEY",
            OutOfRangeError: "INVALID_HANDLE",
        },
    ),
    "counter": ("counter", {OutOfRangeError: "INVALID_INDEX", NotFoundError: "INVALID_COUNTER_NAME"}),
    "register": ("register", {OutOfRangeError: "INVALID_INDEX"}),
    "meter": ("meter", {OutOfRangeError: "INVALID_INDEX", NotFoundError: "INVALID_INDEX", InvalidArgumentError: "BAD_RATES_LIST"}),
    "mirroring": ("mirroring", {NotFoundError: "SESSION_NOT_FOUND"}),
    "mc": ("PRE", {NotFoundError: "INVALID_MGID", InvalidArgumentError: "INVALID_MGID"}),
    "pvs": ("parser value set", {ResourceExhaustedError: "FULL", NotFoundError: "INVALID_PVS_NAME"}),
    "crc": ("crc", {}),
    "port": ("port", {}),
}

_OVERRIDES: dict[str, dict[type, str]] = {
    "table_set_default": {PermissionDeniedError: "DEFAULT_ACTION_IS_CONST", InvalidArgumentError: "ERROR"},
    "table_reset_default": {PermissionDeniedError: "DEFAULT_ACTION_IS_CONST"},
    "table_modify": {InvalidArgumentError: "ERROR"},
    "table_indirect_add": {NotFoundError: "INVALID_MBR_HANDLE"},
    "table_indirect_add_with_group": {NotFoundError: "INVALID_GRP_HANDLE", FailedPreconditionError: "EMPTY_GRP"},
    "table_indirect_modify": {NotFoundError: "INVALID_MBR_HANDLE"},
    "table_indirect_modify_with_group": {NotFoundError: "INVALID_GRP_HANDLE"},
    "act_prof_create_member": {InvalidArgumentError: "ERROR"},
    "act_prof_modify_member": {NotFoundError: "INVALID_MBR_HANDLE", InvalidArgumentError: "ERROR"},
    "act_prof_delete_member": {NotFoundError: "INVALID_MBR_HANDLE", FailedPreconditionError: "MBR_STILL_USED"},
    "act_prof_delete_group": {NotFoundError: "INVALID_GRP_HANDLE", FailedPreconditionError: "GRP_STILL_USED"},
    "act_prof_add_member_to_group": {NotFoundError: "INVALID_MBR_HANDLE"},
    "act_prof_remove_member_from_group": {NotFoundError: "INVALID_MBR_HANDLE"},
}


def _family(command: str) -> str:
    for prefix, fam in (
        ("table", "table"), ("act_prof", "table"), ("counter", "counter"), ("register", "register"),
        ("meter", "meter"), ("mirroring", "mirroring"), ("mc_", "mc"), ("pvs", "pvs"), ("set_crc", "crc"),
    ):
        if command.startswith(prefix):
            return fam
    return "port"


def _byte_len(width: int) -> int:
    return max(1, (width + 7) // 8)


def _colon_hex(value: int, width: int) -> str:
    """BMv2's `printable_byte_str`: bytes of the field as `0a:00:01:01`."""
    return ":".join(f"{b:02x}" for b in value.to_bytes(_byte_len(width), "big"))


def _hexstr(value: int, width: int) -> str:
    """BMv2's `hexstr`: bytes of the field as `0a000101`."""
    return value.to_bytes(_byte_len(width), "big").hex()


def _fit(n: Number, width: int, what: str) -> int:
    if n.value >> width:
        raise CommandError(f"Error while parsing {n.text} - value does not fit in {width} bits ({what})")
    return n.value


@dataclass
class _McNode:
    rid: int
    ports: list[int]
    group: int | None = None


class Executor(TofinoTmCommands):
    """Runs simple_switch_CLI commands against one engine and its BMv2 JSON."""

    def __init__(
        self,
        engine: Engine,
        json_text: str,
        ports: Iterable[int] = (),
        live_counters: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        """`ports` are the switch's attached port numbers (listed by `show_ports`);
        `live_counters` gives the live ports' counters (one dict per port) where frames move
        between real interfaces, for `show_port_counters`."""
        self.engine = engine
        self._live_counters = live_counters
        self.program = ProgramInfo.from_json(json_text)
        self._ports: set[int] = set(ports)
        self._mc_groups: dict[int, list[int]] = {}
        self._mc_nodes: dict[int, _McNode] = {}
        self._handlers: dict[str, Callable[[dict[str, Any], list[str]], None]] = {
            name: getattr(self, f"_do_{name}") for name in SPECS
        }

    def execute(self, line: str) -> Answer:
        """Parses and runs one line; blank lines and comments succeed with no output."""
        try:
            command = parse_command(line)
        except CommandError as e:
            return Answer(str(e), False)
        if command is None:
            return Answer("", True)
        return self.run(command)

    def run(self, command: Command) -> Answer:
        """Runs one parsed command; errors become BMv2-style text with `ok=False`."""
        out: list[str] = []
        try:
            self._handlers[command.name](command.args, out)
        except CommandError as e:
            return Answer("\n".join([*out, str(e)]), False)
        except OperationError as e:
            title = _FAMILIES[_family(command.name)][0]
            return Answer("\n".join([*out, f"Invalid {title} operation ({e.code}): {e.detail}"]), False)
        except EngineError as e:
            title, codes = _FAMILIES[_family(command.name)]
            code = _OVERRIDES.get(command.name, {}).get(type(e)) or codes.get(type(e), "ERROR")
            return Answer("\n".join([*out, f"Invalid {title} operation ({code}): {e}"]), False)
        return Answer("\n".join(out), True)

    # -- program information ---------------------------------------------------------------

    def _do_show_tables(self, a: dict[str, Any], out: list[str]) -> None:
        for name in sorted(self.program.tables):
            out.append(self._table_str(self.program.tables[name]))

    def _do_show_actions(self, a: dict[str, Any], out: list[str]) -> None:
        out.extend(self._action_str(self.program.actions[n]) for n in sorted(self.program.actions))

    def _do_show_pvs(self, a: dict[str, Any], out: list[str]) -> None:
        for name in sorted(self.program.value_sets):
            out.append(f"{name:30} [compressed bitwidth:{self.program.value_sets[name].width}]")

    def _do_table_info(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        out.append(self._table_str(t))
        out.append("*" * 80)
        self._do_table_show_actions(a, out)

    def _do_table_show_actions(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        out.extend(self._action_str(self.program.actions[n]) for n in sorted(t.actions))

    def _table_str(self, t: TableInfo) -> str:
        keys = ",\t".join(
            f"{name}({kind}, {width})"
            for name, (_, kind, width) in zip(t.key_names, self.engine.table_keys(t.name), strict=False)
        )
        return f"{t.name:30} [implementation={t.action_profile or 'None'}, mk={keys}]"

    @staticmethod
    def _action_str(act: ActionInfo) -> str:
        params = ",\t".join(f"{n}({w})" for n, w in act.params)
        return f"{act.name:30} [{params}]"

    # -- match tables ----------------------------------------------------------------------

    def _needs_priority(self, t: TableInfo) -> bool:
        kinds = {kind for _, kind, _ in self.engine.table_keys(t.name)}
        return t.match_type in ("ternary", "range") or bool(kinds & {"ternary", "range", "optional"})

    def _match(self, t: TableInfo, keys: Sequence[Key]) -> list[Any]:
        """Match fields in the engine's form, checked against each key's kind and width."""
        spec = self.engine.table_keys(t.name)
        if len(keys) != len(spec):
            raise CommandError(f"Table {t.name} needs {len(spec)} key fields")
        out: list[Any] = []
        for k, (name, kind, width) in zip(keys, spec, strict=True):
            out.append(self._match_field(k, name, kind, width))
        return out

    @staticmethod
    def _match_field(k: Key, name: str, kind: str, width: int) -> Any:
        def bad(hint: str) -> CommandError:
            return CommandError(f"Invalid match key: {k.text} for {kind} key {name}: {hint}")

        if kind == "exact":
            if k.form != "value":
                raise bad("an exact key takes a plain value")
            return _fit(k.a, width, name)
        if kind == "lpm":
            if k.form != "lpm":
                raise bad("use '/' to separate prefix and length, e.g. 10.0.1.0/24")
            if k.b.value > width:
                raise bad(f"prefix length is at most {width}")
            return (_fit(k.a, width, name), k.b.value)
        if kind == "ternary":
            if k.form == "any":
                return (0, 0)
            if k.form != "ternary":
                raise bad("use '&&&' to separate value and mask, e.g. 0x0a000000&&&0xff000000")
            return (_fit(k.a, width, name), _fit(k.b, width, name))
        if kind == "range":
            if k.form != "range":
                raise bad("use '->' to separate range start and end, e.g. 1024->2047")
            lo, hi = _fit(k.a, width, name), _fit(k.b, width, name)
            if lo > hi:
                raise bad("range start is greater than range end")
            return (lo, hi)
        if kind == "optional":
            if k.form == "any":
                return None
            if k.form != "value":
                raise bad("an optional key takes a value or *")
            return _fit(k.a, width, name)
        raise bad(f"match kind {kind} is not supported")

    def _data(self, act: ActionInfo, params: Sequence[Number]) -> list[int]:
        if len(params) != len(act.params):
            raise CommandError(f"Action {act.name} needs {len(act.params)} parameters")
        try:
            return [_fit(p, w, n) for p, (n, w) in zip(params, act.params, strict=True)]
        except CommandError as e:
            raise CommandError(f"Invalid runtime data: {e.message}") from None

    def _print_action(self, out: list[str], act: ActionInfo, data: Sequence[int]) -> None:
        out.append(f"{'action:':20} {act.name}")
        shown = "\t".join(_colon_hex(v, w) for v, (_, w) in zip(data, act.params, strict=True))
        out.append(f"{'runtime data:':20} {shown}".rstrip())

    def _do_table_add(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table"])
        if t.type != "simple":
            raise CommandError(
                f"Table {t.name} is indirect: add members with act_prof_create_member, then entries with "
                "table_indirect_add" + ("_with_group" if t.type == "indirect_ws" else "")
            )
        act = self.program.table_action(t, a["action"])
        params = list(a["params"])
        priority = 0
        if self._needs_priority(t):
            if len(params) != len(act.params) + 1:
                raise CommandError(
                    f"Table {t.name} has ternary, range or optional keys: give the {len(act.params)} "
                    "action parameters, then a priority (lower number wins)"
                )
            priority = params.pop().value
        elif len(params) == len(act.params) + 1:
            raise CommandError(
                f"Action {act.name} needs {len(act.params)} parameters "
                f"(a priority only applies to ternary, range or optional tables; {t.name} is {t.match_type})"
            )
        match = self._match(t, a["keys"])
        data = self._data(act, params)
        out.append(f"Adding entry to {t.match_type} match table {t.name}")
        spec = self.engine.table_keys(t.name)
        out.append(f"{'match key:':20} " + "\t".join(self._key_str(m, s) for m, s in zip(match, spec, strict=True)))
        self._print_action(out, act, data)
        handle = self.engine.table_add(t.name, match, act.name, data, priority)
        out.append(f"Entry has been added with handle {handle}")

    @staticmethod
    def _key_str(m: Any, spec: tuple[str, str, int]) -> str:
        _, kind, w = spec
        if kind == "exact":
            return f"EXACT-{_colon_hex(m, w)}"
        if kind == "lpm":
            return f"LPM-{_colon_hex(m[0], w)}/{m[1]}"
        if kind == "ternary":
            return f"TERNARY-{_colon_hex(m[0], w)} &&& {_colon_hex(m[1], w)}"
        if kind == "range":
            return f"RANGE-{_colon_hex(m[0], w)} -> {_colon_hex(m[1], w)}"
        return "OPTIONAL-*" if m is None else f"OPTIONAL-{_colon_hex(m, w)}"

    def _do_table_set_default(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["owner"])
        act = self.program.table_action(t, a["action"])
        data = self._data(act, a["params"])
        out.append(f"Setting default action of {t.name}")
        self._print_action(out, act, data)
        self.engine.table_set_default(t.name, act.name, data)

    def _do_table_reset_default(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        self.engine.table_reset_default(t.name)

    def _do_table_modify(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["owner"])
        act = self.program.table_action(t, a["action"])
        data = self._data(act, a["params"])
        out.append(f"Modifying entry {a['handle']} for {t.match_type} match table {t.name}")
        self.engine.table_modify(t.name, a["handle"], act.name, data)

    def _do_table_delete(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        out.append(f"Deleting entry {a['entry_handle']} from {t.name}")
        self.engine.table_delete(t.name, a["entry_handle"])

    def _do_table_indirect_delete(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        self._check_indirect(t, False)
        self._do_table_delete(a, out)

    def _do_table_num_entries(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        out.append(str(len(self.engine.table_entries(t.name))))

    def _do_table_clear(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        self.engine.table_clear(t.name)

    def _entry(self, t: TableInfo, handle: int) -> dict[str, Any]:
        for e in self.engine.table_entries(t.name):
            if e["handle"] == handle:
                return e
        raise OperationError("INVALID_HANDLE", f"table {t.name} has no entry with handle {handle}")

    def _dump_entry(self, t: TableInfo, e: dict[str, Any], out: list[str]) -> None:
        spec = self.engine.table_keys(t.name)
        w = max([20, *(len(n) for n in t.key_names)])
        out.append(f"Dumping entry {hex(e['handle'])}")
        out.append("Match key:")
        for name, (kind, x, y), (_, _, width) in zip(t.key_names, e["keys"], spec, strict=False):
            if kind == "exact":
                shown = _hexstr(x, width)
            elif kind == "lpm":
                shown = f"{_hexstr(x, width)}/{y}"
            elif kind == "ternary":
                shown = f"{_hexstr(x, width)} &&& {_hexstr(y, width)}"
            elif kind == "range":
                shown = f"{_hexstr(x, width)} -> {_hexstr(y, width)}"
            else:
                shown = "*" if x is None else _hexstr(x, width)
            out.append(f"* {name:{w}}: {kind.upper():10}{shown}")
        if self._needs_priority(t):
            out.append(f"Priority: {e['priority']}")
        self._dump_action(e, out)

    def _dump_action(self, e: dict[str, Any] | None, out: list[str]) -> None:
        if e is None:
            out.append("EMPTY")
        elif "member" in e:
            out.append(f"Index: member({e['member']})")
        elif "group" in e:
            out.append(f"Index: group({e['group']})")
        else:
            act = self.program.actions[e["action"]]
            data = ", ".join(_hexstr(v, w) for v, (_, w) in zip(e["data"], act.params, strict=True))
            out.append(f"Action entry: {act.name} - {data}")

    def _do_table_dump_entry(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        self._dump_entry(t, self._entry(t, a["entry_handle"]), out)

    def _do_table_dump(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table_name"])
        out += ["==========", "TABLE ENTRIES"]
        for e in sorted(self.engine.table_entries(t.name), key=lambda e: e["handle"]):
            out.append("**********")
            self._dump_entry(t, e, out)
        if t.action_profile:
            self._dump_profile(self.program.profiles[t.action_profile].name, out)
        out += ["==========", "Dumping default entry"]
        default = self.engine.table_default(t.name)
        self._dump_action(None if default is None else {"action": default[0], "data": default[1]}, out)
        out.append("==========")

    def _do_table_dump_entry_from_key(self, a: dict[str, Any], out: list[str]) -> None:
        t = self.program.get("table", a["table"])
        keys, priority = list(a["keys"]), 0
        if self._needs_priority(t):
            if not keys or keys[-1].form != "value":
                raise CommandError(f"Table {t.name} has ternary, range or optional keys: give the priority after the key")
            priority = keys.pop().a.value
        handle = self.engine.table_find(t.name, self._match(t, keys), priority)
        self._dump_entry(t, self._entry(t, handle), out)

    # -- action profiles and indirect tables -----------------------------------------------

    def _check_indirect(self, t: TableInfo, with_selector: bool) -> None:
        if with_selector and t.type != "indirect_ws":
            raise CommandError("Cannot run this command on non-indirect table, or on indirect table with no selector")
        if t.type not in ("indirect", "indirect_ws"):
            raise CommandError("Cannot run this command on non-indirect table")

    def _indirect_add(self, a: dict[str, Any], out: list[str], group: bool) -> None:
        t = self.program.get("table", a["table"])
        self._check_indirect(t, group)
        priority = a["priority"]
        if self._needs_priority(t) and priority is None:
            raise CommandError(f"Table {t.name} has ternary, range or optional keys: give a priority after the handle (lower number wins)")
        if not self._needs_priority(t) and priority is not None:
            raise CommandError(f"Table {t.name} is {t.match_type}: its entries take no priority")
        match = self._match(t, a["keys"])
        out.append(f"Adding entry to indirect match table {t.name}")
        add = self.engine.table_add_group if group else self.engine.table_add_member
        handle = add(t.name, match, a["handle"], priority or 0)
        out.append(f"Entry has been added with handle {handle}")

    def _do_table_indirect_add(self, a: dict[str, Any], out: list[str]) -> None:
        self._indirect_add(a, out, group=False)

    def _do_table_indirect_add_with_group(self, a: dict[str, Any], out: list[str]) -> None:
        self._indirect_add(a, out, group=True)

    def _indirect_modify(self, a: dict[str, Any], out: list[str], group: bool) -> None:
        t = self.program.get("table", a["table_name"])
        self._check_indirect(t, group)
        # The entry is looked up first so a missing entry and a missing member get their own codes.
        self._entry(t, a["entry_handle"])
        out.append(f"Modifying entry {a['entry_handle']} for {t.match_type} match table {t.name}")
        target = a["group_handle"] if group else a["member_handle"]
        self.engine.table_modify_indirect(t.name, a["entry_handle"], target, group=group)

    def _do_table_indirect_modify(self, a: dict[str, Any], out: list[str]) -> None:
        self._indirect_modify(a, out, group=False)

    def _do_table_indirect_modify_with_group(self, a: dict[str, Any], out: list[str]) -> None:
        self._indirect_modify(a, out, group=True)

    def _profile(self, name: str, with_selector: bool = False) -> str:
        p = self.program.get("action profile", name)
        if with_selector and not p.with_selection:
            raise CommandError("Cannot run this command on an action profile without selector")
        return p.name

    def _members(self, profile: str) -> dict[int, tuple[str, list[int]]]:
        """The profile's members in the engine, by handle: (action, data)."""
        return {m: (action, list(data)) for m, action, data in self.engine.profile_members(profile)}

    def _groups(self, profile: str) -> dict[int, list[int]]:
        """The selector's groups in the engine, by handle: member handles."""
        return {g: list(members) for g, members in self.engine.profile_groups(profile)}

    @staticmethod
    def _allocate(used: Iterable[int], create: Callable[[int], None]) -> int:
        """Creates the object at the lowest handle that is free both here and in the engine."""
        taken = set(used)
        h = 0
        while True:
            if h not in taken:
                try:
                    create(h)
                    return h
                except AlreadyExistsError:
                    # Made by another client (P4Runtime): skip its id.
                    pass
            h += 1

    def _do_act_prof_create_member(self, a: dict[str, Any], out: list[str]) -> None:
        name = self._profile(a["owner"])
        act = self.program.profile_action(self.program.profiles[name], a["action"])
        data = self._data(act, a["params"])
        h = self._allocate(self._members(name), lambda m: self.engine.profile_member_set(name, m, act.name, data))
        out.append(f"Member has been created with handle {h}")

    def _do_act_prof_modify_member(self, a: dict[str, Any], out: list[str]) -> None:
        name = self._profile(a["owner"])
        act = self.program.profile_action(self.program.profiles[name], a["action"])
        data = self._data(act, a["params"])
        self.engine.profile_member_set(name, a["handle"], act.name, data, modify=True)

    def _do_act_prof_delete_member(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.profile_member_delete(self._profile(a["act_prof_name"]), a["member_handle"])

    def _do_act_prof_create_group(self, a: dict[str, Any], out: list[str]) -> None:
        name = self._profile(a["act_prof_name"], with_selector=True)
        h = self._allocate(self._groups(name), lambda g: self.engine.profile_group_set(name, g, []))
        out.append(f"Group has been created with handle {h}")

    def _do_act_prof_delete_group(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.profile_group_delete(self._profile(a["act_prof_name"], with_selector=True), a["group_handle"])

    def _group_members(self, profile: str, g: int) -> list[int]:
        groups = self._groups(profile)
        if g not in groups:
            raise OperationError("INVALID_GRP_HANDLE", f"no group with handle {g}")
        return groups[g]

    def _do_act_prof_add_member_to_group(self, a: dict[str, Any], out: list[str]) -> None:
        name = self._profile(a["act_prof_name"], with_selector=True)
        m, members = a["member_handle"], self._group_members(name, a["group_handle"])
        if m in members:
            raise OperationError("MBR_ALREADY_IN_GRP", f"member {m} is already in group {a['group_handle']}")
        self.engine.profile_group_set(name, a["group_handle"], [*members, m], modify=True)

    def _do_act_prof_remove_member_from_group(self, a: dict[str, Any], out: list[str]) -> None:
        name = self._profile(a["act_prof_name"], with_selector=True)
        m, members = a["member_handle"], self._group_members(name, a["group_handle"])
        if m not in members:
            raise OperationError("MBR_NOT_IN_GRP", f"member {m} is not in group {a['group_handle']}")
        self.engine.profile_group_set(name, a["group_handle"], [x for x in members if x != m], modify=True)

    def _do_act_prof_dump(self, a: dict[str, Any], out: list[str]) -> None:
        self._dump_profile(self.program.get("action profile", a["act_prof_name"]).name, out)

    def _do_act_prof_dump_member(self, a: dict[str, Any], out: list[str]) -> None:
        members = self._members(self._profile(a["act_prof_name"]))
        if a["member_handle"] not in members:
            raise OperationError("INVALID_MBR_HANDLE", f"no member with handle {a['member_handle']}")
        action, data = members[a["member_handle"]]
        out.append(f"Dumping member {a['member_handle']}")
        self._dump_action({"action": action, "data": data}, out)

    def _do_act_prof_dump_group(self, a: dict[str, Any], out: list[str]) -> None:
        name = self._profile(a["act_prof_name"], with_selector=True)
        members = ", ".join(str(m) for m in self._group_members(name, a["group_handle"]))
        out += [f"Dumping group {a['group_handle']}", f"Members: [{members}]"]

    def _dump_profile(self, name: str, out: list[str]) -> None:
        members = self._members(name)
        out += ["==========", "MEMBERS"]
        for h in sorted(members):
            action, data = members[h]
            out += ["**********", f"Dumping member {h}"]
            self._dump_action({"action": action, "data": data}, out)
        if self.program.profiles[name].with_selection:
            groups = self._groups(name)
            out += ["==========", "GROUPS"]
            for g in sorted(groups):
                shown = ", ".join(str(m) for m in groups[g])
                out += ["**********", f"Dumping group {g}", f"Members: [{shown}]"]

    # -- counters, registers, meters -------------------------------------------------------

    def _do_counter_read(self, a: dict[str, Any], out: list[str]) -> None:
        c = self.program.get("counter", a["name"])
        if c.binding:
            out.append(f"this is the direct counter for table {c.binding}")
            try:
                packets, nbytes = self.engine.table_counter(c.binding, a["index"])
            except NotFoundError as e:
                raise OperationError("INVALID_INDEX", f"{e} (a direct counter's index is the entry handle)") from None
        else:
            packets, nbytes = self.engine.counter_read(c.name, a["index"])
        out.append(f"{a['name']}[{a['index']}]=  BmCounterValue(packets={packets}, bytes={nbytes})")

    def _do_counter_write(self, a: dict[str, Any], out: list[str]) -> None:
        c = self.program.get("counter", a["name"])
        if c.binding:
            out.append(f"this is the direct counter for table {c.binding}")
            try:
                self.engine.table_counter_write(c.binding, a["index"], a["packets"], a["bytes"])
            except NotFoundError as e:
                raise OperationError("INVALID_INDEX", f"{e} (a direct counter's index is the entry handle)") from None
        else:
            self.engine.counter_write(c.name, a["index"], a["packets"], a["bytes"])
        out.append(f"{a['name']}[{a['index']}] has been updated")

    def _do_counter_reset(self, a: dict[str, Any], out: list[str]) -> None:
        c = self.program.get("counter", a["name"])
        if c.binding:
            out.append(f"this is the direct counter for table {c.binding}")
        self.engine.counter_reset(c.name)

    def _do_register_read(self, a: dict[str, Any], out: list[str]) -> None:
        r = self.program.get("register", a["name"])
        if a["index"] is not None:
            out.append(f"{a['name']}[{a['index']}]= {self.engine.register_read(r.name, a['index'])}")
        else:
            values = ", ".join(str(self.engine.register_read(r.name, i)) for i in range(r.size))
            out.append(f"{a['name']}= {values}")

    def _do_register_write(self, a: dict[str, Any], out: list[str]) -> None:
        r = self.program.get("register", a["name"])
        self.engine.register_write(r.name, a["index"], _fit(a["value"], r.width, r.name))

    def _do_register_reset(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.register_reset(self.program.get("register", a["name"]).name)

    def _rates(self, m: Any, rates: Sequence[tuple[float, int]]) -> tuple[int, int, int, int]:
        """BMv2 rates (units/µs, committed then peak) as the engine's (cir/s, cburst, pir/s, pburst)."""
        if len(rates) != m.rate_count:
            raise CommandError(f"Invalid number of rates, expected {m.rate_count} but got {len(rates)}")
        if m.rate_count != 2:
            raise CommandError(f"{m.name}: only two-rate meters (committed, peak) are supported")
        (cir, cburst), (pir, pburst) = rates
        return round(cir * 1e6), cburst, round(pir * 1e6), pburst

    def _do_meter_array_set_rates(self, a: dict[str, Any], out: list[str]) -> None:
        m = self.program.get("meter", a["name"])
        r = self._rates(m, a["rates"])
        if m.binding:
            for e in self.engine.table_entries(m.binding):
                self.engine.table_meter_set(m.binding, e["handle"], *r)
            return
        for i in range(m.size):
            self.engine.meter_set(m.name, i, *r)

    def _do_meter_set_rates(self, a: dict[str, Any], out: list[str]) -> None:
        m = self.program.get("meter", a["name"])
        r = self._rates(m, a["rates"])
        if m.binding:
            self.engine.table_meter_set(m.binding, a["index"], *r)
        else:
            self.engine.meter_set(m.name, a["index"], *r)

    def _do_meter_get_rates(self, a: dict[str, Any], out: list[str]) -> None:
        m = self.program.get("meter", a["name"])
        if m.binding:
            cell = self.engine.table_meter_get(m.binding, a["index"])
        else:
            cell = self.engine.meter_get(m.name, a["index"])
        # The engine keeps units per second; BMv2 shows units per microsecond. Unconfigured: no rates.
        rates = [] if cell is None else [(cell[0] / 1e6, cell[1]), (cell[2] / 1e6, cell[3])]
        if len(rates) != m.rate_count:
            out.append(f"WARNING: expected {m.rate_count} rates but only received {len(rates)}")
        out.extend(f"{i}: info rate = {rate}, burst size = {burst}" for i, (rate, burst) in enumerate(rates))

    # -- clone sessions and multicast ------------------------------------------------------

    def _do_mirroring_add(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.clone_session_set(a["mirror_id"], port=a["egress_port"])

    def _do_mirroring_add_mc(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.clone_session_set(a["mirror_id"], mcast_grp=a["mgrp"])

    def _do_mirroring_delete(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.clone_session_delete(a["mirror_id"])

    def _do_mirroring_get(self, a: dict[str, Any], out: list[str]) -> None:
        port, mgrp, _ = self.engine.clone_session_get(a["mirror_id"])
        out.append(f"MirroringSessionConfig(port={port}, mgid={mgrp})")

    def _push_group(self, g: int) -> None:
        """Writes group `g` to the engine as the replicas of its nodes, in association order."""
        replicas = [(p, self._mc_nodes[h].rid) for h in self._mc_groups[g] for p in self._mc_nodes[h].ports]
        self.engine.mc_group_set(g, replicas)

    def _mc_group(self, g: int) -> list[int]:
        if g not in self._mc_groups:
            raise OperationError("INVALID_MGID", f"multicast group {g} does not exist (create it with mc_mgrp_create)")
        return self._mc_groups[g]

    def _mc_node(self, h: int) -> _McNode:
        if h not in self._mc_nodes:
            raise OperationError("INVALID_L1_HANDLE", f"no multicast node with handle {h}")
        return self._mc_nodes[h]

    def _do_mc_mgrp_create(self, a: dict[str, Any], out: list[str]) -> None:
        g = a["group_id"]
        if g in self._mc_groups:
            raise OperationError("INVALID_MGID", f"multicast group {g} exists")
        if g > 0xFFFF:
            raise OperationError("INVALID_MGID", f"multicast group ids are 16 bits, got {g}")
        try:
            self.engine.mc_group_get(g)
        except NotFoundError:
            pass
        else:
            # Made by another client (P4Runtime): creating it here would wipe its replicas.
            raise OperationError("INVALID_MGID", f"multicast group {g} exists (created by another client)")
        out.append(f"Creating multicast group {g}")
        self.engine.mc_group_set(g, [])
        self._mc_groups[g] = []

    def _do_mc_mgrp_destroy(self, a: dict[str, Any], out: list[str]) -> None:
        g = a["group_id"]
        nodes = self._mc_group(g)
        out.append(f"Destroying multicast group {g}")
        self.engine.mc_group_delete(g)
        for h in nodes:
            self._mc_nodes[h].group = None
        del self._mc_groups[g]

    def _check_ports(self, ports: Sequence[int], lags: Sequence[int]) -> None:
        if lags:
            raise CommandError("LAGs are not supported: give ports only")
        if any(p > 511 for p in ports):
            raise CommandError("Ports are 0..511")

    def _do_mc_node_create(self, a: dict[str, Any], out: list[str]) -> None:
        self._check_ports(a["ports"], a["lags"])
        if a["rid"] > 0xFFFF:
            raise CommandError(f"Replication ids are 16 bits, got {a['rid']}")
        out.append(f"Creating node with rid {a['rid']} , port map {_port_map(a['ports'])} and lag map")
        h = next(i for i in range(len(self._mc_nodes) + 1) if i not in self._mc_nodes)
        self._mc_nodes[h] = _McNode(a["rid"], list(a["ports"]))
        out.append(f"node was created with handle {h}")

    def _do_mc_node_update(self, a: dict[str, Any], out: list[str]) -> None:
        self._check_ports(a["ports"], a["lags"])
        node = self._mc_node(a["node_handle"])
        out.append(f"Updating node {a['node_handle']} with port map {_port_map(a['ports'])} and lag map")
        old, node.ports = node.ports, list(a["ports"])
        if node.group is not None:
            try:
                self._push_group(node.group)
            except EngineError:
                node.ports = old
                raise

    def _do_mc_node_associate(self, a: dict[str, Any], out: list[str]) -> None:
        g, h = a["group_handle"], a["node_handle"]
        nodes, node = self._mc_group(g), self._mc_node(h)
        if node.group is not None:
            raise OperationError("ERROR", f"node {h} is already associated with multicast group {node.group}")
        out.append(f"Associating node {h} to multicast group {g}")
        nodes.append(h)
        node.group = g
        try:
            self._push_group(g)
        except EngineError:
            nodes.remove(h)
            node.group = None
            raise

    def _do_mc_node_dissociate(self, a: dict[str, Any], out: list[str]) -> None:
        g, h = a["group_handle"], a["node_handle"]
        nodes, node = self._mc_group(g), self._mc_node(h)
        if h not in nodes:
            raise OperationError("INVALID_L1_HANDLE", f"node {h} is not associated with multicast group {g}")
        out.append(f"Dissociating node {h} from multicast group {g}")
        nodes.remove(h)
        node.group = None
        self._push_group(g)

    def _do_mc_node_destroy(self, a: dict[str, Any], out: list[str]) -> None:
        h = a["node_handle"]
        node = self._mc_node(h)
        out.append(f"Destroying node {h}")
        if node.group is not None:
            self._mc_groups[node.group].remove(h)
            self._push_group(node.group)
        del self._mc_nodes[h]

    def _do_mc_dump(self, a: dict[str, Any], out: list[str]) -> None:
        out += ["==========", "MC ENTRIES"]
        for g in sorted(self.engine.mc_groups()):
            out += ["**********", f"mgrp({g})"]
            replicas = self.engine.mc_group_get(g)
            nodes = self._mc_groups.get(g)
            if nodes is not None and replicas == [(p, self._mc_nodes[h].rid) for h in nodes for p in self._mc_nodes[h].ports]:
                shown = [(str(h), self._mc_nodes[h].rid, self._mc_nodes[h].ports) for h in nodes]
            else:
                # Written (or last changed) by another client: no node handles, replicas by rid.
                by_rid: dict[int, list[int]] = {}
                for port, rid in replicas:
                    by_rid.setdefault(rid, []).append(port)
                shown = [("-", rid, ports) for rid, ports in by_rid.items()]
            for h, rid, ports in shown:
                out.append(f"  -> (L1h={h}, rid={rid}) -> (ports=[{', '.join(str(p) for p in ports)}], lags=[])")
        out += ["==========", "LAGS", "None for this PRE type", "=========="]

    # -- queues and port model -------------------------------------------------------------

    def _do_set_queue_depth(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.set_queue_depth(a["nb_pkts"], a["egress_port"], a["priority"])

    def _do_set_queue_rate(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.set_queue_rate(a["rate_pps"], a["egress_port"], a["priority"])

    def _do_set_all_queue_depth(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.set_queue_depth(a["nb_pkts"], None, a["priority"])

    def _do_set_all_queue_rate(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.set_queue_rate(a["rate_pps"], None, a["priority"])

    def _do_set_port_rate(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.configure_port(a["port"], rate_bps=a["bits_per_s"])
        self._ports.add(a["port"])
        shown = "unlimited" if a["bits_per_s"] == 0 else f"{a['bits_per_s']} bit/s"
        out.append(f"port {a['port']}: rate {shown}")

    def _do_set_port_delay(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.configure_port(a["port"], delay_ns=a["delay_ns"])
        self._ports.add(a["port"])
        out.append(f"port {a['port']}: delay {a['delay_ns']} ns")

    def _do_set_port_overhead(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.configure_port(a["port"], wire_overhead_bytes=a["overhead_bytes"])
        self._ports.add(a["port"])
        out.append(f"port {a['port']}: wire overhead {a['overhead_bytes']} bytes per frame")

    def _do_set_pool_size(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.set_pool_bytes(a["pool_bytes"])
        out.append(f"shared buffer pool: {a['pool_bytes']} bytes")

    def _do_set_port_threshold(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.configure_port(a["port"], threshold=a["threshold"])
        self._ports.add(a["port"])
        out.append(f"port {a['port']}: threshold {_threshold_str(a['threshold'])}")

    def _do_set_port_scheduler(self, a: dict[str, Any], out: list[str]) -> None:
        port, quanta = a["port"], a["quantum_bytes"]
        if quanta is None:
            self.engine.configure_port(port, strict_priority=True)
            out.append(f"port {port}: strict priority")
        else:
            queues = self.engine.port_config(port)["num_queues"]
            if len(quanta) != queues:
                raise CommandError(f"port {port} has {queues} queue(s): give one quantum per queue, not {len(quanta)}",
                                   SPECS["set_port_scheduler"].usage)
            self.engine.configure_port(port, drr_quantum_bytes=quanta)
            out.append(f"port {port}: deficit round robin, quanta {' '.join(map(str, quanta))} bytes")
        self._ports.add(port)

    def _do_show_port_counters(self, a: dict[str, Any], out: list[str]) -> None:
        ports = sorted(set(a["port"])) if a["port"] else sorted(self._ports)
        live = {c["port"]: c for c in self._live_counters()} if self._live_counters else {}
        for p in ports:
            if p in live:
                c = dict(live[p])
                del c["port"]
                iface = c.pop("iface")
                out.append(f"port {p} ({iface}): {_pairs(c)}")
            for q in range(self.engine.port_config(p)["num_queues"]):
                s = self.engine.queue_stats(p, q)
                out.append(f"port {p} queue {q}: " + _pairs({k: s[k] for k in _QUEUE_COUNTERS}))
        stats = self.engine.stats()
        out.append("switch: " + _pairs({k: stats[k] for k in _SWITCH_COUNTERS}))

    def _do_show_ports(self, a: dict[str, Any], out: list[str]) -> None:
        ports = sorted(set(a["port"])) if a["port"] else sorted(self._ports)
        header = (
            f"{'port':>5} {'rate (bit/s)':>14} {'overhead (B)':>12} {'delay (ns)':>11} {'queues':>6} "
            f"{'sched':>6} {'depth (pkts)':>14} {'rate (pps)':>14} {'threshold':>16} {'occupancy (B)':>13}"
        )
        out += [header, "=" * len(header)]
        for p in ports:
            c = self.engine.port_config(p)
            n = c["num_queues"]
            depths = ",".join(_limit_str(kind, v) for kind, v in c["queue_limits"][:n])
            rates = ",".join(str(r) if r else "-" for r in c["queue_rate_pps"][:n])
            rate = str(c["rate_bps"]) if c["rate_bps"] else "unlimited"
            sched = ("sp" if c["scheduling"] == "strict_priority"
                     else "drr:" + "/".join(map(str, c["drr_quantum_bytes"][:n])))
            out.append(
                f"{p:>5} {rate:>14} {c['wire_overhead_bytes']:>12} {c['delay_ns']:>11} {n:>6} {sched:>6} "
                f"{depths:>14} {rates:>14} {_threshold_str(c['threshold']):>16} "
                f"{self.engine.port_occupancy_bytes(p):>13}"
            )

    def _do_get_time_elapsed(self, a: dict[str, Any], out: list[str]) -> None:
        out.append(str(self.engine.now() // 1000))

    def _set_crc(self, a: dict[str, Any], width: int) -> None:
        if self.program.crc_calcs.get(a["name"]) != width:
            raise CommandError(f"Invalid crc{width}_custom name ({a['name']})")
        values = [a["polynomial"], a["initial remainder"], a["final xor value"]]
        if any(v >> width for v in values):
            raise CommandError(f"Integer cannot fit within {width} bits")
        self.engine.set_crc_parameters(width, *values, a["reflect data?"], a["reflect remainder?"])

    def _do_set_crc16_parameters(self, a: dict[str, Any], out: list[str]) -> None:
        self._set_crc(a, 16)

    def _do_set_crc32_parameters(self, a: dict[str, Any], out: list[str]) -> None:
        self._set_crc(a, 32)

    # -- parser value sets -----------------------------------------------------------------

    def _do_pvs_add(self, a: dict[str, Any], out: list[str]) -> None:
        v = self.program.get("parser value set", a["pvs_name"])
        value = _fit(a["value"], v.width, v.name)
        try:
            self.engine.value_set_add(v.name, value)
        except AlreadyExistsError:
            # BMv2 accepts a value that is already in the set.
            pass

    def _do_pvs_remove(self, a: dict[str, Any], out: list[str]) -> None:
        v = self.program.get("parser value set", a["pvs_name"])
        value = _fit(a["value"], v.width, v.name)
        try:
            self.engine.value_set_remove(v.name, value)
        except NotFoundError:
            # BMv2 does not report a value that is not in the set.
            pass

    def _do_pvs_get(self, a: dict[str, Any], out: list[str]) -> None:
        v = self.program.get("parser value set", a["pvs_name"])
        full = (1 << v.width) - 1
        for value, mask in self.engine.value_set_values(v.name):
            # Values added through P4Runtime may carry a mask; the CLI's own have a full one.
            shown = _hexstr(value, v.width)
            out.append(shown if mask == full else f"{shown} &&& {_hexstr(mask, v.width)}")

    def _do_pvs_clear(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.value_set_clear(self.program.get("parser value set", a["pvs_name"]).name)

    # -- help ------------------------------------------------------------------------------

    def _do_help(self, a: dict[str, Any], out: list[str]) -> None:
        if a["command"] is None:
            out += ["Documented commands (type help <topic>):", "=" * 40]
            names = list(command_names())
            width = max(len(n) for n in names) + 2
            per_line = max(1, 80 // width)
            for i in range(0, len(names), per_line):
                out.append("".join(f"{n:{width}}" for n in names[i : i + per_line]).rstrip())
            return
        spec = SPECS.get(a["command"])
        if spec is None:
            raise CommandError(f"No help on {a['command']}")
        out += [f"{spec.help}: {spec.usage}"]


def _port_map(ports: Sequence[int]) -> str:
    """BMv2's port map: a string of 0/1 with port 0 as the last character."""
    if not ports:
        return ""
    bits = ["0"] * (max(ports) + 1)
    for p in ports:
        bits[p] = "1"
    return "".join(reversed(bits))


# What `show_port_counters` prints per queue and for the whole switch (packets, bytes).
_QUEUE_COUNTERS = ("enqueued_pkts", "enqueued_bytes", "dequeued_pkts", "dequeued_bytes", "dropped_pkts",
                   "dropped_bytes", "max_depth_bytes")
_SWITCH_COUNTERS = ("received", "transmitted", "dropped_by_program", "dropped_by_tm",
                    "dropped_priority_out_of_range", "parser_errors")


def _pairs(values: dict[str, Any]) -> str:
    """`name=value` pairs in order, one space apart (easy to read and to split)."""
    return " ".join(f"{k}={v}" for k, v in values.items())


def _limit_str(kind: str, value: int | None) -> str:
    return {"none": "-", "packets": f"{value}", "bytes": f"{value}B"}[kind]


def _threshold_str(t: tuple[str, int | None, int | None]) -> str:
    kind, x, y = t
    if kind == "static_bytes":
        return f"{x} bytes"
    if kind == "percent_of_pool":
        return f"{x}% of pool"
    if kind == "dynamic":
        return f"alpha {x}/{y}"
    return "none"
