"""The compiler checked against itself: a program and its meaning-preserving rewrites
must give the same packets.

For each STF case (`tests/stf/X[.variant].stf` against `tests/p4/X.p4`, and
`tests/stf/tna/` against `tests/p4/tna/`), the program is compiled and run as it is (the
baseline), then rewritten by one mutation of `bufferlab.compiler.mutate` at one site,
printed back to P4, compiled from that source and run on the same STF file. Every frame,
every value read back and the final registers, counters and digests must match the
baseline (`stf_observe.difference`). `print_only`, the program printed back unchanged, counts
as a mutation with one site per case, so a printer fault is not taken for a mutation's.

    differential.py --seed 7 --count 300        # 300 mutants, spread over mutations
    differential.py --count 0                   # every site of every case
    differential.py --steps 4 --count 100       # 100 walks of up to 4 stacked mutations
    differential.py --replay side_effect_order:split_compound_assignments:0

Outcomes: `same`; `differ` (a wrong output: the compiler, or a mutation that is not
meaning-preserving); `refused` (the compiler rejects a rewritten program it should
take); `crash` (an internal error). Each non-`same` outcome prints the case, the
mutation, the site (`file:line:col` in the original program; in a walk, in the program
the step before printed), the first difference, the mutant's source path and the lines
the mutation changed. With `--steps N` each mutant is a walk: mutations stacked one on
another's output, each checked, stopping at the first finding, which is then one rewrite
of a program that behaved as the original (the smallest failing mutation). Exit status 1
when any outcome is not `same`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from stf_observe import Observation, difference, observe  # noqa: E402

from bufferlab.compiler import ast  # noqa: E402
from bufferlab.compiler.api import compile_program  # noqa: E402
from bufferlab.compiler.diagnostics import CompileError  # noqa: E402
from bufferlab.compiler.frontend import load  # noqa: E402
from bufferlab.compiler.mutate import MUTATIONS, Site  # noqa: E402
from bufferlab.compiler.printer import print_program  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PRINT_ONLY = "print_only"

Mutation = Callable[[ast.Program, str], list[Site]]


@dataclass(frozen=True)
class Case:
    """One STF file and the program it runs against."""

    name: str
    program: Path
    stf: Path

    @property
    def include_dirs(self) -> list[Path]:
        """Where the program's own `#include "..."` files are."""
        return [self.program.parent]



@dataclass
class Outcome:
    """What one mutant did."""

    case: Case
    mutation: str
    index: int
    status: str
    site: Site | None = None
    detail: str = ""
    mutant: Path | None = None
    changed: str = ""
    #: The steps of a walk before this one (each behaved as the original).
    earlier: list[str] = field(default_factory=list)
    arch: str = "v1model"

    def report(self) -> str:
        """The multi-line report of a non-`same` outcome."""
        where = f"{self.site.pos}: {self.site.what}" if self.site else "the program printed back unchanged"
        lines = [f"{self.status.upper()} {self.case.stf.relative_to(ROOT)}: {self.mutation} site {self.index}: {where}",
                 f"  {self.detail}"]
        if self.earlier:
            lines.append(f"  after {len(self.earlier)} earlier steps that behaved as the original:")
            lines += [f"    {step}" for step in self.earlier]
        if self.mutant is not None:
            arch = f"--arch {self.arch} " if self.arch != "v1model" else ""
            lines.append(f"  mutant: {self.mutant} (run it: .venv/bin/bufferlab-stf {arch}{self.mutant} "
                         f"{self.case.stf.relative_to(ROOT)})")
        if not self.earlier:
            lines.append(f"  replay: .venv/bin/python fuzz/python/differential.py --replay "
                         f"{self.case.name}:{self.mutation}:{self.index}")
        if self.changed:
            lines += ["  " + line for line in self.changed.splitlines()]
        return "\n".join(lines)


def find_cases(root: Path = ROOT) -> list[Case]:
    """Every STF case of tests/stf (v1model) and tests/stf/tna, with its program."""
    cases = []
    for sub in ("", "tna"):
        for stf in sorted((root / "tests" / "stf" / sub).glob("*.stf")):
            program = root / "tests" / "p4" / sub / f"{stf.name.split('.', 1)[0]}.p4"
            if program.exists():
                name = f"{sub}/{stf.stem}" if sub else stf.stem
                cases.append(Case(name, program, stf))
    return cases


@dataclass
class Baseline:
    """The original program's run, and the architecture and target it was compiled for (a
    printed mutant has no `#include` to tell them)."""

    observation: Observation
    arch: str
    target: str


def baseline(case: Case) -> Baseline:
    """Compile the case's program as bufferlab-stf does and run its STF file."""
    compiled = compile_program(case.program, case.include_dirs)
    return Baseline(observe(json.dumps(compiled.json), case.stf), compiled.arch, compiled.target)


def mutant_source(case: Case, mutation: Mutation | None, index: int, target: Path,
                  base: Baseline | None = None) -> tuple[Site | None, str, str]:
    """(site, original printed, mutant printed) for site `index` of `mutation` (None: no
    rewrite). Each call loads the program afresh: a rewrite edits the tree it was found in.
    `base` gives the architecture (a printed mutant's cannot be told from an `#include`)."""
    program_file = str(case.program)
    checked = _load(case, base)
    before = print_program(checked.program, program_file, str(target))
    if mutation is None:
        return None, before, before
    sites = mutation(checked.program, program_file)
    site = sites[index]
    site.rewrite()
    return site, before, print_program(checked.program, program_file, str(target))


def _load(case: Case, base: Baseline | None) -> object:
    """The checked program of a case (for `base`'s architecture and target when given)."""
    if base is None:
        return load(case.program, case.include_dirs)
    return load(case.program, case.include_dirs, arch=base.arch, target=base.target)


def site_counts(case: Case, mutations: dict[str, Mutation], base: Baseline | None = None) -> dict[str, int]:
    """How many sites each mutation finds in a case's program."""
    checked = _load(case, base)
    return {name: len(fn(checked.program, str(case.program))) for name, fn in mutations.items()}


def check_mutant(case: Case, base: Baseline, name: str, mutation: Mutation | None, index: int,
                 out_dir: Path, label: str | None = None) -> Outcome:
    """Rewrite, compile and run one mutant against `base` (the original's run); the mutant's
    source is `out_dir/<case>/<label>.p4` (default label: `<mutation>-<site>`)."""
    target = out_dir / case.name / f"{label or f'{name}-{index}'}.p4"
    target.parent.mkdir(parents=True, exist_ok=True)
    outcome = Outcome(case, name, index, "same", mutant=target, arch=base.arch)
    try:
        site, before, after = mutant_source(case, mutation, index, target, base)
    except Exception:  # noqa: BLE001 - a mutation's own fault is reported, not raised
        outcome.status, outcome.detail = "crash", "the mutation failed: " + traceback.format_exc(limit=3)
        outcome.mutant = None
        return outcome
    outcome.site = site
    target.write_text(after)
    outcome.changed = _changed_lines(before, after)
    try:
        json_text = json.dumps(compile_program(target, case.include_dirs, arch=base.arch, target=base.target).json)
    except CompileError as exc:
        outcome.status, outcome.detail = "refused", exc.format().splitlines()[0]
        return outcome
    except Exception as exc:  # noqa: BLE001 - an internal compiler error is a finding
        outcome.status, outcome.detail = "crash", f"the compiler raised {type(exc).__name__}: {exc}"
        return outcome
    diff = difference(base.observation, observe(json_text, case.stf))
    if diff is not None:
        outcome.status, outcome.detail = "differ", diff
    return outcome


def _changed_lines(before: str, after: str, limit: int = 24) -> str:
    """The unified diff of two printed programs, cut to `limit` lines."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "original", "mutant",
                                      n=1, lineterm=""))
    return "\n".join(lines[:limit] + (["..."] if len(lines) > limit else []))


def plan(counts: dict[str, dict[str, int]], seed: int, count: int) -> list[tuple[str, str, int]]:
    """(case, mutation, site) triples: `count` of them (0: all), drawn with `seed` from every
    mutation's sites in turn, so a mutation with few sites still gets its share."""
    rng = random.Random(seed)
    pools: dict[str, list[tuple[str, str, int]]] = {}
    for case, per_mutation in sorted(counts.items()):
        for name, n in per_mutation.items():
            pools.setdefault(name, []).extend((case, name, k) for k in range(n))
    for pool in pools.values():
        rng.shuffle(pool)
    chosen: list[tuple[str, str, int]] = []
    while any(pools.values()) and (count == 0 or len(chosen) < count):
        for name in sorted(pools):
            if pools[name] and (count == 0 or len(chosen) < count):
                chosen.append(pools[name].pop())
    return sorted(chosen)


def walk(case: Case, base: Baseline, first: tuple[str, int], mutations: dict[str, Mutation], steps: int,
         rng: random.Random, out_dir: Path, label: str) -> list[Outcome]:
    """Mutations stacked: `first` on the case's program, then up to `steps - 1` more drawn
    with `rng`, each on the program the step before printed, each checked against the
    original's run. A walk stops at its first finding, which is then the smallest failing
    mutation: one rewrite of a program that still behaved as the original."""
    outcomes: list[Outcome] = []
    current, (name, k) = case, first
    for step in range(steps):
        mutation = mutations.get(name) if name != PRINT_ONLY else None
        outcome = check_mutant(current, base, name, mutation, k, out_dir, f"{label}-{step}-{name}-{k}")
        outcome.earlier = [f"{o.mutation} site {o.index}: {o.site}" for o in outcomes]
        outcomes.append(outcome)
        if outcome.status != "same" or step == steps - 1:
            break
        current = Case(case.name, outcome.mutant, case.stf)
        counts = {n: c for n, c in site_counts(current, mutations, base).items() if c}
        if not counts:
            break
        name = rng.choice(sorted(counts))
        k = rng.randrange(counts[name])
    return outcomes


def run(cases: list[Case], mutations: dict[str, Mutation], seed: int, count: int, out_dir: Path,
        echo: Callable[[str], None] = print, steps: int = 1) -> list[Outcome]:
    """Check `count` mutants (0: all) of `cases`; with `steps` above 1, each is the first
    of a walk of stacked mutations (`walk`)."""
    by_name = {c.name: c for c in cases}
    counts = {c.name: {PRINT_ONLY: 1, **site_counts(c, mutations)} for c in cases}
    chosen = plan(counts, seed, count)
    outcomes: list[Outcome] = []
    baselines: dict[str, Baseline] = {}
    for case_name, name, k in chosen:
        case = by_name[case_name]
        if case_name not in baselines:
            baselines[case_name] = baseline(case)
        if steps > 1:
            rng = random.Random(f"{seed}:{case_name}:{name}:{k}")
            for outcome in walk(case, baselines[case_name], (name, k), mutations, steps, rng, out_dir,
                                f"walk-{name}-{k}"):
                outcomes.append(_noted(outcome, echo))
            continue
        mutation = mutations.get(name) if name != PRINT_ONLY else None
        outcomes.append(_noted(check_mutant(case, baselines[case_name], name, mutation, k, out_dir), echo))
    return outcomes


def _noted(outcome: Outcome, echo: Callable[[str], None]) -> Outcome:
    if outcome.status != "same":
        echo(outcome.report())
    return outcome


def summary(outcomes: list[Outcome]) -> str:
    """One line per mutation: mutants tried and their outcomes."""
    table: dict[str, Counter] = {}
    for o in outcomes:
        table.setdefault(o.mutation, Counter())[o.status] += 1
    lines = []
    for name, c in sorted(table.items()):
        lines.append(f"  {name:32} {sum(c.values()):5} mutants: {c['same']} same, {c['differ']} differ, "
                     f"{c['refused']} refused, {c['crash']} crash")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: exit status 0 when every mutant behaves as its original."""
    ap = argparse.ArgumentParser(prog="differential.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock, printed)")
    ap.add_argument("--count", type=int, default=200, help="mutants to check (0: every site of every case)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--mutations", default="", help=f"comma-separated, of: {', '.join(MUTATIONS)}")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz" / "differential",
                    help="where mutants' sources are written")
    ap.add_argument("--steps", type=int, default=1,
                    help="mutations stacked per mutant, each checked (a walk stops at its first finding)")
    ap.add_argument("--replay", metavar="CASE:MUTATION:SITE", help="check one mutant and print its source diff")
    args = ap.parse_args(argv)
    mutations = {n: MUTATIONS[n] for n in args.mutations.split(",") if n} if args.mutations else dict(MUTATIONS)
    unknown = [n for n in args.mutations.split(",") if n and n not in MUTATIONS]
    if unknown:
        ap.error(f"unknown mutations {unknown}")
    cases = find_cases()
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if c.name in wanted]
        if not cases:
            ap.error(f"no case named {sorted(wanted)}")
    if args.replay:
        return _replay(args.replay, cases, args.out)
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    started = time.monotonic()
    walks = f", walks of up to {args.steps} stacked mutations" if args.steps > 1 else ""
    print(f"differential: seed {seed}, {args.count or 'all'} mutants of {len(cases)} STF cases "
          f"({len(mutations)} mutations{walks}); mutants in {args.out}", flush=True)
    outcomes = run(cases, mutations, seed, args.count, args.out, steps=args.steps)
    bad = [o for o in outcomes if o.status != "same"]
    print(summary(outcomes))
    print(f"differential: seed {seed}: {len(outcomes)} mutants checked, {len(bad)} findings, "
          f"{time.monotonic() - started:.0f} s")
    return 1 if bad else 0


def _replay(spec: str, cases: list[Case], out_dir: Path) -> int:
    """Check one mutant named `case:mutation:site` and print what it changed."""
    try:
        case_name, name, index = spec.rsplit(":", 2)
        case = next(c for c in cases if c.name == case_name)
        mutation = None if name == PRINT_ONLY else MUTATIONS[name]
        k = int(index)
    except (ValueError, StopIteration, KeyError):
        print(f"error: --replay {spec}: expected CASE:MUTATION:SITE of a known case and mutation", file=sys.stderr)
        return 2
    outcome = check_mutant(case, baseline(case), name, mutation, k, out_dir)
    print(outcome.report() if outcome.status != "same" else
          f"SAME {case.name}: {name} site {k}: {outcome.site}\n{outcome.changed}")
    return 0 if outcome.status == "same" else 1


if __name__ == "__main__":
    sys.exit(main())
