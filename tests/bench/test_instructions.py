"""bench/tools/instructions.py: callgrind's count per unit of work, steady state."""

import fnmatch
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "tools"))

import instructions  # noqa: E402
from workload import COUNTED  # noqa: E402


def fake_valgrind(tmp_path: Path, log: Path, fixed: int, per_unit: int) -> None:
    """A `valgrind` on PATH: logs its arguments, does 10 units per scale step and reports
    `fixed` + `per_unit` instructions per unit, as callgrind's summary line says it."""
    exe = tmp_path / "bin" / "valgrind"
    exe.parent.mkdir()
    exe.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        'for a; do scale=$a; done\n'
        'units=$((10 * scale))\n'
        f'echo "==1== Collected : $(({fixed} + {per_unit} * units))" >&2\n'
        'echo "{\\"units\\": $units}"\n')
    exe.chmod(0o755)


def test_the_difference_of_two_scales_is_the_cost_of_one_unit(tmp_path, monkeypatch):
    log = tmp_path / "args.log"
    fake_valgrind(tmp_path, log, fixed=5_000_000, per_unit=1_234)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    got = instructions.per_unit(Path(sys.executable), "sim", ROOT, 30.0)
    assert got == {"sim_instructions_per_frame_hop": 1_234.0}
    runs = [line.split() for line in log.read_text().splitlines()]
    assert [run[-2:] for run in runs] == [["sim", "1"], ["sim", "2"]]
    for run in runs:
        assert run[0] == "--tool=callgrind" and "--smc-check=all-non-file" in run
        assert [a for a in run if a.startswith("--toggle-collect=")] == [
            f"--toggle-collect={p}" for p in COUNTED["sim"]]


def test_a_workload_without_a_count_is_an_error_not_a_figure(tmp_path, monkeypatch):
    exe = tmp_path / "bin" / "valgrind"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho '{\"units\": 10}'\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    with pytest.raises(RuntimeError, match="printed no count"):
        instructions.per_unit(Path(sys.executable), "engine_l3_64B", ROOT, 30.0)


def test_without_valgrind_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="apt-get install valgrind"):
        instructions.per_unit(Path(sys.executable), "sim", ROOT, 30.0)


EXTENSIONS = {
    "sim": ROOT / "sim" / "python" / "_sim.cpython-311-x86_64-linux-gnu.so",
    "engine_l2_64B": ROOT / "switch" / "python" / "_engine.cpython-311-x86_64-linux-gnu.so",
}


@pytest.mark.parametrize("name", sorted(EXTENSIONS))
def test_each_counted_pattern_names_one_function_of_the_built_extension(name):
    """callgrind toggles collection on entering a matched function and again on leaving
    it, so a pattern that matched two nested functions (the Python entry point and the
    Rust method it calls) would count only what lies between them."""
    so = EXTENSIONS[name]
    if not so.exists() or shutil.which("nm") is None:
        pytest.skip(f"needs the built {so.name} and nm")
    out = subprocess.run(["nm", "-C", "--defined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    names = {line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2}
    for pattern in COUNTED[name]:
        matched = sorted(n for n in names if fnmatch.fnmatchcase(n, pattern))
        assert len(matched) == 1, (pattern, matched)
