"""Traffic-manager benchmark: enqueue+dequeue pairs per second of wall time.

Builds and runs the Rust example `tm_throughput` of the `bufferlab-tm` crate
in release mode and prints its one JSON line of figures.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    """Run the benchmark and print one JSON line; non-zero exit if it failed."""
    cmd = ["cargo", "run", "--release", "-q", "-p", "bufferlab-tm", "--example", "tm_throughput"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"bench/tm_throughput.py: {' '.join(cmd)} failed:\n{proc.stderr}", file=sys.stderr)
        return proc.returncode
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if len(lines) != 1:
        print(f"bench/tm_throughput.py: expected one JSON line, got:\n{proc.stdout}", file=sys.stderr)
        return 1
    print(json.dumps(json.loads(lines[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
