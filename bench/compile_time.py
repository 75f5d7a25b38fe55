"""Compile time of every p4src/*.p4 and tests/p4/*.p4 program: one JSON line (ms per program, max)."""

import json
import time
from pathlib import Path

from bufferlab.compiler.api import compile_program
from bufferlab.compiler.jsonwriter import dumps
from bufferlab.compiler.p4info.files import p4info_text

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 3


def compile_ms(path):
    """Best-of-REPEATS wall time in ms to write both outputs' text for one program."""
    best = None
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = compile_program(path)
        dumps(result.json)
        p4info_text(result.p4info)
        elapsed = (time.perf_counter() - start) * 1000.0
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    """Compile every program and print the figures as one JSON line."""
    programs = sorted((ROOT / "p4src").glob("*.p4")) + sorted((ROOT / "tests" / "p4").glob("*.p4"))
    per_program = {str(p.relative_to(ROOT)): round(compile_ms(p), 1) for p in programs}
    print(json.dumps({
        "benchmark": "compile_time",
        "programs": len(per_program),
        "per_program_ms": per_program,
        "max_ms": max(per_program.values()),
        "mean_ms": round(sum(per_program.values()) / len(per_program), 1),
    }))


if __name__ == "__main__":
    main()
