"""The packet path never calls `memset` on an empty slice's dangling address.

An empty Rust slice points into page 0, and on a CPU with AVX-512 glibc 2.36 writes short
`memset`s with a masked store that, aimed at an unmapped page, takes a fault-suppression
assist even with no byte enabled: 67 ns a call instead of 2 on the lab machine. Two such
calls per packet halved the engine's packets per CPU-second, while instruction counts moved
by tens. This counts those calls through an `LD_PRELOAD` wrapper around `memset` while the
bench's fixed workloads run, on any CPU.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = ROOT / "bench" / "tools" / "workload.py"

# Counts memset calls of 0 bytes at an address below 4096 and writes the count to the
# file named by PAGE_ZERO_FILLS when the process exits.
SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *(*real_memset)(void *, int, size_t);
static long page_zero_fills;

static void report(void) {
    const char *path = getenv("PAGE_ZERO_FILLS");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%ld\n", page_zero_fills);
        fclose(f);
    }
}

void *memset(void *s, int c, size_t n) {
    if (!real_memset) {
        real_memset = (void *(*)(void *, int, size_t))dlsym(RTLD_NEXT, "memset");
        atexit(report);
    }
    if (n == 0 && (uintptr_t)s < 4096) {
        page_zero_fills++;
    }
    return real_memset(s, c, n);
}
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The counting wrapper, compiled for this module's tests."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler (the Rust build's linker)")
    d = tmp_path_factory.mktemp("shim")
    (d / "shim.c").write_text(SHIM)
    out = d / "page_zero_fills.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(d / "shim.c"), "-ldl"],
                   check=True)
    return out


def counted(shim: Path, tmp_path: Path, argv: list[str]) -> tuple[str, int]:
    """Runs `argv` under the wrapper; its standard output and the page-0 empty fills."""
    log = tmp_path / "fills"
    env = {**os.environ, "LD_PRELOAD": str(shim), "PAGE_ZERO_FILLS": str(log)}
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True,
                         timeout=600).stdout
    return out, int(log.read_text())


def page_zero_fills(shim: Path, tmp_path: Path, workload: str, scale: int) -> tuple[int, int]:
    """Runs a bench workload under the wrapper; (units of work done, page-0 empty fills)."""
    out, fills = counted(shim, tmp_path, [sys.executable, str(WORKLOAD), workload, str(scale)])
    return json.loads(out.splitlines()[-1])["units"], fills


@pytest.mark.parametrize("workload,scale", [("engine_l2_64B", 2), ("engine_l3_64B", 2),
                                            ("sim", 1)])
def test_no_empty_fill_at_page_zero(shim, tmp_path, workload, scale):
    units, fills = page_zero_fills(shim, tmp_path, workload, scale)
    assert units > 0
    assert fills == 0, f"{fills} memset calls of 0 bytes at a page-0 address in {units} units"


def test_the_wrapper_counts_an_empty_fill_at_page_zero(shim, tmp_path):
    """ctypes' memset of 0 bytes at address 16 is one, of 0 bytes at a real buffer none."""
    script = ("import ctypes; b = ctypes.create_string_buffer(8); "
              "ctypes.memset(16, 0, 0); ctypes.memset(b, 0, 0)")
    _, fills = counted(shim, tmp_path, [sys.executable, "-c", script])
    assert fills == 1
