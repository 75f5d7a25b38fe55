"""bench/tools/compare.py: ABBA interleaving, figures from JSON lines, the ratio table."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# compare.py imports its neighbours (instructions.py, workload.py), as a script run there would.
sys.path.insert(0, str(ROOT / "bench" / "tools"))
spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "bench" / "tools" / "compare.py")
compare = importlib.util.module_from_spec(spec)
sys.modules["bench_compare"] = compare
spec.loader.exec_module(compare)


def fake_python(tmp_path: Path, name: str, rate: float, log: Path, fail: bool = False) -> Path:
    """An executable standing in for a side's Python: logs its name, prints one figure."""
    exe = tmp_path / f"python-{name}"
    body = "exit 3" if fail else f"echo '{json.dumps({'bench': 'x', 'pps': rate, 'ok': True})}'"
    exe.write_text(f"#!/bin/sh\necho {name} \"$1\" >> {log}\necho warming up\n{body}\n")
    exe.chmod(0o755)
    return exe


def test_figures_are_the_numbers_of_the_last_json_line():
    out = 'noise\n{"a": 1}\n{"bench": "b", "pps": 12, "gbps": 0.5, "flag": true, "unit": "pps"}\n'
    assert compare.figures_of(out) == {"pps": 12.0, "gbps": 0.5}
    with pytest.raises(ValueError):
        compare.figures_of("no json here\n")


def test_sides_alternate_abba_and_ratios_are_per_round(tmp_path):
    log = tmp_path / "order.log"
    base = compare.Side("base", fake_python(tmp_path, "base", 100.0, log), tmp_path)
    tree = compare.Side("tree", fake_python(tmp_path, "tree", 125.0, log), ROOT)
    samples = compare.measure("engine_pps", base, tree, 4, 30.0)
    order = [line.split()[0] for line in log.read_text().splitlines()]
    assert order == ["base", "tree", "tree", "base", "base", "tree", "tree", "base"]
    (row,) = compare.table("engine_pps", samples)
    assert row["figure"] == "pps" and row["runs"] == 4
    assert (row["base_median"], row["tree_median"]) == (100.0, 125.0)
    assert row["ratio_median"] == pytest.approx(1.25)
    assert (row["ratio_min"], row["ratio_max"]) == (pytest.approx(1.25), pytest.approx(1.25))


def test_a_base_that_cannot_run_the_trees_script_runs_its_own(tmp_path):
    log = tmp_path / "order.log"
    own = tmp_path / "bench" / "engine_pps.py"
    own.parent.mkdir()
    own.write_text("")
    wrapper = tmp_path / "python-base"
    # Fails on the tree's script, succeeds on the base's own copy.
    wrapper.write_text(f"#!/bin/sh\necho base \"$1\" >> {log}\n"
                       f"[ \"$1\" = {own} ] || exit 1\necho '{{\"pps\": 50}}'\n")
    wrapper.chmod(0o755)
    base = compare.Side("base", wrapper, tmp_path)
    tree = compare.Side("tree", fake_python(tmp_path, "tree", 100.0, log), ROOT)
    samples = compare.measure("engine_pps", base, tree, 2, 30.0)
    assert [s["pps"] for s in samples.base] == [50.0, 50.0]
    assert any("ran its own copy" in note for note in samples.notes)


def test_a_failing_tree_is_an_error_not_a_figure(tmp_path):
    log = tmp_path / "order.log"
    base = compare.Side("base", fake_python(tmp_path, "base", 100.0, log), tmp_path)
    tree = compare.Side("tree", fake_python(tmp_path, "tree", 0.0, log, fail=True), ROOT)
    with pytest.raises(RuntimeError, match="tree"):
        compare.measure("engine_pps", base, tree, 1, 30.0)


def test_an_unknown_base_commit_is_refused_by_name():
    with pytest.raises(SystemExit, match="not-a-commit"):
        compare.resolve("not-a-commit")
