"""Conformance on p4c's v1model sample programs: compile %, load % and STF pass % (issues 13, 30).

Not part of `make test`: the samples are p4c's code and live outside this repository.
Given a directory of `testdata/p4_16_samples` programs (`X.p4` with `X.stf`), each is
compiled with bufferlab-p4c and, when it compiles, its STF test runs on bufferlab-stf,
each in its own process with a time limit. The switch's loader refuses every operand
encoding simple_switch refuses (issue 30), so "loaded" counts the JSONs real BMv2 would
load as far as those encodings go. Prints the percentages, then every failure grouped by
its message (locations, names and numbers taken out so that programs failing for one
reason land in one group), then one JSON line of figures.

    .venv/bin/python bench/p4c_samples.py /work/p4c-samples [-j 2] [--timeout 60]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent


@dataclass
class Outcome:
    """What happened to one sample: `stage` is compile, stf or pass; `message` says why not."""

    name: str
    stage: str
    message: str = ""


def first_line(text: str) -> str:
    """The first non-empty line of a tool's output."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no output)")


def group_key(message: str) -> str:
    """A message with its location, quoted names and numbers replaced, to group alike failures."""
    message = re.sub(r"^(error: |FAIL )?\S+?:\d+(:\d+)?: ", "", message)
    message = re.sub(r"^(error|FAIL): ", "", message)
    message = re.sub(r"'[^']*'", "'…'", message)
    message = re.sub(r"\b(0x[0-9a-fA-F]+|[0-9a-fA-F]{6,}|\d+)\b", "N", message)
    return message[:160]


def run_sample(program: Path, stf: Path, timeout_s: float) -> Outcome:
    """Compile one sample and run its STF test."""
    name = program.stem
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.json"
        try:
            done = subprocess.run(
                [str(BIN / "bufferlab-p4c"), str(program), "-o", str(out)],
                capture_output=True, text=True, timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            return Outcome(name, "compile", f"compile took more than {timeout_s:g} s")
        if done.returncode != 0:
            return Outcome(name, "compile", first_line(done.stderr))
        try:
            done = subprocess.run(
                [str(BIN / "bufferlab-stf"), str(out), str(stf)],
                capture_output=True, text=True, timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            return Outcome(name, "stf", f"STF run took more than {timeout_s:g} s")
        if done.returncode != 0:
            return stf_failure(name, out, done.returncode, done.stdout, done.stderr)
    return Outcome(name, "pass")


def stf_failure(name: str, json_path: Path, returncode: int, stdout: str, stderr: str) -> Outcome:
    """What a failed bufferlab-stf run says: the JSON refused at load (exit 2, the error
    names the JSON file), or the STF run failing (exit 1: a frame; 2: anything else)."""
    if returncode == 2 and stderr.lstrip().startswith(f"error: {json_path}:"):
        return Outcome(name, "load", first_line(stderr).replace(f"{json_path}: ", "", 1))
    return Outcome(name, "stf", first_line(stdout if returncode == 1 else stderr))


def samples(directory: Path) -> list[tuple[Path, Path]]:
    """Every `X.p4` in `directory` that has an `X.stf` beside it."""
    return [(p, p.with_suffix(".stf")) for p in sorted(directory.glob("*.p4")) if p.with_suffix(".stf").exists()]


def report(outcomes: list[Outcome]) -> dict:
    """Print the percentages and the grouped failures; return the figures."""
    total = len(outcomes)
    compiled = [o for o in outcomes if o.stage != "compile"]
    loaded = [o for o in compiled if o.stage != "load"]
    passed = [o for o in outcomes if o.stage == "pass"]

    def pct(n: int) -> float:
        return round(100.0 * n / total, 1) if total else 0.0

    figures = {
        "benchmark": "p4c_samples",
        "samples": total,
        "compiled": len(compiled),
        "loaded": len(loaded),
        "stf_passed": len(passed),
        "compile_pct": pct(len(compiled)),
        "load_pct": pct(len(loaded)),
        "stf_pass_pct": pct(len(passed)),
    }
    print(f"compile: {len(compiled)}/{total} ({figures['compile_pct']} %)")
    print(f"load (BMv2-strict): {len(loaded)}/{total} ({figures['load_pct']} %)")
    print(f"STF pass: {len(passed)}/{total} ({figures['stf_pass_pct']} %)")
    for stage in ("compile", "load", "stf"):
        groups: dict[str, list[Outcome]] = defaultdict(list)
        for o in outcomes:
            if o.stage == stage:
                groups[group_key(o.message)].append(o)
        if groups:
            print(f"\n{stage} failures by message:")
        for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(members):3d}  {key}")
            for o in members:
                print(f"         {o.name}: {o.message}")
    return figures


def main(argv: list[str] | None = None) -> int:
    """Measure every sample in the given directory."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("directory", type=Path, help="p4c sample programs with their .stf files")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="samples run at once (processes)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per compile and per STF run")
    args = ap.parse_args(argv)
    pairs = samples(args.directory)
    if not pairs:
        print(f"error: no X.p4 with X.stf in {args.directory}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda pair: run_sample(*pair, args.timeout), pairs))
    figures = report(outcomes)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
