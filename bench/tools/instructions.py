"""Machine instructions per unit of work, counted by callgrind: the figure a loaded machine
cannot skew.

Wall and CPU time on a shared two-core machine vary by tens of per cent from one run to
the next, even interleaved; the number of instructions a fixed workload executes does not.
Each workload of `workload.py` runs twice under `valgrind --tool=callgrind`, at scale 1 and
at scale 2, counting only its packet-path functions; the difference divided by the
difference in units is the steady-state cost of one unit (warm-up, first allocations and
anything else a run does once cancel out). Fewer instructions is not always less time
(cache misses, branch mispredictions and SIMD width differ), so a speed claim gives this
beside the interleaved timings.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from workload import COUNTED, UNIT

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "workload.py"
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def valgrind() -> str:
    """The valgrind command, or a clear error saying how to install it."""
    path = shutil.which("valgrind")
    if path is None:
        raise RuntimeError("valgrind is not installed (apt-get install valgrind; "
                           "make bench-compare IR=1 installs it)")
    return path


def count(python: Path, name: str, scale: int, cwd: Path, timeout_s: float) -> tuple[int, int]:
    """Instructions counted and units done by workload `name` at `scale` under `python`."""
    with tempfile.TemporaryDirectory() as scratch:
        # JIT-compiled code is written before it first runs, but into pages that also held
        # other code earlier: check every page that is not a file's mapping.
        cmd = [valgrind(), "--tool=callgrind", "--smc-check=all-non-file",
               f"--callgrind-out-file={scratch}/out"]
        cmd += [f"--toggle-collect={pattern}" for pattern in COUNTED[name]]
        cmd += [str(python), str(WORKLOAD), name, str(scale)]
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"workload {name}: {tail[0]}")
    collected = COLLECTED.findall(done.stderr)
    units = [json.loads(line)["units"] for line in done.stdout.splitlines()
             if line.startswith("{")]
    if not collected or not units:
        raise RuntimeError(f"workload {name}: callgrind or the workload printed no count")
    return int(collected[-1]), int(units[-1])


def per_unit(python: Path, name: str, cwd: Path, timeout_s: float) -> dict[str, float]:
    """Steady-state instructions per unit of workload `name` (scale 2 minus scale 1)."""
    one_ir, one_units = count(python, name, 1, cwd, timeout_s)
    two_ir, two_units = count(python, name, 2, cwd, timeout_s)
    if two_units <= one_units:
        raise RuntimeError(f"workload {name}: scale 2 did no more work than scale 1")
    return {f"{name}_instructions_per_{UNIT[name].replace('-', '_')}":
            round((two_ir - one_ir) / (two_units - one_units), 1)}
