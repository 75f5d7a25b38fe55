"""`bufferlab-stf`: runs p4c's STF test files (formats.md §6) against the engine.

    bufferlab-stf prog.p4 case.stf        # compiles prog.p4 with bufferlab-p4c
    bufferlab-stf --arch tna prog.p4 case.stf   # for TNA (default: the arch it includes)
    bufferlab-stf build/prog.json case.stf       # BMv2 JSON, or a TNA JSON document

Frames are injected 1 µs apart in virtual time; `wait` and the end of the
file let the switch drain. Expected frames are matched per port, in order. As
p4c's runner gives simple_switch an interface only for the ports its `packet`
and `expect` lines name, frames sent out of any other port are not checked.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bufferlab.switch.engine import Engine, EngineError
from bufferlab.switch.packet_trace import TRACE_LEVELS, format_rows
from bufferlab.switch.runtime_cli.executor import Executor

#: Virtual time between two injected frames, ns.
PACKET_GAP_NS = 1_000

#: An STF priority p becomes the engine's (BMv2's) TOP - p, so that larger p wins.
STF_PRIORITY_TOP = 2**31 - 1


class StfError(Exception):
    """A malformed STF statement; the message starts with `file:line:`."""


@dataclass
class Expectation:
    """An expected frame: hex digits with '*' wildcards, or None for any frame."""

    line: int
    pattern: str | None
    exact_length: bool


@dataclass
class Result:
    """Outcome of one STF run."""

    failures: list[str] = field(default_factory=list)
    packets_in: int = 0
    packets_out: int = 0
    #: Frames sent out of ports the file never names (p4c's runner has no interface there).
    packets_unheard: int = 0

    @property
    def passed(self) -> bool:
        """True when every expectation was met and nothing unexpected came out."""
        return not self.failures


def parse_number(text: str) -> int:
    """Decimal, 0x hex or 0b binary."""
    return int(text.replace("_", ""), 0)


def packet_bytes(text: str) -> bytes:
    """A `packet` line's hex digits as bytes; a lone last digit is a byte of its own, as
    p4c's runner reads it ("ab c" → ab 0c)."""
    digits = "".join(text.split())
    if len(digits) % 2:
        digits = digits[:-1] + "0" + digits[-1]
    return bytes.fromhex(digits)


def parse_masked(text: str, width: int) -> tuple[int, int]:
    """A value with '*' don't-care digits ("0x0a**", "0b1*0") or "v&&&m" as (value, mask)."""
    t = text.lower()
    if "&&&" in t:
        v, _, m = t.partition("&&&")
        return parse_number(v), parse_number(m) & ((1 << width) - 1)
    if "*" not in t:
        return parse_number(t), (1 << width) - 1
    if t.startswith("0x"):
        digits, bits = t[2:], 4
    elif t.startswith("0b"):
        digits, bits = t[2:], 1
    else:
        raise ValueError(f"wildcards need a 0x or 0b value: {text}")
    value = mask = 0
    for d in digits:
        value <<= bits
        mask <<= bits
        if d != "*":
            value |= int(d, 16 if bits == 4 else 2)
            mask |= (1 << bits) - 1
    return value, mask & ((1 << width) - 1)


def _resolve(name: str, names: list[str], what: str) -> str:
    if name in names:
        return name
    hits = [n for n in names if n.endswith("." + name)]
    if len(hits) == 1:
        return hits[0]
    raise KeyError(f"{what} '{name}' {'is ambiguous' if hits else 'does not exist'}")


def _key_index(key: str, spec: list[tuple[str, str, int]]) -> int:
    names = [n for n, _, _ in spec]
    key = re.sub(r"\$(\d+)", r"[\1]", key)  # p4c's runner writes `extra[0].h` as `extra$0.h`
    for cand in (key, "hdr." + key, key.removeprefix("hdr.")):
        if cand in names:
            return names.index(cand)
    hits = [i for i, n in enumerate(names) if n.endswith("." + key) or key.endswith("." + n)]
    if len(hits) == 1:
        return hits[0]
    raise KeyError(f"key '{key}' {'is ambiguous' if hits else 'does not exist'} (keys: {names})")


def named_ports(text: str) -> set[int]:
    """The ports an STF text's `packet` and `expect` lines name (malformed ones are left to
    the statement that reports them)."""
    ports = set()
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) >= 2 and words[0].lower() in ("packet", "expect") and words[1].isdigit():
            ports.add(int(words[1]))
    return ports


_ACTION = re.compile(r"^(?P<name>[\w.$\[\]]+)\((?P<args>.*)\)$")


class Runner:
    """Executes STF statements against one engine."""

    def __init__(self, engine: Engine, json_text: str, source: str = "<stf>") -> None:
        """Wraps `engine` running `json_text`; `source` names the file in messages."""
        self.e = engine
        self.cli = Executor(engine, json_text)
        self.source = source
        self.t = 0
        self.expect: dict[int, list[Expectation]] = {}
        self.got: dict[int, list[bytes]] = {}
        self.ports: set[int] = set()
        self.result = Result()
        self.entries: dict[str, tuple[str, int]] = {}
        self.tables = self.e.tables()

    def run(self, text: str) -> Result:
        """Runs a whole STF text and returns the outcome."""
        self.ports = named_ports(text)
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                self.statement(line, n)
            except (KeyError, ValueError, IndexError, OverflowError, EngineError) as exc:
                msg = exc.args[0] if exc.args else str(exc)
                raise StfError(f"{self.source}:{n}: {msg}") from exc
        self.drain()
        self.compare()
        return self.result

    def statement(self, line: str, n: int) -> None:
        """Executes one statement."""
        word, _, rest = line.partition(" ")
        kw = word.lower()
        rest = rest.strip()
        if kw == "add":
            self.add(rest)
        elif kw == "setdefault":
            table, _, action = rest.partition(" ")
            table = self.table(table)
            name, args = self.action_call(action.strip(), table)
            self.e.table_set_default(table, name, args)
        elif kw == "remove":
            if rest.lower() != "all":
                raise ValueError("only 'remove all' is supported")
            for t in self.tables:
                try:
                    self.e.table_clear(t)
                except EngineError:
                    continue
        elif kw == "packet":
            port, _, data = rest.partition(" ")
            frame = packet_bytes(data)
            self.e.send(int(port), frame, self.t)
            self.t += PACKET_GAP_NS
            self.result.packets_in += 1
        elif kw == "expect":
            port, _, data = rest.partition(" ")
            pattern = "".join(data.split()).lower()
            exact = pattern.endswith("$")
            pattern = pattern.rstrip("$")
            self.expect.setdefault(int(port), []).append(Expectation(n, pattern or None, exact))
        elif kw == "no_packet":
            return
        elif kw == "wait":
            self.drain()
        elif kw == "check_counter":
            self.check_counter(rest, n)
        else:
            # Everything else is a simple_switch_CLI command (mirroring_*, mc_*, register_*,
            # counter_*, meter_*, act_prof_*, table_indirect_*, pvs_*, …): the runtime CLI
            # runs it exactly as bufferlab-switch-cli would.
            answer = self.cli.execute(line)
            if not answer.ok:
                raise ValueError(answer.text.strip() or f"'{word}' failed")

    def table(self, name: str) -> str:
        """Full table name from an STF name."""
        return _resolve(name, self.tables, "table")

    def action_call(self, text: str, table: str) -> tuple[str, list[int]]:
        """`A(p:v, ...)` of `table` to (full action name, values in parameter order)."""
        m = _ACTION.match(text.replace(" ", ""))
        if not m:
            raise ValueError(f"bad action call '{text}'")
        name = _resolve(m["name"], self.e.table_actions(table), f"action of table {table}")
        params = self.e.action_params(name)
        given: dict[str, int] = {}
        for i, arg in enumerate(a for a in m["args"].split(",") if a):
            pname, sep, value = arg.partition(":")
            if not sep:
                pname, value = params[i][0], arg
            given[pname] = parse_number(value)
        missing = [p for p, _ in params if p not in given]
        if missing:
            raise ValueError(f"action {name}: missing parameters {missing}")
        return name, [given[p] for p, _ in params]

    def add(self, rest: str) -> None:
        """`add T [prio] key:value ... A(args) [= ID]`."""
        entry_id = None
        if "=" in rest.rsplit(")", 1)[-1]:
            rest, _, entry_id = rest.rpartition("=")
            entry_id = entry_id.strip()
        head, paren, tail = rest.partition("(")
        words = head.split()
        table = self.table(words[0])
        action_text = words[-1] + paren + tail
        fields = words[1:-1]
        priority = 0
        if fields and ":" not in fields[0]:
            # The larger STF priority wins: p4c's runner hands simple_switch 10000 - p, and
            # BMv2 (like the engine) prefers the smallest number.
            priority = STF_PRIORITY_TOP - parse_number(fields.pop(0))
        spec = self.e.table_keys(table)
        keys: list[tuple | None] = [None] * len(spec)
        for f in fields:
            kname, _, value = f.rpartition(":")
            i = _key_index(kname, spec)
            _, kind, width = spec[i]
            if kind == "lpm":
                v, _, plen = value.partition("/")
                keys[i] = ("lpm", parse_number(v), int(plen) if plen else width)
            elif kind in ("ternary", "optional"):
                v, m = parse_masked(value, width)
                keys[i] = ("ternary", v, m)
            elif kind == "range":
                lo, _, hi = value.partition("->")
                keys[i] = ("range", parse_number(lo), parse_number(hi or lo))
            else:
                keys[i] = ("exact", parse_number(value), None)
        for i, (kname, kind, width) in enumerate(spec):
            if keys[i] is None:
                keys[i] = {"ternary": ("ternary", 0, 0), "optional": ("ternary", 0, 0), "lpm": ("lpm", 0, 0),
                           "range": ("range", 0, (1 << width) - 1)}.get(kind)
                if keys[i] is None:
                    raise ValueError(f"table {table}: exact key {kname} needs a value")
        name, args = self.action_call(action_text, table)
        handle = self.e.table_add_raw(table, keys, name, args, priority)
        if entry_id:
            self.entries[entry_id] = (table, handle)

    def check_counter(self, rest: str, n: int) -> None:
        """`check_counter C(IDX) [packets|bytes] OP N`."""
        m = re.match(r"^([\w.$]+)\((\w+)\)\s*(packets|bytes)?\s*(==|!=|<=|>=|<|>)\s*(\w+)$", rest)
        if not m:
            raise ValueError(f"bad check_counter '{rest}'")
        self.drain()
        name, idx, what, op, want = m.groups()
        counters = self.e.counter_names()
        cname = _resolve(name, counters, "counter")
        if idx in self.entries:
            table, handle = self.entries[idx]
            pkts, nbytes = self.e.table_counter(table, handle)
        else:
            pkts, nbytes = self.e.counter_read(cname, parse_number(idx))
        have = nbytes if what == "bytes" else pkts
        ok = {"==": have == parse_number(want), "!=": have != parse_number(want), "<": have < parse_number(want),
              "<=": have <= parse_number(want), ">": have > parse_number(want), ">=": have >= parse_number(want)}[op]
        if not ok:
            self.result.failures.append(f"{self.source}:{n}: counter {cname}({idx}) {what or 'packets'} is {have}, "
                                        f"expected {op} {want}")

    def drain(self) -> None:
        """Lets the switch finish and collects what it sent."""
        self.t = max(self.t, self.e.drain())
        for port, frame, _ in self.e.received():
            if port not in self.ports:
                self.result.packets_unheard += 1
                continue
            self.got.setdefault(port, []).append(frame)
            self.result.packets_out += 1

    def compare(self) -> None:
        """Matches collected frames against expectations, per port in order."""
        for port in sorted(set(self.expect) | set(self.got)):
            want = self.expect.get(port, [])
            got = self.got.get(port, [])
            for i, frame in enumerate(got):
                if i >= len(want):
                    self.result.failures.append(f"port {port}: unexpected frame {frame.hex()}")
                    continue
                x = want[i]
                if x.pattern is not None and not matches(x.pattern, frame.hex(), x.exact_length):
                    self.result.failures.append(
                        f"{self.source}:{x.line}: port {port}: expected {x.pattern}{'$' if x.exact_length else ''}, "
                        f"got {frame.hex()}"
                    )
            for x in want[len(got):]:
                self.result.failures.append(f"{self.source}:{x.line}: port {port}: expected frame never came")


def matches(pattern: str, got_hex: str, exact_length: bool) -> bool:
    """Compares hex digits with '*' wildcards; extra trailing bytes pass unless exact."""
    if len(got_hex) < len(pattern) or (exact_length and len(got_hex) != len(pattern)):
        return False
    return all(p in ("*", g) for p, g in zip(pattern, got_hex, strict=False))


def load_program(program: Path, include_dirs: list[str], arch: str | None = None) -> str:
    """BMv2 (or TNA) JSON text of a .json, or of a .p4 compiled with bufferlab-p4c for
    `arch` (None: the architecture the program includes)."""
    if program.suffix == ".json":
        return program.read_text()
    from bufferlab.compiler import compile as compile_p4
    from bufferlab.compiler.diagnostics import CompileError

    try:
        doc, _ = compile_p4(program, include_dirs, arch=arch)
    except CompileError as exc:
        raise StfError(str(exc)) from exc
    return json.dumps(doc)


def run_file(program: Path, stf: Path, include_dirs: list[str] = (),
             trace_level: str | None = None,
             trace_sink: Callable[[str], None] | None = None,
             arch: str | None = None, jit: bool = True) -> Result:
    """Runs `stf` against `program` (compiled for `arch`: v1model, tna, t2na; None: the
    architecture it includes); with `trace_level` (`debug` or `trace`) the engine
    traces every packet as BMv2 does and each line goes to `trace_sink` (virtual time,
    from 00:00:00.000); `jit=False` interprets the program instead of running its
    actions and controls as machine code."""
    json_text = load_program(program, list(include_dirs), arch)
    engine = Engine(json_text, jit=jit)
    engine.set_trace(trace_level)
    result = Runner(engine, json_text, str(stf)).run(stf.read_text())
    if trace_level is not None and trace_sink is not None:
        rows, lost = engine.take_trace()
        for _, line in format_rows(rows, None, lost):
            trace_sink(line)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; exit status 0 when the test passes."""
    ap = argparse.ArgumentParser(prog="bufferlab-stf", description="run an STF test against the bufferlab engine")
    ap.add_argument("program", type=Path, help="P4_16 program (.p4) or BMv2 JSON (.json)")
    ap.add_argument("stf", type=Path, help="STF test file")
    ap.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="P4 include directory")
    ap.add_argument("--arch", choices=("v1model", "tna", "t2na"), default=None,
                    help="architecture to compile a .p4 for (default: the one it includes)")
    ap.add_argument("-L", "--log-level", choices=TRACE_LEVELS, default=None,
                    help="print every packet's trace, as BMv2 logs it at this level, to stderr")
    ap.add_argument("--no-jit", action="store_true",
                    help="interpret every action and control instead of compiling them to machine code")
    args = ap.parse_args(argv)
    try:
        result = run_file(args.program, args.stf, args.include, args.log_level,
                          lambda line: print(line, file=sys.stderr), args.arch, jit=not args.no_jit)
    except StfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EngineError as exc:
        print(f"error: {args.program}: {exc}", file=sys.stderr)
        return 2
    for f in result.failures:
        print(f"FAIL {f}")
    verdict = "PASS" if result.passed else "FAIL"
    unheard = f" (and {result.packets_unheard} to ports it does not name)" if result.packets_unheard else ""
    print(f"{verdict} {args.stf}: {result.packets_in} frames in, {result.packets_out} out{unheard}, "
          f"{len(result.failures)} failures")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
