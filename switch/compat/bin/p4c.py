#!@VENV@/bin/python3
"""`p4c`, the P4 compiler driver: bufferlab-p4c under p4c's command line.

Template: `make setup` installs it as .venv/compat/bin/p4c with the venv's Python filled in
(README "Running the p4lang tutorials"). The driver's own options become bufferlab-p4c's:
`-b`/`--target` and `-a`/`--arch` (bmv2 with v1model; tofino and tofino2 with tna and t2na),
and `-o DIR`, a directory (made if missing) that receives <program>.json. Everything else
(`--p4runtime-files`, `--std`, `-I`, `-D`, ...) passes through.
"""

import sys
from pathlib import Path

from bufferlab.compiler.cli import run

SHORT_OPTIONS = {"-b": "--target", "-a": "--arch"}


def driver_args(argv: list[str]) -> list[str]:
    """bufferlab-p4c's arguments for a p4c driver command line; makes the -o directory."""
    args: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "-o":
            directory = next(rest, None)
            if directory is None:
                args.append(arg)  # bufferlab-p4c reports the missing value
                break
            # bufferlab-p4c reads an existing directory as "write <program>.json in it".
            Path(directory).mkdir(parents=True, exist_ok=True)
            args += [arg, directory]
        else:
            args.append(SHORT_OPTIONS.get(arg, arg))
    return args


def main() -> int:
    """Compile as the driver's command line says; the exit status (2: a bad command line)."""
    try:
        args = driver_args(sys.argv[1:])
    except OSError as err:
        print(f"p4c: error: -o {err.filename}: {err.strerror}", file=sys.stderr)
        return 2
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
