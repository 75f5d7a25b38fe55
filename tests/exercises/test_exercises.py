"""The exercises: every solution passes its `make check` on a live network, and every
skeleton compiles and runs the same check to its end, failing where the student's part is
missing (a check that passed a skeleton would not tell the student anything). The Tofino
variants (`make check PROGRAM=tna`) of bcn_congestion_point and pause: their solutions pass
the same check on the lab's TNA port, with the TM set from the same config."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet"),
]

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted(p.parent.name for p in (ROOT / "exercises").glob("*/check.py"))
TNA_VARIANTS = ["bcn_congestion_point", "pause"]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.MULTILINE)


def make_check(name: str, out: Path, p4: str | None = None, program: str | None = None,
               target: str | None = None) -> subprocess.CompletedProcess:
    """`make check` in exercises/<name>, its build, logs and captures under `out`."""
    argv = ["make", "-s", "-C", str(ROOT / "exercises" / name), "check",
            f"BUILD_DIR={out}/build", f"LOG_DIR={out}/logs", f"PCAP_DIR={out}/pcaps"]
    if p4 is not None:
        argv.append(f"P4={p4}")
    if program is not None:
        argv.append(f"PROGRAM={program}")
    if target is not None:
        argv.append(f"TARGET={target}")
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=300)
    finally:
        # A check interrupted half-way leaves a record of its network: remove what it names.
        subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "bufferlab.mininet.cleanup"],
                       capture_output=True, timeout=60)


def leftover_namespaces() -> list[str]:
    """Namespace names an exercise check gives its hosts (blx<port>-h<N>)."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.startswith("blx")]


def test_there_are_the_five_exercises():
    assert EXERCISES == ["bcn_congestion_point", "classes", "dynamic_threshold", "pause",
                         "shared_buffer"]
    assert sorted(p.parent.parent.name for p in (ROOT / "exercises").glob("*/solution/*_tna.p4")) \
        == TNA_VARIANTS
    for name in EXERCISES:
        folder = ROOT / "exercises" / name
        for part in (f"{name}.p4", f"solution/{name}.p4", "topology.json", "s1-config.json",
                     "README.md", "Makefile"):
            assert (folder / part).is_file(), f"{name}/{part}"
        assert len((folder / "Makefile").read_text().splitlines()) == 3


@pytest.mark.parametrize("name", EXERCISES)
def test_the_solution_passes_its_check(name, tmp_path):
    done = make_check(name, tmp_path, f"solution/{name}.p4")
    summary = SUMMARY.findall(done.stdout)
    assert done.returncode == 0 and summary and summary[-1][1] == "0", done.stdout + done.stderr
    assert int(summary[-1][0]) >= 4
    assert "FAIL" not in done.stdout
    assert (tmp_path / "build" / f"{name}.json").is_file()
    assert (tmp_path / "logs" / "s1-p4runtime-requests.txt").read_text().count("[Write]") == 2
    assert leftover_namespaces() == []


@pytest.mark.parametrize("name", EXERCISES)
def test_the_skeleton_compiles_runs_and_fails_its_check(name, tmp_path):
    done = make_check(name, tmp_path)
    summary = SUMMARY.findall(done.stdout)
    assert "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "build" / f"{name}.json").is_file(), done.stderr
    assert done.returncode != 0 and summary and int(summary[-1][1]) >= 1, done.stdout
    assert leftover_namespaces() == []


#: Per Tofino generation: its cell size and the exercises' 64,000-byte pool in its cells.
TARGETS = {"tofino": (80, 800), "tofino2": (176, 363)}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("name", TNA_VARIANTS)
def test_the_tna_solution_passes_its_check(name, target, tmp_path):
    done = make_check(name, tmp_path, f"solution/{name}_tna.p4", program="tna", target=target)
    summary = SUMMARY.findall(done.stdout)
    assert done.returncode == 0 and summary and summary[-1][1] == "0", done.stdout + done.stderr
    assert int(summary[-1][0]) >= 6
    assert "FAIL" not in done.stdout
    cell, pool = TARGETS[target]
    document = json.loads((tmp_path / "build" / f"{name}_tna.json").read_text())
    assert document["target_info"]["cell_bytes"] == cell
    assert (tmp_path / "logs" / "s1-p4runtime-requests.txt").read_text().count("[Write]") == 2
    # The TM got the config's pool, and each line was accepted.
    tm = (tmp_path / "logs" / "s1-tm-commands.txt").read_text()
    assert f"tm_pool_cfg EG_APP_POOL_0 size_cells={pool}\nEG_APP_POOL_0: {pool} cells" in tm
    assert f"program {tmp_path}/build/{name}_tna.json (tna for {target})" in \
        (tmp_path / "logs" / "s1.log").read_text()
    assert leftover_namespaces() == []


@pytest.mark.parametrize("name,argument,message", [
    ("shared_buffer", "PROGRAM=tna", "shared_buffer has no Tofino variant (PROGRAM=tna)"),
    ("pause", "PROGRAM=t2na", "PROGRAM=t2na: use v1model (the default) or tna"),
])
def test_make_names_a_program_an_exercise_does_not_have(name, argument, message, tmp_path):
    done = subprocess.run(["make", "-s", "-C", str(ROOT / "exercises" / name), "check", argument,
                           f"BUILD_DIR={tmp_path}/build"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and message in done.stderr, done.stderr
    assert not (tmp_path / "build").exists()


def test_the_tna_variant_without_a_skeleton_points_at_its_solution(tmp_path):
    # pause has no TNA skeleton: on Tofino its part is the TM's, set from the config.
    done = subprocess.run(["make", "-s", "-C", str(ROOT / "exercises" / "pause"), "check",
                           "PROGRAM=tna", f"BUILD_DIR={tmp_path}/build"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "pause_tna.p4: no such file (the Tofino variant's solution: P4=solution/pause_tna.p4)" \
        in done.stdout
