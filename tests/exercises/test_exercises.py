"""The exercises: every solution passes its `make check` on a live network, and every
skeleton compiles and runs the same check to its end, failing where the student's part is
missing (a check that passed a skeleton would not tell the student anything)."""

from __future__ import annotations

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
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.MULTILINE)


def make_check(name: str, out: Path, p4: str | None = None) -> subprocess.CompletedProcess:
    """`make check` in exercises/<name>, its build, logs and captures under `out`."""
    argv = ["make", "-s", "-C", str(ROOT / "exercises" / name), "check",
            f"BUILD_DIR={out}/build", f"LOG_DIR={out}/logs", f"PCAP_DIR={out}/pcaps"]
    if p4 is not None:
        argv.append(f"P4={p4}")
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
