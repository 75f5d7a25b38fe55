"""Runs the seed studies on each program: seed 000 (tor_switch) and seeds 003/001 (bcn),
once on `p4src/buffer_switch.p4` and once on its TNA port, every switch programmed from
the same controller configs, in virtual time. Each run writes its own study's files
(CSV, plots, report) into its own folder; `report.py` puts the two side by side."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bufferlab.controller.config import Config
from bufferlab.controller.tofino_mapping import tm_plan
from bufferlab.experiments.bcn import studies as bcn_studies
from bufferlab.experiments.bcn.experiment import Outcome
from bufferlab.experiments.bcn.experiment import run as run_bcn
from bufferlab.experiments.common.buffer_engine import PROGRAMS, TNA_PROGRAM, compiled_program
from bufferlab.experiments.common.buffer_engine import cell_bytes as program_cell_bytes
from bufferlab.experiments.scenario import load_scenario
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.experiment import RunResult
from bufferlab.experiments.tor_switch.experiment import run as run_tor
from bufferlab.experiments.tor_switch.switch_config import switch_config
from bufferlab.experiments.tor_switch.virtual_time import program_backend

#: The programs compared, in the report's column order.
COMPARED = ("v1model", "tna")


@dataclass
class Runs:
    """Both studies on both programs (a study left out is absent), and what the controller
    said while mapping their configs onto Tofino's TM."""

    tor: dict[str, RunResult]
    bcn: dict[str, Outcome]
    tor_config: TorConfig | None
    bcn_seeds: int
    mapping_notes: dict[str, list[str]]
    cell_bytes: int

    @property
    def passed(self) -> bool:
        """Whether every run ran and every binding check passed on both programs."""
        return (all(r.passed for r in self.tor.values())
                and all(o.passed for o in self.bcn.values()))


def _notes(configs: dict[str, Config], cell: int) -> dict[str, list[str]]:
    """Per config, the mapping's warnings (what Tofino does otherwise), and its TM lines."""
    out = {}
    for name, config in configs.items():
        plan = tm_plan(config, cell)
        out[name] = [*(f"warning: {w}" for w in plan.warnings),
                     *(f"`{line}`" for line in plan.commands)]
    return out


def bcn_configs() -> dict[str, Config]:
    """Every switch config the BCN study's scenarios use, by scenario and switch."""
    out = {}
    for study in bcn_studies.studies(1):
        scenario = load_scenario(study.scenario)
        for name, spec in scenario.switches.items():
            if spec.config is not None:
                out[f"{study.scenario.name} {name}"] = spec.config
    return out


def run(out: str | Path, tor_config: TorConfig | None, bcn_seeds: int | None,
        jobs: int | None = 1, progress_out: TextIO | None = None,
        scheduler: str | None = None) -> Runs:
    """Runs seed 000 on ``tor_config``'s grid (None: not at all) and the BCN study with
    ``bcn_seeds`` seeds per seed-001 variant (None: not at all), each on both programs,
    into ``out``/<study>_<program>, their trials on the grid runner (``jobs`` local
    workers, or the Dask cluster at ``scheduler``)."""
    out = Path(out)
    tor: dict[str, RunResult] = {}
    bcn: dict[str, Outcome] = {}
    for program in COMPARED:
        if tor_config is not None:
            tor[program] = run_tor(tor_config, program_backend(tor_config, program),
                                   out / f"tor_switch_{program}", progress_out, jobs=jobs,
                                   scheduler=scheduler)
        if bcn_seeds is not None:
            bcn[program] = run_bcn(out / f"bcn_{program}", seeds_001=bcn_seeds,
                                   progress_out=progress_out, jobs=jobs, scheduler=scheduler,
                                   program=None if program == "v1model" else PROGRAMS[program])
    cell = program_cell_bytes(compiled_program(TNA_PROGRAM)) or 80
    configs: dict[str, Config] = {}
    if tor_config is not None:
        configs["seed 000 switch, port C at 50 %"] = switch_config(tor_config, 50)
    if bcn_seeds is not None:
        configs.update(bcn_configs())
    return Runs(tor, bcn, tor_config, bcn_seeds or 0, _notes(configs, cell), cell)
