"""Scenario files: each mistake is a ScenarioError naming its key, `bufferlab-sim` exits 2
printing it; a good scenario runs and writes its CSVs."""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bufferlab.experiments.scenario import ScenarioError, load_scenario
from bufferlab.experiments.scenario.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "experiments" / "bcn" / "scenarios"
BUFFERLAB_SIM = Path(sys.executable).parent / "bufferlab-sim"


def _good() -> dict[str, Any]:
    """Seed 003's scenario with absolute paths, so it can be written anywhere."""
    data = json.loads((SCENARIOS / "seed003_50pct.json").read_text())
    data["topology"] = str(SCENARIOS / "seed003_topology.json")
    switch = data["switches"]["s1"]
    switch["config"] = str((SCENARIOS / switch["config"]).resolve())
    return data


def _without_s1_config(d: dict[str, Any]) -> None:
    del d["switches"]["s1"]["config"]


def _set(path: list[Any], value: Any) -> Any:
    def change(d: dict[str, Any]) -> None:
        for step in path[:-1]:
            d = d[step]
        d[path[-1]] = value
    return change


BAD = {
    "unknown top-level key": (_set(["duration"], 5), "(top level).duration"),
    "unknown source key": (_set(["sources", 1, "rate"], 5), "sources[1].rate"),
    "switch without a config": (_without_s1_config, "switches.s1"),
    "no entry for a switch": (_set(["switches"], {}), "switches"),
    "unknown host": (_set(["sources", 2, "host"], "ep9"), "sources[2].host"),
    "unknown destination": (_set(["sources", 0, "destination"], "h5"), "sources[0].destination"),
    "bad pattern": (_set(["sources", 0, "pattern"], "poisson"), "sources[0].pattern"),
    "bernoulli without load": (lambda d: d["sources"][3].pop("load"), "sources[3].load"),
    "bad reaction model": (_set(["sources", 0, "reaction"], {"model": "qcn"}),
                           "sources[0].reaction.model"),
    "class path without a colon": (
        _set(["sources", 1, "reaction"], {"model": "python", "class": "bufferlab.sim.examples"}),
        "sources[1].reaction.class"),
    "class that does not exist": (
        _set(["sources", 1, "reaction"], {"model": "python",
                                          "class": "bufferlab.sim.examples:Nope"}),
        "sources[1].reaction.class"),
    "module that does not exist": (
        _set(["sources", 1, "reaction"], {"model": "python", "class": "no_such_module:Model"}),
        "sources[1].reaction.class"),
    "bad model arguments": (
        _set(["sources", 1, "reaction"], {"model": "python",
                                          "class": "bufferlab.sim.examples:QcnReaction",
                                          "args": {"timer": 5}}),
        "sources[1].reaction.args"),
    "negative duration": (_set(["duration_ns"], -1), "duration_ns"),
    "bad record interval": (_set(["record"], {"interval_ns": "1ms"}), "record.interval_ns"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_scenario_names_its_key(case, tmp_path, capsys):
    change, key = BAD[case]
    data = _good()
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.key == key
    assert str(caught.value).startswith(f"{key}: ")
    assert main([str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"bufferlab-sim: {caught.value}\n"
    assert not (tmp_path / "out").exists()


def test_the_good_scenario_loads():
    # The base of every bad case above is itself good.
    scenario = load_scenario(SCENARIOS / "seed003_50pct.json")
    assert (scenario.duration_ns, scenario.seed, len(scenario.sources)) == (200_000_000, 1, 4)


def test_bufferlab_sim_exits_2_and_prints_the_key(tmp_path):
    data = _good()
    data["sources"][0]["when_full"] = "block"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    done = subprocess.run([str(BUFFERLAB_SIM), str(path)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("bufferlab-sim: sources[0].when_full: 'block'")
    assert done.stdout == ""


def test_bufferlab_sim_runs_a_short_scenario_and_writes_its_csvs(tmp_path, capsys):
    data = copy.deepcopy(_good())
    path = tmp_path / "short.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert main([str(path), "--duration-ns", "7000000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "7 ms of virtual time" in printed
    for name in ("series", "sources", "flows", "hosts", "switches", "links", "run"):
        assert (out / f"{name}.csv").stat().st_size > 0, name
    with (out / "run.csv").open() as f:
        run = next(csv.DictReader(f))
    assert (int(run["end_ns"]), int(run["seed"])) == (7_000_000, 1)
    with (out / "series.csv").open() as f:
        rows = list(csv.DictReader(f))
    # Sampled every 100 µs from 0 to 7 ms.
    assert [int(r["time_ns"]) for r in rows] == list(range(0, 7_000_001, 100_000))
    # Sources start at 5 ms: nothing offered before, about 0.5 × 10 Gbit/s × 2 ms after.
    assert int(rows[49]["source/EP0/offered_bytes"]) == 0  # 4.9 ms
    offered = int(rows[-1]["source/EP0/offered_bytes"])
    assert 0.4 * 1.25e9 * 0.002 < offered < 0.6 * 1.25e9 * 0.002
    with (out / "sources.csv").open() as f:
        sources = {r["source"]: r for r in csv.DictReader(f)}
    assert set(sources) == {"EP0", "EP1", "EP2", "EP3"}
    assert sources["EP0"]["host"] == "ep0"


def test_bufferlab_sim_refuses_a_zero_duration(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_good()))
    assert main([str(path), "--duration-ns", "0"]) == 2
    assert "--duration-ns must be positive" in capsys.readouterr().err
