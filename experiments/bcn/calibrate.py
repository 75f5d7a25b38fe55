"""Calibration of the 2006 BCN features against seeds 003 and 001 (issue 27).

    python -m bufferlab.experiments.bcn.calibrate [--full] [--seeds N] [--jobs 1]

Every setting runs seed 003 at both loads and seed 001 with and without 802.3x on the
grid runner, and is judged by the study's twelve checks. The default grid is each feature
alone plus every combination of the four that move a figure (drift, initial rate, Fb
quantisation, max increase), with ``--seeds`` (3) seed-001 runs per variant; the best
documented setting is then rerun with the study's 10 seeds. ``--full`` runs every
combination of every feature's documented values with 10 seeds. Settings with an
undocumented Fb range (a page-count field of 8 or 9 bits, on all off, on drift alone and on
the best setting) are run beside them as evidence of what the seeds' transient would need;
they are never chosen.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bufferlab.analysis.report import Report
from bufferlab.experiments.bcn import settings as st_set
from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.bcn.checks import checks_001, checks_003
from bufferlab.experiments.bcn.evaluation import EDGES, Run001, Run003, evaluate_001, evaluate_003
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.common.grid import add_grid_arguments, jobs_error, run_grid, where
from bufferlab.experiments.scenario import load_scenario, run_scenario

#: The features that move a figure in the one-at-a-time grid (the others are inert in the
#: seeds' single-congestion-point networks; README "Calibration" says why).
ACTIVE = ("drift", "initial rate", "Fb quantisation", "max increase")
CONFIRM_SEEDS = 10


@dataclass(frozen=True)
class CalTrial:
    """One run: a setting (by index), a study, a seed."""

    index: int
    setting: st_set.Setting
    key: str
    seed: int


def run_cal_trial(trial: CalTrial) -> Run003 | Run001:
    """Runs one trial and returns its figures (module-level so grid workers can run it)."""
    study = {s.key: s for s in st.studies()}[trial.key]
    scenario = st_set.apply(load_scenario(study.scenario), trial.setting)
    run = run_scenario(scenario, trial.seed)
    return evaluate_003(run) if trial.key.startswith("003") else evaluate_001(run)


@dataclass
class Outcome:
    """A setting's figures over its runs and the twelve checks."""

    setting: st_set.Setting
    runs: dict[str, list[Run003 | Run001]]
    checks: list[Check]

    @property
    def passed(self) -> int:
        """Checks passed."""
        return sum(c.passed for c in self.checks)

    def miss(self) -> float:
        """How far the failing checks are from passing, summed in units of each
        tolerance (0 when all pass): the tie-break between settings passing as many."""
        out = 0.0
        for key, (tx, rx, dropped) in st.SEED_003.items():
            r = self.runs[key][0]
            assert isinstance(r, Run003)
            worst = max(abs(g / e - 1) for g, e in zip((r.transmitted, r.received,
                                                        r.dropped_at_rlq), (tx, rx, dropped),
                                                       strict=True))
            out += max(0.0, worst / 0.02 - 1)
            out += max(0.0, (0.99 * st.LINK_BPS - r.egress_min_bps) / (0.01 * st.LINK_BPS))
            out += float(r.switch_drops > 0)
        base = [r for r in self.runs["001_baseline"] if isinstance(r, Run001)]
        pause = [r for r in self.runs["001_8023x"] if isinstance(r, Run001)]
        out += max(0.0, (0.95 - float(np.mean([r.fairness_index for r in base]))) / 0.02)
        out += max(0.0, (float(np.mean([r.deviation_max for r in base])) - 0.30) / 0.06)
        out += float(np.mean([r.switch_drops == 0 for r in base]))
        out += float(np.mean([r.switch_drops + r.host_drops > 0 for r in pause]))
        out += float(np.mean([not _spread(r) for r in pause]))
        return out


def _spread(r: Run001) -> bool:
    return any(r.edge_pause_frames[e] > 0 and r.edge_max_queue_bytes[e] >= st.XOFF_BYTES
               for e in EDGES)


def evaluate(chosen: Sequence[st_set.Setting], seeds_001: int, jobs: int | None,
             scheduler: str | None, progress: bool = True) -> list[Outcome]:
    """Runs every setting's 2 + 2 × ``seeds_001`` trials on the grid; one `Outcome` each."""
    keys = [("003_50", (1,)), ("003_49", (1,)),
            ("001_baseline", tuple(range(1, seeds_001 + 1))),
            ("001_8023x", tuple(range(1, seeds_001 + 1)))]
    trials = [CalTrial(i, s, key, seed) for i, s in enumerate(chosen)
              for key, seeds in keys for seed in seeds]
    done = [0]
    started = time.monotonic()

    def tick(trial: CalTrial, result: object) -> None:
        done[0] += 1
        if progress:
            print(f"[{done[0]}/{len(trials)} {time.monotonic() - started:.0f} s] setting "
                  f"{trial.index + 1}, {trial.key} seed {trial.seed}"
                  f"{'' if result is not None else ': FAILED'}", file=sys.stderr)

    outcome = run_grid(trials, run_cal_trial,
                       lambda t: f"setting {t.index} {t.key} seed {t.seed}",
                       jobs=jobs, scheduler=scheduler, on_done=tick)
    for failure in outcome.failures:
        print(failure.line(), file=sys.stderr)
    out = []
    for i, s in enumerate(chosen):
        runs: dict[str, list[Run003 | Run001]] = {k: [] for k, _ in keys}
        for trial, result in zip(trials, outcome.results, strict=True):
            if trial.index == i and result is not None:
                runs[trial.key].append(result)
        if not all(runs.values()):
            continue
        checks: list[Check] = []
        for key in ("003_50", "003_49"):
            r = runs[key][0]
            assert isinstance(r, Run003)
            checks += checks_003(key, r)
        checks += checks_001([r for r in runs["001_baseline"] if isinstance(r, Run001)],
                             [r for r in runs["001_8023x"] if isinstance(r, Run001)])
        out.append(Outcome(s, runs, checks))
    return out


def default_grid() -> list[st_set.Setting]:
    """Each feature alone, then every combination of the active ones not yet listed."""
    out = st_set.one_at_a_time()
    names = [f.replace(" ", "_") for f in ACTIVE]
    for r in range(2, len(ACTIVE) + 1):
        for combo in itertools.combinations(names, r):
            out.append(st_set.setting(**{n: 1 for n in combo}))
    return out


def evidence(top: st_set.Setting) -> list[st_set.Setting]:
    """The undocumented narrow Fb fields on all off, on drift alone and on ``top``."""
    out: list[st_set.Setting] = []
    for base in (st_set.setting(), st_set.setting(drift=1), top):
        for bits in st_set.NARROW_FB_FIELDS:
            s = st_set.narrow_field(base, bits)
            if s.name not in {o.name for o in out}:
                out.append(s)
    return out


def best(outcomes: Sequence[Outcome]) -> Outcome:
    """The documented setting passing most checks, then nearest to passing the rest."""
    documented = [o for o in outcomes if o.setting.documented]
    return min(documented, key=lambda o: (-o.passed, o.miss()))


def _counts(r: Run003) -> str:
    return f"{r.transmitted:,} / {r.received:,} / {r.dropped_at_rlq:,}"


def row(o: Outcome) -> list[object]:
    """One line of the grid table."""
    r50, r49 = o.runs["003_50"][0], o.runs["003_49"][0]
    assert isinstance(r50, Run003) and isinstance(r49, Run003)
    base = [r for r in o.runs["001_baseline"] if isinstance(r, Run001)]
    pause = [r for r in o.runs["001_8023x"] if isinstance(r, Run001)]
    return [
        o.setting.name + ("" if o.setting.documented else " †"),
        _counts(r50), _counts(r49),
        f"{r50.egress_min_bps / 1e9:.2f} / {r49.egress_min_bps / 1e9:.2f}",
        float(np.mean([r.fairness_index for r in base])),
        float(np.mean([r.deviation_max for r in base])),
        f"{sum(r.switch_drops > 0 for r in base)} of {len(base)} "
        f"(mean {np.mean([r.switch_drops for r in base]):,.0f})",
        f"{sum(r.switch_drops + r.host_drops for r in pause)}",
        f"{sum(_spread(r) for r in pause)} of {len(pause)}",
        f"{o.passed}/12",
    ]


HEADERS = ["setting (features on)", "003 50 %: tx / rx / dropped", "003 49 %: tx / rx / dropped",
           "003 lowest 1-ms egress 50 / 49 % (Gbit/s)", "001 mean FI", "001 mean max |δ|",
           "001 baseline: seeds with switch drops", "001 + 802.3x drops",
           "001 + 802.3x: seeds PAUSE spreads", "checks"]


def moves(outcomes: Sequence[Outcome]) -> list[list[object]]:
    """Per feature switched on alone: the change of each figure from all off."""
    base = next(o for o in outcomes if o.setting.name == "all off")
    b = row(base)
    out = []
    for o in outcomes:
        on = [f for f in st_set.FEATURES
              if o.setting.label(f) != st_set.FEATURES[f][0].label]
        if len(on) != 1 or not o.setting.documented:
            continue
        r = row(o)
        changed = [HEADERS[i] for i in range(1, len(HEADERS) - 1) if r[i] != b[i]]
        out.append([on[0], o.setting.label(on[0]), "; ".join(changed) or "nothing",
                    f"{base.passed} → {o.passed}"])
    return out


def write_csv(outcomes: Sequence[Outcome], path: Path) -> Path:
    """The grid, one row per setting."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["documented", *st_set.FEATURES, *HEADERS[1:]])
        for o in outcomes:
            writer.writerow([o.setting.documented,
                             *(o.setting.label(f) for f in st_set.FEATURES), *row(o)[1:]])
    return path


def report(outcomes: Sequence[Outcome], confirmed: Outcome | None, seeds_001: int,
           grid: str, wall_s: float, out: Path) -> Path:
    """report.md: the grid, what each feature moves, the chosen setting's checks."""
    rep = Report("BCN calibration: the 2006 features against seeds 003 and 001")
    rep.paragraph(f"{len(outcomes)} settings ({grid}); seed 003 at both loads once, seed 001 "
                  f"with and without 802.3x over {seeds_001} seeds each; {wall_s:.0f} s. "
                  "The seeds' own parameters (Qeq 375 pages, W 2, sampling 150 KB ± jitter, "
                  "Gi 0.53, Gd 2.6e-4, Ru 1 Mbit/s, buffers, times) are fixed. † marks a "
                  "setting with an undocumented value (evidence only, never chosen).")
    rep.section("Which feature moves which figure (each alone, from all off)")
    rep.table(["feature", "value", "figures it changes", "checks passed"], moves(outcomes))
    rep.section("The grid")
    ranked = sorted(outcomes, key=lambda o: (-o.passed, o.miss()))
    rep.table(HEADERS, [row(o) for o in ranked], digits=3)
    chosen = confirmed or best(outcomes)
    rep.section(f"Best documented setting: {chosen.setting.name}")
    seeds = len(chosen.runs["001_baseline"])
    rep.paragraph(f"Its twelve checks with {seeds} seed-001 runs per variant:")
    rep.paragraph("\n".join(f"- {c.line()}" for c in chosen.checks))
    return rep.write(out / "report.md")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the grid, writes report.md and calibration.csv, prints the ranking."""
    p = argparse.ArgumentParser(prog="python -m bufferlab.experiments.bcn.calibrate",
                                description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true",
                   help="every combination of every feature's documented values, with the "
                        f"study's {CONFIRM_SEEDS} seed-001 runs per variant (long)")
    p.add_argument("--seeds", type=int,
                   help="seed-001 runs per variant in the grid (default: 3; 10 with --full)")
    add_grid_arguments(p, "runs")
    p.add_argument("--out", default="results/bcn_calibration",
                   help="folder for report.md and calibration.csv (default: %(default)s)")
    args = p.parse_args(argv)
    seeds = args.seeds or (CONFIRM_SEEDS if args.full else 3)
    if seeds < 1 or jobs_error(args.jobs):
        print(f"error: {jobs_error(args.jobs) or '--seeds: need at least 1'}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"runs: {where(args.jobs, args.scheduler)}")
    started = time.monotonic()
    grid = st_set.factorial() if args.full else default_grid()
    name = ("every combination of documented values" if args.full
            else "each feature alone, and every combination of " + ", ".join(ACTIVE))
    outcomes = evaluate(grid, seeds, args.jobs, args.scheduler)
    if not outcomes:
        print("error: no setting ran", file=sys.stderr)
        return 1
    top = best(outcomes)
    outcomes += evaluate(evidence(top.setting), seeds, args.jobs, args.scheduler)
    confirmed = None
    if seeds < CONFIRM_SEEDS:
        confirmed = evaluate([top.setting], CONFIRM_SEEDS, args.jobs, args.scheduler)[0]
    wall = time.monotonic() - started
    path = report(outcomes, confirmed, seeds, name, wall, out)
    write_csv(outcomes, out / "calibration.csv")
    chosen = confirmed or top
    print(f"\nbest documented setting: {chosen.setting.name} "
          f"({chosen.passed}/12 with {len(chosen.runs['001_baseline'])} seed-001 runs)")
    for check in chosen.checks:
        print(check.line())
    print(f"\n{wall:.0f} s; report: {path}\n        {out / 'calibration.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
