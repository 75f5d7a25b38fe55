"""Scenarios: one description of a network and its workload for both worlds.

A scenario file names a topology (the tutorials' `topology.json` form with link rates,
delays and wire overheads, as `bufferlab.mininet` reads it), a controller config per
switch (what `bufferlab-ctl apply` reads), the sources, what to record and how long to
run. `bufferlab-sim SCENARIO.json` runs it in virtual time (`run`); the same topology and
configs bring the network up live in Mininet (`live`) where its rates allow.
"""

from bufferlab.experiments.scenario.run import ScenarioRun, build_simulation, run_scenario
from bufferlab.experiments.scenario.spec import (
    Scenario,
    ScenarioError,
    SwitchSpec,
    load_scenario,
    parse_scenario,
)

__all__ = [
    "Scenario",
    "ScenarioError",
    "ScenarioRun",
    "SwitchSpec",
    "build_simulation",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
]
