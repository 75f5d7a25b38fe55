"""make test's retry (the Makefile's `pytest` target) and CI's allow-list (.ci/check-retries):
a test that fails once and then passes is retried, printed and listed, and the target
passes; a test that fails twice fails it; CI fails on a retried test that
.ci/retry-allowed.txt does not name, and passes on one it names or when nothing was retried."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / ".ci" / "check-retries"

FLAKY = '''
from pathlib import Path

def test_steady():
    pass

def test_fails_first_time(tmp_path_factory):
    mark = Path(__file__).with_name("ran-once")
    if not mark.exists():
        mark.write_text("")
        raise AssertionError("first run")
'''

BROKEN = '''
def test_steady():
    pass

def test_always_fails():
    raise AssertionError("every run")
'''


def make_pytest(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess, Path]:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_suite.py").write_text(source)
    retried = tmp_path / "retried.txt"
    done = subprocess.run(["make", "--no-print-directory", "pytest",
                           f"PYTEST_ARGS={suite}", f"RETRIED={retried}",
                           f"PYTEST_CACHE={tmp_path / 'cache'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    return done, retried


def test_a_test_that_fails_once_is_retried_printed_and_listed(tmp_path):
    done, retried = make_pytest(tmp_path, FLAKY)
    assert done.returncode == 0, done.stdout + done.stderr
    (node,) = retried.read_text().splitlines()
    assert node.endswith("test_suite.py::test_fails_first_time")
    assert "make test: retrying the 1 failed test(s) once:" in done.stdout
    assert f"make test: retried {node}\n" in done.stdout


def test_a_test_that_fails_twice_fails_the_target(tmp_path):
    done, retried = make_pytest(tmp_path, BROKEN)
    assert done.returncode != 0
    (node,) = retried.read_text().splitlines()
    assert node.endswith("test_suite.py::test_always_fails")


def test_nothing_retried_leaves_no_list(tmp_path):
    done, retried = make_pytest(tmp_path, "def test_ok():\n    pass\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not retried.exists() and "retried" not in done.stdout


def check(tmp_path: Path, retried: str | None, allowed: str) -> subprocess.CompletedProcess:
    (tmp_path / "allowed.txt").write_text(allowed)
    if retried is not None:
        (tmp_path / "retried.txt").write_text(retried)
    return subprocess.run([str(CHECK), str(tmp_path / "retried.txt"),
                           str(tmp_path / "allowed.txt")], capture_output=True, text=True)


def test_ci_fails_on_a_retried_test_not_on_the_allow_list(tmp_path):
    allowed = "# why each may be retried\ntests/a.py::test_x   # a stall, issue 99\n"
    done = check(tmp_path, "tests/a.py::test_x\ntests/b.py::test_y\n", allowed)
    assert done.returncode == 1
    assert "retried, not on" in done.stderr and "tests/b.py::test_y" in done.stderr
    assert "retried (allowed by" in done.stdout and "tests/a.py::test_x" in done.stdout


def test_ci_passes_on_allowed_retries_and_on_none(tmp_path):
    allowed = "tests/a.py::test_x  # a stall\n"
    assert check(tmp_path, "tests/a.py::test_x\n", allowed).returncode == 0
    assert check(tmp_path, "", allowed).returncode == 0
    (tmp_path / "retried.txt").unlink()
    assert check(tmp_path, None, allowed).returncode == 0
    # A node id that only appears inside a comment is not allowed.
    assert check(tmp_path, "tests/c.py::test_z\n", "# tests/c.py::test_z\n").returncode == 1


def test_the_repository_allow_list_is_short_and_commented():
    lines = (ROOT / ".ci" / "retry-allowed.txt").read_text().splitlines()
    entries = [line for line in lines if line.split("#")[0].strip()]
    assert len(entries) <= 5
    assert all("#" in line for line in entries), "every entry says why"
