"""The BCN study: every run, its figures, the checks, plots, CSVs and the report."""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TextIO

from bufferlab.analysis.progress import Progress
from bufferlab.experiments.bcn import plots
from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.bcn.checks import checks_001, checks_003
from bufferlab.experiments.bcn.evaluation import Run001, Run003, evaluate_001, evaluate_003
from bufferlab.experiments.bcn.report import write_report
from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.common.grid import TrialFailure, run_grid
from bufferlab.experiments.scenario import ScenarioRun, load_scenario, run_scenario

#: The congestion point's set-point in both seeds (375 pages of 64 bytes), KB.
QEQ_KB = 24.0
#: runs.csv column of each per-source or per-switch figure.
DICT_COLUMNS = {"rates_bps": "rate_{}_bps", "edge_max_queue_bytes": "max_queue_{}_bytes",
                "edge_pause_frames": "pause_sent_by_{}_frames"}


@dataclass
class StudyRuns:
    """One study's runs: per seed, the run and its figures."""

    study: st.Study
    runs: dict[int, ScenarioRun] = field(default_factory=dict)
    figures: dict[int, Run003 | Run001] = field(default_factory=dict)


@dataclass
class Outcome:
    """What `run` produced."""

    studies: dict[str, StudyRuns]
    checks: list[Check]
    report: Path
    csv: list[Path]
    plots: list[Path]
    wall_s: float
    failures: list[TrialFailure]

    @property
    def passed(self) -> bool:
        """Whether every run ran and every check passed."""
        return not self.failures and all(c.passed for c in self.checks)


@dataclass(frozen=True)
class Trial:
    """One run of the study: a scenario file, a seed, the duration override, and the P4
    program every switch runs instead of the scenario's (None: the scenario's own)."""

    key: str
    scenario: Path
    seed: int
    duration_ns: int | None
    program: Path | None = None


def run_trial(trial: Trial) -> tuple[ScenarioRun, Run003 | Run001]:
    """Runs one trial and computes its figures (module-level so grid workers can run it)."""
    scenario = load_scenario(trial.scenario)
    if trial.duration_ns is not None:
        scenario.duration_ns = trial.duration_ns
    if trial.program is not None:
        scenario.switches = {name: replace(spec, program=trial.program)
                             for name, spec in scenario.switches.items()}
    run = run_scenario(scenario, trial.seed)
    return run, evaluate_003(run) if trial.key.startswith("003") else evaluate_001(run)


def _trial_name(trial: Trial) -> str:
    return f"{trial.key} seed {trial.seed}"


def _run_studies(selected: list[st.Study], duration_ns: int | None,
                 progress_out: TextIO | None, jobs: int | None,
                 scheduler: str | None, program: Path | None = None
                 ) -> tuple[dict[str, StudyRuns], list[TrialFailure]]:
    trials = [Trial(study.key, study.scenario, seed, duration_ns, program)
              for study in selected for seed in study.seeds]

    progress = Progress(len(trials), label="bcn", out=progress_out)

    def done(trial: Trial, result: tuple[ScenarioRun, Run003 | Run001] | None) -> None:
        what = "FAILED" if result is None else f"{result[0].wall_s:.2f} s"
        progress.step(f"{_trial_name(trial)}: {what}")

    outcome = run_grid(trials, run_trial, _trial_name, jobs=jobs, scheduler=scheduler,
                       on_done=done)
    out = {study.key: StudyRuns(study) for study in selected}
    for trial, result in zip(trials, outcome.results, strict=True):
        if result is not None:
            out[trial.key].runs[trial.seed], out[trial.key].figures[trial.seed] = result
    return {k: v for k, v in out.items() if v.runs}, outcome.failures


def _write_runs_csv(studies: dict[str, StudyRuns], out: Path) -> Path:
    rows = []
    for key, runs in studies.items():
        for seed, figures in runs.figures.items():
            row = {"study": key, "seed": seed, "wall_s": round(runs.runs[seed].wall_s, 3),
                   "frame_hops": runs.runs[seed].results.run["frame_hops"]}
            for name, value in asdict(figures).items():
                if isinstance(value, dict):
                    row.update({DICT_COLUMNS[name].format(k): round(v) for k, v in value.items()})
                else:
                    row[name] = value
            rows.append(row)
    header: list[str] = []
    for row in rows:
        header.extend(k for k in row if k not in header)
    path = out / "runs.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _plots(studies: dict[str, StudyRuns], out: Path) -> list[Path]:
    figures: list[Path] = []
    fig = out / "plots"
    for key in ("003_50", "003_49"):
        if key not in studies:
            continue
        runs = studies[key]
        seed = min(runs.runs)
        r = runs.runs[seed].results
        label = f"{runs.study.title}, seed {seed}"
        figures += [
            plots.queue(r, "switch/s1/port/5/queue_bytes", fig / f"{key}_core_buffer.png",
                        f"core buffer ({label})", {"Qeq 24 KB": QEQ_KB}),
            plots.regulator_rates(r, fig / f"{key}_rlq_rate.png", f"RLQ rate ({label})"),
            plots.accepted(r, fig / f"{key}_accepted_load.png", f"accepted load ({label})"),
            plots.links(r, {"egress to EP4": "s1-p5>ep4"}, fig / f"{key}_egress.png",
                        f"egress throughput ({label})"),
            plots.rlq(r, fig / f"{key}_rlq_length.png", f"RLQ length ({label})"),
        ]
    if "001_baseline" in studies:
        runs = studies["001_baseline"]
        by_fi = sorted(runs.figures, key=lambda s: runs.figures[s].fairness_index)
        for tag, seed in (("best", by_fi[-1]), ("worst", by_fi[0])):
            r = runs.runs[seed].results
            label = f"baseline, {tag} FI, seed {seed}"
            figures += [
                plots.regulator_rates(r, fig / f"001_target_rate_{tag}.png",
                                      f"target rate ({label})", st.FAIR_SHARE_BPS),
                plots.queue(r, "switch/s1/port/3/queue_bytes", fig / f"001_buffer_{tag}.png",
                            f"switch output buffer ({label})",
                            {"1 MB": 1048.576, "Qeq 24 KB": QEQ_KB}),
                plots.queue(r, "switch/s1/port/3/queue_bytes",
                            fig / f"001_buffer_{tag}_near_qeq.png",
                            f"switch output buffer near Qeq ({label})", {"Qeq 24 KB": QEQ_KB},
                            y_range_kb=(0.0, 4 * QEQ_KB)),
                plots.rlq(r, fig / f"001_rlq_{tag}.png", f"rate controller queue ({label})"),
            ]
    for key, name in (("001_baseline", "baseline"), ("001_8023x", "802.3x")):
        if key not in studies:
            continue
        runs = studies[key]
        seed = min(runs.runs)
        r = runs.runs[seed].results
        label = f"{name}, seed {seed}"
        figures += [
            plots.links(r, {"uplink B1": "s2-p3>s1-p1", "uplink B2": "s3-p3>s1-p2"},
                        fig / f"001_{name}_uplinks.png", f"uplink rates ({label})"),
            plots.queue(r, "switch/s2/port/3/queue_bytes", fig / f"001_{name}_b1_buffer.png",
                        f"uncongested switch buffer, B1 ({label})",
                        {"XOFF": st.XOFF_BYTES / 1e3} if key == "001_8023x" else None),
            plots.links(r, {"to S5": "s1-p3>h5"}, fig / f"001_{name}_congested_link.png",
                        f"throughput on the congested link ({label})"),
            plots.queue(r, "switch/s1/port/3/queue_bytes",
                        fig / f"001_{name}_congested_buffer.png",
                        f"congested switch buffer ({label})",
                        {"XOFF": st.XOFF_BYTES / 1e3} if key == "001_8023x" else None),
        ]
    return figures


def run(out: str | Path, seeds_001: int = 10, only: str | None = None,
        duration_ns: int | None = None, progress_out: TextIO | None = None,
        jobs: int | None = 1, scheduler: str | None = None,
        program: Path | None = None) -> Outcome:
    """Runs the study (``only`` "003" or "001" for one seed's part) into ``out``, its runs on
    the grid runner (``jobs`` local workers, or the Dask cluster at ``scheduler``), with one
    progress line per finished run (standard error unless ``progress_out``); every switch
    runs ``program`` (e.g. the TNA port) when given, programmed from the same configs."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    selected = [s for s in st.studies(seeds_001) if only is None or s.key.startswith(only)]
    studies, failures = _run_studies(selected, duration_ns, progress_out, jobs, scheduler,
                                     program)
    checks: list[Check] = []
    for key in ("003_50", "003_49"):
        if key in studies:
            seed = min(studies[key].figures)
            checks += checks_003(key, studies[key].figures[seed])
    baseline = list(studies["001_baseline"].figures.values()) if "001_baseline" in studies else []
    pause = list(studies["001_8023x"].figures.values()) if "001_8023x" in studies else []
    checks += checks_001(baseline, pause)
    csv_paths = [_write_runs_csv(studies, out)]
    for key, runs in studies.items():
        seed = min(runs.runs)
        csv_paths += runs.runs[seed].results.write_csv(out / f"{key}_seed{seed}")
    figures = _plots(studies, out)
    wall = sum(r.wall_s for s in studies.values() for r in s.runs.values())
    report = write_report(out / "report.md", studies, checks, figures)
    return Outcome(studies, checks, report, csv_paths, figures, wall, failures)
