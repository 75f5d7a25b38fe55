"""A/B benchmark comparison: the working tree against a fixed base commit, interleaved.

`make bench-compare BASE=<commit>` (or `python bench/tools/compare.py <commit>`) builds the
base commit in a scratch folder (a git worktree with its own virtualenv and cargo target
directory, removed afterwards unless --keep), then runs each selected benchmark of the
working tree's `bench/` N times on each side, alternating ABBA so that a machine whose speed
drifts during the run favours neither side. Both sides run the working tree's benchmark
script, so they measure the same thing with the same inputs; a script the base cannot run
(an API it lacks) falls back to the base's own copy of that script, and the table says so.

Every numeric field of a benchmark's JSON line is a figure. For each, the table gives the
median on each side, the median of the per-round ratios (tree / base: above 1 means the
working tree's figure is larger, which is faster for a rate and slower for a time) and the
ratios' range, so a claim can be read with its spread.

`--instructions` (`make bench-compare BASE=<commit> IR=1`) adds, for each workload of
`workload.py`, the machine instructions one frame-hop or packet costs on each side, counted
by callgrind (`instructions.py`): a figure that does not move with the machine's load, run
once per side.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import instructions
from workload import COUNTED

ROOT = Path(__file__).resolve().parents[2]
SCRATCH = ROOT / "build" / "bench-compare"
# Benchmarks that need arguments, root-only live networks or tens of minutes are left out
# of the default set; name them with --bench to run them.
NOT_BY_DEFAULT = {"p4c_samples", "soak", "experiment_tor_switch"}


@dataclass
class Side:
    """One side of the comparison: a name, its Python and the folder it was built from."""

    name: str
    python: Path
    source: Path


@dataclass
class Samples:
    """Per-round figures of one benchmark on both sides, and notes on how they were taken."""

    base: list[dict[str, float]] = field(default_factory=list)
    tree: list[dict[str, float]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def git(*args: str, cwd: Path = ROOT) -> str:
    """Run git in `cwd` and return its standard output, stripped."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def resolve(commit: str) -> str:
    """The full hash of `commit`, or a clear error when git does not know it."""
    try:
        return git("rev-parse", "--verify", f"{commit}^{{commit}}")
    except subprocess.CalledProcessError:
        sys.exit(f"bench-compare: error: BASE={commit!r} is not a commit of this repository")


def build_base(sha: str, scratch: Path) -> Side:
    """Check `sha` out into a worktree and build it into a virtualenv of its own."""
    source, venv, target = scratch / "src", scratch / "venv", scratch / "target"
    stamp = scratch / "built"
    python = venv / "bin" / "python"
    if stamp.exists():
        print(f"bench-compare: reusing the base build in {scratch}", flush=True)
        return Side("base", python, source)
    if source.exists():
        discard_base(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    print(f"bench-compare: building {sha[:12]} in {scratch} (worktree, venv, cargo target)",
          flush=True)
    git("worktree", "add", "--detach", str(source), sha)
    # The same recipe as the Makefile's set-up: Debian's Python with its site-packages (for
    # Mininet), then one editable install that builds the Rust engine, into its own target.
    run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)])
    run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip", "setuptools", "wheel",
         "setuptools-rust"])
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "-e", str(source)],
        env=env)
    stamp.touch()
    return Side("base", python, source)


def discard_base(scratch: Path) -> None:
    """Remove the base's worktree registration and its scratch folder."""
    source = scratch / "src"
    if source.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(source)], cwd=ROOT,
                       capture_output=True)
    shutil.rmtree(scratch, ignore_errors=True)
    subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)


def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    """Run a build step, showing its output only when it fails."""
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        sys.exit(f"bench-compare: error: {' '.join(cmd[:4])} … failed ({done.returncode})")


def figures_of(stdout: str) -> dict[str, float]:
    """The numeric fields of the last JSON object line a benchmark printed."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            record = json.loads(line)
            return {k: float(v) for k, v in record.items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)}
    raise ValueError("printed no JSON line")


def run_bench(side: Side, script: Path, timeout_s: float) -> dict[str, float]:
    """Run one benchmark script once with one side's Python and return its figures."""
    done = subprocess.run([str(side.python), str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip()
                           else f"exit {done.returncode}")
    return figures_of(done.stdout)


def measure(name: str, base: Side, tree: Side, runs: int, timeout_s: float) -> Samples:
    """Run benchmark `name` `runs` times on each side, ABBA-interleaved."""
    samples = Samples()
    tree_script = ROOT / "bench" / f"{name}.py"
    base_script = tree_script
    for i in range(runs):
        order = (base, tree) if i % 2 == 0 else (tree, base)
        for side in order:
            script = base_script if side is base else tree_script
            try:
                figures = run_bench(side, script, timeout_s)
            except RuntimeError as error:
                own = base.source / "bench" / f"{name}.py"
                if side is not base or script == own or not own.exists():
                    raise RuntimeError(f"{side.name}: {error}") from None
                samples.notes.append(f"the base cannot run the tree's {name}.py ({error}); "
                                     "it ran its own copy")
                base_script = own
                figures = run_bench(side, own, timeout_s)
            (samples.base if side is base else samples.tree).append(figures)
            print(f"  {name} round {i + 1}/{runs} {side.name}: done", flush=True)
    return samples


def table(name: str, samples: Samples) -> list[dict[str, object]]:
    """One row per figure both sides reported: medians, median ratio and its range."""
    rows = []
    keys = [k for k in samples.tree[0] if all(k in s for s in samples.base + samples.tree)]
    for key in keys:
        base_values = [s[key] for s in samples.base]
        tree_values = [s[key] for s in samples.tree]
        ratios = [t / b for b, t in zip(base_values, tree_values, strict=True) if b != 0]
        rows.append({
            "bench": name, "figure": key,
            "base_median": statistics.median(base_values),
            "tree_median": statistics.median(tree_values),
            "ratio_median": statistics.median(ratios) if ratios else None,
            "ratio_min": min(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None,
            "runs": len(ratios),
        })
    return rows


def number(value: float) -> str:
    """A figure as the table prints it: integers grouped, small values to three places."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3f}"


def print_table(sha: str, rows: list[dict[str, object]], notes: list[str]) -> None:
    """Print the comparison as a Markdown table (for commit messages and closing notes)."""
    print(f"\nbench-compare: working tree against {sha[:12]} (tree / base; >1 = larger figure)")
    print("| benchmark | figure | base median | tree median | ratio | range | n |")
    print("|---|---|---:|---:|---:|---|---:|")
    for r in rows:
        ratio = "—" if r["ratio_median"] is None else f"{r['ratio_median']:.3f}"
        spread = "—" if r["ratio_min"] is None else f"{r['ratio_min']:.3f}–{r['ratio_max']:.3f}"
        print(f"| {r['bench']} | {r['figure']} | {number(r['base_median'])} | "
              f"{number(r['tree_median'])} | {ratio} | {spread} | {r['runs']} |")
    for note in notes:
        print(f"note: {note}")


def count_instructions(base: Side, tree: Side, timeout_s: float) -> list[dict[str, object]]:
    """One row per workload: instructions per unit on each side and their ratio."""
    rows: list[dict[str, object]] = []
    for name in COUNTED:
        print(f"bench-compare: instructions of workload {name} (callgrind)", flush=True)
        figures = {side.name: instructions.per_unit(side.python, name, ROOT, timeout_s)
                   for side in (base, tree)}
        for key, base_value in figures["base"].items():
            tree_value = figures["tree"][key]
            ratio = tree_value / base_value if base_value else None
            rows.append({"bench": "instructions", "figure": key, "base_median": base_value,
                         "tree_median": tree_value, "ratio_median": ratio, "ratio_min": ratio,
                         "ratio_max": ratio, "runs": 1})
    return rows


def default_benches() -> list[str]:
    """Every benchmark of bench/ that runs unattended in minutes without arguments."""
    return [p.stem for p in sorted((ROOT / "bench").glob("*.py")) if p.stem not in NOT_BY_DEFAULT]


def main() -> int:
    """Build the base, run the benchmarks alternately, print the table and one JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("base", help="the commit to compare against (hash, tag, branch, HEAD~3)")
    ap.add_argument("--runs", type=int, default=5, help="rounds per side per benchmark")
    ap.add_argument("--bench", action="append", default=[],
                    help="a benchmark of bench/ by name (repeatable or comma-separated; "
                         "default: all but " + ", ".join(sorted(NOT_BY_DEFAULT))
                         + "; 'none' with --instructions counts instructions only)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per benchmark run")
    ap.add_argument("--instructions", action="store_true",
                    help="also count each workload's instructions per frame-hop or packet "
                         "with callgrind (load-independent; needs valgrind)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the base's build in build/bench-compare/ and reuse it next time")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    names = [n for arg in args.bench for n in arg.split(",") if n] or default_benches()
    if names == ["none"]:
        names = []
    unknown = [n for n in names if not (ROOT / "bench" / f"{n}.py").exists()]
    if unknown:
        ap.error(f"no such benchmark in bench/: {', '.join(unknown)}")

    sha = resolve(args.base)
    scratch = SCRATCH / sha[:12]
    tree = Side("tree", Path(sys.executable), ROOT)
    started = time.monotonic()
    base = build_base(sha, scratch)
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    failed = False
    try:
        for name in names:
            print(f"bench-compare: {name}, {args.runs} rounds per side", flush=True)
            try:
                samples = measure(name, base, tree, args.runs, args.timeout)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
                notes.append(f"{name} not compared: {error}")
                failed = True
                continue
            rows += table(name, samples)
            notes += [f"{name}: {n}" for n in dict.fromkeys(samples.notes)]
        if args.instructions:
            try:
                rows += count_instructions(base, tree, args.timeout)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                notes.append(f"instructions not compared: {error}")
                failed = True
    finally:
        if not args.keep:
            discard_base(scratch)
    print_table(sha, rows, notes)
    print(json.dumps({"bench": "bench_compare", "base": sha, "runs": args.runs,
                      "wall_s": round(time.monotonic() - started), "rows": rows}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
