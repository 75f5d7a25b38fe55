"""What of a folder of TNA programs compiles with bufferlab-p4c and runs on the engine.

Not part of `make test`: the public examples (open-p4studio's
`pkgsrc/p4-examples/p4_16_programs`) are Intel's code and live outside this
repository; bench/README.md says how to fetch them. Any folder of TNA programs
works (tests/p4/tna is ours). A program is every `.p4` file under the folder that
instantiates `main`; its name is the file's stem. For each program and target
(`tofino`, `tofino2`) the tool compiles it in process (bufferlab.compiler, the
architecture from the program's includes, with the folder and the program's own
folder on the include path), loads the JSON into bufferlab.switch.Engine, writes
the program's table entries and sends one frame, then reports where frames came
out. Entries, the frame and the expected ports per program come from a case file
(default: tna_examples.json beside this script; see bench/README.md for its
keys); a program without a case gets a plain Ethernet/IPv4/UDP frame on port 1
and no expectation.

Prints a Markdown table (program, target, compiles, loads, frame out) with the
totals and the refusals grouped by reason; `--json` prints one JSON line of
figures instead.

    .venv/bin/python bench/tna_examples.py --programs /tmp/p4studio [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bufferlab.compiler.api import compile_program
from bufferlab.switch import Engine
from bufferlab.switch.engine import to_int

HERE = Path(__file__).resolve().parent
# Refusals are grouped as p4c_samples.py groups its failures (a sibling script, not a package).
sys.path.insert(0, str(HERE))
from p4c_samples import group_key  # noqa: E402

CASES = HERE / "tna_examples.json"
TARGETS = ("tofino", "tofino2")
MAIN = re.compile(r"\bmain\s*;")
INCLUDES_TNA = re.compile(r"#\s*include\s*<tna\.p4>")
INCLUDES_T2NA = re.compile(r"#\s*include\s*<t2na\.p4>")

HOW_TO_FETCH = """\
error: no --programs folder given.
The public TNA examples are open-p4studio's (not ours to commit):
    git clone --depth 1 https://github.com/p4lang/open-p4studio
    .venv/bin/python bench/tna_examples.py \\
        --programs open-p4studio/pkgsrc/p4-examples/p4_16_programs -k na_
(-k na_: the tna_* and t2na_* programs; bench/README.md has more.)
Any folder of TNA programs works, e.g. --programs tests/p4/tna.
"""


@dataclass
class Program:
    """One TNA program: its name (the file's stem) and its main file."""

    name: str
    path: Path

    def runs_on(self, target: str) -> bool:
        """False for a T2NA-only program (includes t2na.p4, never tna.p4) on Tofino 1."""
        if target != "tofino":
            return True
        text = self.path.read_text(errors="replace")
        return not (INCLUDES_T2NA.search(text) and not INCLUDES_TNA.search(text))


@dataclass
class Row:
    """What happened to one program on one target; `stage` is where it stopped."""

    program: str
    target: str
    stage: str = "compile"  # skip, compile, load, setup, run, done
    message: str = ""
    ports: list[int] | None = None
    digests: int = 0
    checked: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool | None:
        """True/False when the case says what should happen; None when it does not."""
        if self.stage != "done" or not self.checked:
            return None
        return not self.problems


@dataclass
class Case:
    """A program's setup on one target: entries, the frame, what should come out."""

    port: int = 1
    frame: dict[str, Any] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)
    defaults: list[dict[str, Any]] = field(default_factory=list)
    port_metadata: dict[str, str] = field(default_factory=dict)
    mc_groups: dict[str, list[list[int]]] = field(default_factory=dict)
    clone_sessions: list[dict[str, int]] = field(default_factory=list)
    value_sets: list[dict[str, Any]] = field(default_factory=list)
    members: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    registers: list[dict[str, Any]] = field(default_factory=list)
    loopback_ports: list[int] = field(default_factory=list)
    expect: list[int] | None = None
    expect_one_of: list[int] | None = None
    expect_frame: dict[str, Any] | None = None
    expect_digests: int | None = None
    expect_registers: list[dict[str, Any]] = field(default_factory=list)
    expect_counters: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_expectation(self) -> bool:
        """Whether the case says anything about what should come out."""
        return any(x is not None for x in (self.expect, self.expect_one_of, self.expect_frame,
                                           self.expect_digests)) or bool(
            self.expect_registers or self.expect_counters)


def discover(folder: Path) -> list[Program]:
    """Every .p4 file under `folder` that instantiates `main`, by name."""
    found = []
    for path in sorted(folder.rglob("*.p4")):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if MAIN.search(text):
            found.append(Program(path.stem, path))
    return found


def load_cases(path: Path | None) -> dict[str, dict[str, Any]]:
    """The case file's programs (keys starting with `_` are comments)."""
    if path is None or not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def case_for(cases: dict[str, dict[str, Any]], program: str, target: str) -> Case | None:
    """The program's case with the target's overrides applied, or None."""
    spec = cases.get(program)
    if spec is None:
        return None
    merged = {k: v for k, v in spec.items() if k not in ("targets", "note")}
    merged.update(spec.get("targets", {}).get(target, {}))
    unknown = set(merged) - set(Case.__dataclass_fields__)
    if unknown:
        raise ValueError(f"case {program}: unknown keys {sorted(unknown)}")
    return Case(**merged)


FRAME_KEYS = {"hex", "eth_dst", "eth_src", "vlan", "ether_type", "ipv6", "ip_src", "ip_dst", "ip_ttl",
              "ip_tos", "l4", "sport", "dport", "payload_hex", "size"}


def build_frame(spec: dict[str, Any]) -> bytes:
    """A frame from a case's `frame` object: `hex` as given, else Ethernet[/VLAN]/IPv4|IPv6/UDP|TCP.

    The payload (`payload_hex`, then zeros up to `size` bytes, default 100) sits inside the IP
    datagram, so its length fields and the UDP/TCP checksum cover it."""
    unknown = set(spec) - FRAME_KEYS
    if unknown:
        raise ValueError(f"frame: unknown keys {sorted(unknown)}")
    if "hex" in spec:
        return bytes.fromhex(spec["hex"].replace(" ", ""))
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Raw

    pkt = Ether(dst=spec.get("eth_dst", "00:00:00:00:00:02"), src=spec.get("eth_src", "00:00:00:00:00:01"))
    if "vlan" in spec:
        pkt = pkt / Dot1Q(vlan=spec["vlan"])
    payload = bytes.fromhex(spec.get("payload_hex", ""))
    size = spec.get("size", 100)
    if "ether_type" in spec:
        pkt.lastlayer().type = spec["ether_type"]
        data = bytes(pkt) + payload
        return data + bytes(max(0, size - len(data)))
    if spec.get("ipv6"):
        pkt = pkt / IPv6(src=spec.get("ip_src", "2001:db8::1"), dst=spec.get("ip_dst", "2001:db8::2"),
                         hlim=spec.get("ip_ttl", 64))
    else:
        pkt = pkt / IP(src=spec.get("ip_src", "10.0.0.1"), dst=spec.get("ip_dst", "10.0.0.2"),
                       ttl=spec.get("ip_ttl", 64), tos=spec.get("ip_tos", 0))
    l4 = spec.get("l4", "udp")
    if l4 == "udp":
        pkt = pkt / UDP(sport=spec.get("sport", 1234), dport=spec.get("dport", 80))
    elif l4 == "tcp":
        pkt = pkt / TCP(sport=spec.get("sport", 1234), dport=spec.get("dport", 80))
    elif l4 != "none":
        raise ValueError(f"frame: l4 {l4!r} is not udp, tcp or none")
    pad = max(0, size - len(bytes(pkt)) - len(payload))
    return bytes(pkt / Raw(payload + bytes(pad)))


def set_up(engine: Engine, case: Case) -> None:
    """Writes the case's control-plane state into the engine."""
    for port, value in case.port_metadata.items():
        engine.set_port_metadata(int(port), list(bytes.fromhex(value)))
    for group, replicas in case.mc_groups.items():
        engine.mc_group_set(int(group), [(int(p), int(r)) for p, r in replicas])
    for session in case.clone_sessions:
        engine.clone_session_set(session["session"], port=session.get("port"),
                                 truncate_bytes=session.get("truncate_bytes"))
    for vs in case.value_sets:
        mask = vs.get("mask")
        engine.value_set_add(vs["name"], to_int(vs["value"]), None if mask is None else to_int(mask))
    for m in case.members:
        engine.profile_member_set(m["profile"], m["member"], m["action"], m.get("params", {}))
    for g in case.groups:
        engine.profile_group_set(g["profile"], g["group"], g["members"])
    for reg in case.registers:
        engine.register_write(reg["name"], reg["index"], to_int(reg["value"]))
    for d in case.defaults:
        engine.table_set_default(d["table"], d["action"], d.get("params", {}))
    for e in case.entries:
        match = {k: tuple(v) if isinstance(v, list) else v for k, v in e["match"].items()}
        if "member" in e:
            engine.table_add_member(e["table"], match, e["member"], e.get("priority", 0))
        elif "group" in e:
            engine.table_add_group(e["table"], match, e["group"], e.get("priority", 0))
        else:
            engine.table_add(e["table"], match, e["action"], e.get("params", {}), e.get("priority", 0))


def deliver(engine: Engine, frame: bytes, port: int, loopback: list[int]) -> list[tuple[int, bytes]]:
    """Sends the frame; frames out on a loopback port go back in on it (an internal pipe's
    port in loopback mode), up to 8 times."""
    engine.send(port, frame, 0)
    out: list[tuple[int, bytes]] = []
    for _ in range(8):
        engine.drain()
        again = []
        for p, data, _t in engine.received():
            (again if p in loopback else out).append((p, data))
        if not again:
            break
        for p, data in again:
            engine.send(p, data, engine.now())
    return out


def check(engine: Engine, case: Case, out: list[tuple[int, bytes]], digests: int) -> list[str]:
    """What differs from the case's expectations, one line per difference."""
    problems = []
    ports = sorted(p for p, _ in out)
    if case.expect is not None and ports != sorted(case.expect):
        problems.append(f"ports {ports or 'none'}, expected {sorted(case.expect) or 'none'}")
    if case.expect_one_of is not None and (len(ports) != 1 or ports[0] not in case.expect_one_of):
        problems.append(f"ports {ports or 'none'}, expected one frame on one of {case.expect_one_of}")
    if case.expect_frame is not None and out:
        got, wanted = out[0][1], build_frame(case.expect_frame)
        if got != wanted:
            pairs = enumerate(zip(got, wanted, strict=False))
            at = next((i for i, (a, b) in pairs if a != b), min(len(got), len(wanted)))
            problems.append(f"frame on port {out[0][0]} differs from expect_frame at byte {at} "
                            f"(got {got[at:at + 8].hex()}…, {len(got)} bytes; expected "
                            f"{wanted[at:at + 8].hex()}…, {len(wanted)} bytes)")
    if case.expect_digests is not None and digests != case.expect_digests:
        problems.append(f"{digests} digests, expected {case.expect_digests}")
    for reg in case.expect_registers:
        got, wanted = engine.register_read(reg["name"], reg["index"]), to_int(reg["value"])
        if got != wanted:
            problems.append(f"register {reg['name']}[{reg['index']}] = {got:#x}, expected {wanted:#x}")
    for ctr in case.expect_counters:
        packets, _bytes = engine.counter_read(ctr["name"], ctr["index"])
        if packets != ctr["packets"]:
            problems.append(f"counter {ctr['name']}[{ctr['index']}] = {packets} packets, expected {ctr['packets']}")
    return problems


def first_line(error: BaseException) -> str:
    """The first non-empty line of an error's text, with its type when the text is empty."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def run_one(program: Program, target: str, folder: Path, case: Case | None) -> Row:
    """Compile, load, set up and send one frame; stop at the first stage that fails."""
    row = Row(program.name, target)
    if not program.runs_on(target):
        row.stage, row.message = "skip", "T2NA only: includes t2na.p4, never tna.p4"
        return row
    try:
        compiled = compile_program(program.path, [folder, program.path.parent], (), None, target)
    except Exception as e:  # noqa: BLE001 - every refusal is a figure, whatever raised it
        row.message = first_line(e)
        return row
    row.stage = "load"
    try:
        engine = Engine(json.dumps(compiled.json), seed=1)
    except Exception as e:  # noqa: BLE001
        row.message = first_line(e)
        return row
    case = case or Case()
    row.stage = "setup"
    try:
        set_up(engine, case)
        frame = build_frame(case.frame)
    except Exception as e:  # noqa: BLE001
        row.message = first_line(e)
        return row
    row.stage = "run"
    try:
        out = deliver(engine, frame, case.port, case.loopback_ports)
        row.ports = [port for port, _data in out]
        row.digests = len(engine.digests())
        row.checked = case.has_expectation
        row.problems = check(engine, case, out, row.digests)
    except Exception as e:  # noqa: BLE001
        row.message = first_line(e)
        return row
    row.stage = "done"
    return row


def outcome(row: Row) -> str:
    """The table's last column: where frames came out and whether that is the case's expectation."""
    if row.stage in ("skip", "compile", "load"):
        return ""
    if row.stage != "done":
        return f"{row.stage}: {row.message}"
    seen = "ports " + ", ".join(map(str, sorted(row.ports))) if row.ports else "dropped"
    if row.digests:
        seen += f" (+{row.digests} digest{'s' if row.digests > 1 else ''})"
    if row.matches is None:
        return seen
    if row.matches:
        return f"{seen} ✓"
    return f"{seen} ✗ ({'; '.join(p[:200] for p in row.problems)})"


def figures(rows: list[Row]) -> dict[str, Any]:
    """Counts per target and overall, and the refusals grouped by stage and reason."""
    out: dict[str, Any] = {"benchmark": "tna_examples", "programs": len({r.program for r in rows})}
    for target in sorted({r.target for r in rows}):
        mine = [r for r in rows if r.target == target and r.stage != "skip"]
        out[target] = {
            "pairs": len(mine),
            "skipped": sum(r.target == target and r.stage == "skip" for r in rows),
            "compiled": sum(r.stage != "compile" for r in mine),
            "loaded": sum(r.stage not in ("compile", "load") for r in mine),
            "ran": sum(r.stage == "done" for r in mine),
            "with_expectation": sum(r.matches is not None for r in mine),
            "as_expected": sum(r.matches is True for r in mine),
        }
    refusals: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.stage not in ("done", "skip"):
            refusals[f"{r.stage}: {group_key(r.message)}"].append(f"{r.program}/{r.target}")
        elif r.matches is False:
            kind = r.problems[0].split(" (got")[0]
            refusals[f"not as expected: {group_key(kind)}"].append(f"{r.program}/{r.target}")
    out["refusals"] = {k: sorted(v) for k, v in sorted(refusals.items(), key=lambda kv: (-len(kv[1]), kv[0]))}
    return out


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def markdown(rows: list[Row], figs: dict[str, Any]) -> str:
    """The per-pair table, the totals per target and the grouped refusals."""
    lines = ["| program | target | compiles | loads | frame out |", "|---|---|---|---|---|"]
    for r in rows:
        if r.stage == "skip":
            lines.append(f"| {r.program} | {r.target} | — ({r.message}) | | |")
            continue
        compiles = "yes" if r.stage != "compile" else f"no: {r.message}"
        loads = "" if r.stage == "compile" else ("yes" if r.stage != "load" else f"no: {r.message}")
        lines.append(f"| {r.program} | {r.target} | {cell(compiles)} | {cell(loads)} | {cell(outcome(r))} |")
    lines += ["", "| target | pairs | compile | load | run | as expected | skipped |",
              "|---|---|---|---|---|---|---|"]
    for target in (t for t in TARGETS if t in figs):
        f = figs[target]
        lines.append(f"| {target} | {f['pairs']} | {f['compiled']} | {f['loaded']} | {f['ran']} | "
                     f"{f['as_expected']} of {f['with_expectation']} | {f['skipped']} |")
    if figs["refusals"]:
        lines += ["", "Refusals by reason:", ""]
        for reason, pairs in figs["refusals"].items():
            lines.append(f"- {len(pairs)} × {reason}: {', '.join(pairs)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure every program of the given folder on each target."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--programs", type=Path, help="folder of TNA programs (searched recursively)")
    ap.add_argument("--cases", type=Path, default=CASES, help="case file (entries, frame, expected ports)")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated: tofino, tofino2")
    ap.add_argument("-k", dest="only", default="", help="only programs whose name contains this")
    ap.add_argument("--json", action="store_true", help="print one JSON line of figures, no table")
    args = ap.parse_args(argv)
    if args.programs is None:
        print(HOW_TO_FETCH, file=sys.stderr, end="")
        return 2
    if not args.programs.is_dir():
        print(f"error: --programs {args.programs}: not a folder", file=sys.stderr)
        return 2
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    bad = [t for t in targets if t not in TARGETS]
    if bad:
        print(f"error: --targets: unknown {bad} (known: {', '.join(TARGETS)})", file=sys.stderr)
        return 2
    programs = [p for p in discover(args.programs) if args.only in p.name]
    names = Counter(p.name for p in programs)
    if not programs:
        print(f"error: no .p4 file instantiating main under {args.programs}", file=sys.stderr)
        return 2
    if any(n > 1 for n in names.values()):
        dup = sorted(n for n, c in names.items() if c > 1)
        print(f"error: program names are not unique: {dup}", file=sys.stderr)
        return 2
    try:
        cases = load_cases(args.cases)
        plan = [(p, t, case_for(cases, p.name, t)) for p in programs for t in targets]
    except (ValueError, TypeError, json.JSONDecodeError) as e:
        print(f"error: --cases {args.cases}: {e}", file=sys.stderr)
        return 2
    rows = [run_one(p, t, args.programs, c) for p, t, c in plan]
    figs = figures(rows)
    print(json.dumps(figs) if args.json else markdown(rows, figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
