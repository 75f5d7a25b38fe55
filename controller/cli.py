"""bufferlab-ctl: apply a buffer_switch config over P4Runtime, change it live, read state.

    bufferlab-ctl [--grpc-addr A] [--device-id N] [--election-id N] [--p4info F] [--json F]
                  [--role-name R] [--ssl [--cacert F] [--cert F --private-key F]]
      apply CONFIG [--dry-run]
      scheduler CONFIG                  (runtime CLI lines for the traffic manager's scheduler)
      tm CONFIG                         (runtime CLI lines for Tofino's tf1.tm.* settings: the
                                         config's keys mapped to the TM, its tofino_tm over them)
      set PORT threshold 50% | alpha 1/8 | queue-cap QUEUE BYTES|none | ecn-k QUEUE BYTES|none
      set PORT bcn NAME VALUE [NAME VALUE ...] [--queue Q]     (qeq qsc sample jitter fb_range:
                         bytes; qoff_max BYTES|off; fb_bits N|off; positive_to tagged|any)
      set PORT pause NAME VALUE [NAME VALUE ...]               (xoff xon: bytes, refresh: µs)
      read counter|register NAME [INDEX]
      dump TABLE

User errors (bad config, names, values; no switch) print one message and exit non-zero.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.buffer_program import (
    BufferSwitch,
    entry_action,
    entry_match,
    parse_changes,
    program_updates,
)
from bufferlab.controller.client import ClientTls, P4RuntimeError, SwitchConnection, entity
from bufferlab.controller.config import NO_CAP, ConfigError, load_config, port_threshold
from bufferlab.controller.p4info import P4InfoIndex, UnknownName, load_p4info
from bufferlab.controller.runtime_json import RuntimeFileError
from bufferlab.controller.scheduler import scheduler_commands
from bufferlab.controller.tofino_mapping import cell_bytes_of, on_tofino, tm_plan
from bufferlab.controller.tofino_tm import tm_commands
from bufferlab.controller.values import BadValue, decode

DEFAULT_P4INFO = "build/buffer_switch.p4.p4info.txtpb"
DEFAULT_JSON = "build/buffer_switch.json"
EXIT_SWITCH = 1  # the switch refused or could not be reached
EXIT_USAGE = 2  # the command line, config file or a name/value is wrong


class UsageError(Exception):
    """A mistake in what the user asked for (message says what and why)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bufferlab-ctl",
        description="Configure p4src/buffer_switch.p4 on a switch over P4Runtime.")
    parser.add_argument("--grpc-addr", default="127.0.0.1:50051",
                        help="switch's P4Runtime address host:port (default %(default)s)")
    parser.add_argument("--device-id", type=int, default=0, help="P4Runtime device id (default 0)")
    parser.add_argument("--election-id", type=_election_id, default=(0, 1),
                        help="election id, N or HIGH,LOW (default 1)")
    parser.add_argument("--p4info", type=Path,
                        help=f"P4Info text file (apply: default {DEFAULT_P4INFO}; other"
                             " commands: the switch's installed P4Info)")
    parser.add_argument("--json", type=Path, default=Path(DEFAULT_JSON),
                        help="BMv2 JSON that apply installs (default %(default)s)")
    parser.add_argument("--timeout-s", type=float, default=5.0,
                        help="seconds to wait for the switch's arbitration answer (default 5)")
    parser.add_argument("--request-log", type=Path,
                        help="append every P4Runtime request to this file")
    parser.add_argument("--role-name", help="P4Runtime role (default: the default role, full"
                                            " access)")
    # TLS as p4runtime-shell spells it; the switch side is bufferlab-switch's --grpc-server-ssl.
    parser.add_argument("--ssl", action="store_true", help="connect over TLS")
    parser.add_argument("--cacert", help="PEM CA that signed the switch's certificate (--ssl)")
    parser.add_argument("--cert", help="this client's PEM certificate, for mutual TLS (--ssl)")
    parser.add_argument("--private-key", help="this client's PEM key, for mutual TLS (--ssl)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    apply = commands.add_parser("apply", help="install the pipeline and every entry of CONFIG")
    apply.add_argument("config", type=Path, help="buffer_switch config file (JSON)")
    apply.add_argument("--dry-run", action="store_true",
                       help="check CONFIG and print the updates without a switch")

    scheduler = commands.add_parser(
        "scheduler", help="print CONFIG's scheduler as runtime CLI lines (P4Runtime does not "
                          "reach the traffic manager): pipe them into bufferlab-switch-cli")
    scheduler.add_argument("config", type=Path, help="buffer_switch config file (JSON)")

    tm = commands.add_parser(
        "tm", help="print CONFIG's Tofino TM settings (tf1.tm.* tables) as runtime CLI lines: "
                   "pool_bytes, thresholds, queue caps and pause mapped to the TM in cells "
                   "(--json's cell size; 80 B, or 176 B for a T2NA --p4info), with the "
                   "tofino_tm section over them; pipe them into bufferlab-switch-cli")
    tm.add_argument("config", type=Path, help="buffer_switch config file (JSON)")

    change = commands.add_parser("set", help="change one port's parameters live")
    change.add_argument("port", type=int, help="switch port")
    change.add_argument("item", choices=["threshold", "alpha", "queue-cap", "ecn-k", "bcn",
                                         "pause"])
    change.add_argument("values", nargs="+", metavar="VALUE",
                        help="threshold 50%% | alpha 1/8 | queue-cap QUEUE BYTES|none |"
                             " ecn-k QUEUE BYTES|none (ECN marking threshold K; none: no"
                             " marking) | bcn/pause NAME VALUE ...")
    change.add_argument("--queue", type=int, help="bcn: only this queue (default: every queue)")

    read = commands.add_parser("read", help="read a counter or register (one cell or all)")
    read.add_argument("kind", choices=["counter", "register"])
    read.add_argument("name")
    read.add_argument("index", nargs="?", type=int, help="cell (default: every non-zero cell)")

    dump = commands.add_parser("dump", help="print a table's entries and default action")
    dump.add_argument("table")
    return parser


def _election_id(text: str) -> tuple[int, int]:
    try:
        parts = [int(p, 0) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N or HIGH,LOW") from None
    if len(parts) == 1:
        parts = [parts[0] >> 64, parts[0] & ((1 << 64) - 1)]
    if len(parts) != 2 or min(parts) < 0 or max(parts) >> 64 or parts == [0, 0]:
        raise argparse.ArgumentTypeError(f"{text!r}: election id must be a positive 128-bit value")
    return parts[0], parts[1]


def describe(index: P4InfoIndex, update: p4runtime_pb2.Update | p4runtime_pb2.Entity) -> str:
    """One line for an update or entity: what it writes, with names instead of ids."""
    prefix = ""
    message = update
    if isinstance(update, p4runtime_pb2.Update):
        prefix = p4runtime_pb2.Update.Type.Name(update.type) + " "
        message = update.entity
    kind = message.WhichOneof("entity")
    if kind == "table_entry":
        return prefix + describe_entry(index, message.table_entry)
    pre = message.packet_replication_engine_entry
    if pre.WhichOneof("type") == "multicast_group_entry":
        group = pre.multicast_group_entry
        ports = ", ".join(str(r.egress_port) for r in group.replicas)
        return f"{prefix}multicast group {group.multicast_group_id}: ports {ports}"
    session = pre.clone_session_entry
    ports = ", ".join(str(r.egress_port) for r in session.replicas)
    return f"{prefix}clone session {session.session_id}: ports {ports}"


def _show(name: str, bitwidth: int, value: int) -> str:
    """A value as users write it: MACs and IPv4 addresses in their notation, the rest decimal."""
    if bitwidth == 48 and ("mac" in name or "addr" in name):
        return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))
    if bitwidth == 32 and "addr" in name:
        return str(ipaddress.IPv4Address(value))
    return str(value)


def describe_entry(index: P4InfoIndex, entry: p4runtime_pb2.TableEntry) -> str:
    """`table key=value ... -> action(param=value, ...)`, by name."""
    table = index.by_id(entry.table_id).preamble.name
    if entry.is_default_action:
        key = "(default)"
    else:
        widths = {f.name: f.bitwidth for f in index.match_fields(table)}
        parts = []
        for name, value in entry_match(index, entry).items():
            if isinstance(value, tuple):
                parts.append(f"{name}={_show(name, widths[name], value[0])}/{value[1]}")
            else:
                parts.append(f"{name}={_show(name, widths[name], value)}")
        key = " ".join(parts)
    name, params = entry_action(index, entry)
    widths = {p.name: p.bitwidth for p in index.params(name)}
    args = ", ".join(f"{k}={_show(k, widths[k], v)}" for k, v in params.items())
    return f"{table} {key} -> {name}({args})"


def _connect(args: argparse.Namespace, writes: bool) -> SwitchConnection:
    log = args.request_log.open("a") if args.request_log else None
    connection = SwitchConnection(args.grpc_addr, args.device_id, args.election_id,
                                  role=args.role_name, request_log=log, tls=_tls(args))
    try:
        primary = connection.connect(timeout_s=args.timeout_s)
    except P4RuntimeError as err:
        raise P4RuntimeError(err.rpc, err.code, f"cannot reach the switch at {args.grpc_addr}"
                                                f" (device {args.device_id})") from None
    if writes and not primary:
        connection.close()
        raise UsageError(f"election id {args.election_id[0]},{args.election_id[1]} is not"
                         f" primary on {args.grpc_addr}: another controller has a higher one")
    return connection


def _tls(args: argparse.Namespace) -> ClientTls | None:
    """The TLS files the options name, checked readable; None without --ssl."""
    files = {"--cacert": args.cacert, "--cert": args.cert, "--private-key": args.private_key}
    if not args.ssl:
        given = [name for name, path in files.items() if path]
        if given:
            raise UsageError(f"{', '.join(given)} needs --ssl")
        return None
    if bool(args.cert) != bool(args.private_key):
        raise UsageError("--cert and --private-key go together (mutual TLS)")
    for name, path in files.items():
        if path:
            try:
                Path(path).read_bytes()
            except OSError as err:
                raise UsageError(f"{name} {path}: cannot read: {err.strerror}") from None
    return ClientTls(args.cacert, args.cert, args.private_key)


def _index(args: argparse.Namespace, connection: SwitchConnection | None) -> P4InfoIndex:
    if args.p4info is None and connection is not None:
        config = connection.get_pipeline(
            p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        if not config.HasField("p4info"):
            raise UsageError(f"the switch at {args.grpc_addr} has no pipeline: run apply first")
        return P4InfoIndex(config.p4info)
    path = args.p4info or Path(DEFAULT_P4INFO)
    try:
        return P4InfoIndex(load_p4info(path))
    except OSError as err:
        raise UsageError(f"--p4info {path}: cannot read: {err.strerror}") from None
    except text_format.ParseError as err:
        raise UsageError(f"--p4info {path}: not a P4Info text file: {err}") from None


def _apply(args: argparse.Namespace) -> None:
    config = load_config(args.config)
    index = _index(args, None)
    plan = None
    if on_tofino(index):
        plan = tm_plan(config, cell_bytes_of(index, _read_optional(args.json)))
        for warning in plan.warnings:
            print(f"bufferlab-ctl: warning: {warning}", file=sys.stderr)
    if args.dry_run:
        for update in program_updates(index, config):
            print(describe(index, update))
        for line in plan.commands if plan else ():
            print(f"TM {line}")
        return
    try:
        device_config = args.json.read_bytes()
    except OSError as err:
        raise UsageError(f"--json {args.json}: cannot read: {err.strerror}") from None
    with _connect(args, writes=True) as connection:
        count = BufferSwitch(connection, index).apply(config, device_config)
    print(f"applied {args.config} to {args.grpc_addr} (device {args.device_id}):"
          f" pipeline {args.json.name} and {count} updates")
    if plan is not None:
        print(f"{args.json.name} is a TNA program: its buffer, thresholds and PAUSE/PFC are"
              f" {len(plan.commands)} TM settings P4Runtime does not reach; apply them with"
              f" bufferlab-ctl --p4info {args.p4info or DEFAULT_P4INFO} --json {args.json}"
              f" tm {args.config} | bufferlab-switch-cli --thrift-port 9090")


def _read_optional(path: Path | None) -> bytes | None:
    """A file's bytes, or None when there is none to read."""
    try:
        return path.read_bytes() if path is not None else None
    except OSError:
        return None


def _scheduler(args: argparse.Namespace) -> None:
    lines = scheduler_commands(load_config(args.config))
    if not lines:
        raise UsageError(f"{args.config} has no scheduler section")
    print("\n".join(lines))


def _tm(args: argparse.Namespace) -> None:
    lines = tm_commands(args.config)
    if _buffer_config(args.config):
        index = _index(args, None) if args.p4info else None
        plan = tm_plan(load_config(args.config), cell_bytes_of(index, _read_optional(args.json)))
        for warning in plan.warnings:
            print(f"bufferlab-ctl: warning: {warning}", file=sys.stderr)
        lines = plan.commands
    if not lines:
        raise UsageError(f"{args.config} has no tofino_tm section")
    print("\n".join(lines))


def _buffer_config(path: Path) -> bool:
    """Whether a config file describes a switch (not only a tofino_tm section)."""
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return True  # load_config names the problem
    return isinstance(raw, dict) and bool(set(raw) - {"tofino_tm", "comment"})


def _set(args: argparse.Namespace) -> None:
    values = args.values
    single = {"threshold": 1, "alpha": 1, "queue-cap": 2, "ecn-k": 2}
    if args.item in single and len(values) != single[args.item]:
        shape = {"threshold": "PERCENT%", "alpha": "FRACTION", "queue-cap": "QUEUE BYTES|none",
                 "ecn-k": "QUEUE BYTES|none"}
        raise UsageError(f"set {args.port} {args.item}: expected {shape[args.item]}")
    if args.queue is not None and args.item != "bcn":
        raise UsageError("--queue goes with set PORT bcn only")
    # Everything that can be checked without the switch is checked before connecting.
    changes = parse_changes(args.item, values) if args.item in ("bcn", "pause") else {}
    threshold = None
    if args.item in ("threshold", "alpha"):
        threshold = port_threshold(args.item, values[0], f"ports.{args.port}")
    if args.item in ("queue-cap", "ecn-k"):
        queue = _int(values[0], "queue")
        cap = None if values[1] == "none" else _int(values[1], "BYTES")
    if args.item == "ecn-k" and cap is not None and not 0 <= cap <= NO_CAP:
        raise UsageError(f"ports.{args.port}.ecn_k_bytes: {cap} is outside 0..{NO_CAP}")
    with _connect(args, writes=True) as connection:
        switch = BufferSwitch(connection, _index(args, connection))
        if threshold is not None:
            switch.set_threshold(args.port, threshold)
        elif args.item == "queue-cap":
            switch.set_queue_cap(args.port, queue, cap)
        elif args.item == "ecn-k":
            switch.set_ecn_k(args.port, queue, cap)
        elif args.item == "bcn":
            switch.set_bcn(args.port, changes, args.queue)
        else:
            switch.set_pause(args.port, changes)
        table = {"threshold": "buffer_threshold", "alpha": "buffer_threshold",
                 "queue-cap": "queue_threshold", "ecn-k": "ecn_threshold", "bcn": "bcn_config",
                 "pause": "pause_config"}
        for entry in switch.entries(table[args.item]):
            if entry_match(switch.index, entry).get("port") == args.port:
                print(describe_entry(switch.index, entry))


def _int(text: str, what: str) -> int:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a whole number") from None


def _read(args: argparse.Namespace) -> None:
    with _connect(args, writes=False) as connection:
        index = _index(args, connection)
        if args.kind == "counter":
            request = entities.counter_entry(index, args.name, args.index)
        else:
            request = entities.register_entry(index, args.name, args.index)
        name = index.get(args.kind, args.name).preamble.name
        shown = 0
        for found in connection.read(entity(request)):
            if args.kind == "counter":
                cell = found.counter_entry
                data = (cell.data.packet_count, cell.data.byte_count)
                line = f"{name}[{cell.index.index}]: {data[0]} packets, {data[1]} bytes"
            else:
                cell = found.register_entry
                data = (decode(cell.data.bitstring),)
                line = f"{name}[{cell.index.index}] = {data[0]}"
            if args.index is not None or any(data):
                print(line)
                shown += 1
        if shown == 0:
            print(f"{name}: every cell is 0")


def _dump(args: argparse.Namespace) -> None:
    with _connect(args, writes=False) as connection:
        switch = BufferSwitch(connection, _index(args, connection))
        for entry in switch.entries(args.table):
            print(describe_entry(switch.index, entry))
        default = switch.default_entry(args.table)
        if default is not None:
            print(describe_entry(switch.index, default))


COMMANDS = {"apply": _apply, "scheduler": _scheduler, "tm": _tm, "set": _set, "read": _read, "dump": _dump}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of bufferlab-ctl; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except (ConfigError, RuntimeFileError, UsageError, UnknownName, BadValue) as err:
        print(f"bufferlab-ctl: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except P4RuntimeError as err:
        print(f"bufferlab-ctl: switch error: {err}", file=sys.stderr)
        return EXIT_SWITCH
    return 0


if __name__ == "__main__":
    sys.exit(main())
