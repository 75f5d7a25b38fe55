"""`bufferlab-p4c`: the command line of p4c-bm2-ss (BMv2 JSON plus P4Info files), and of
bf-p4c for TNA/T2NA programs (`--arch tna|t2na`, `--target tofino|tofino2`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from .api import Compiled, compile_program
from .arch import ARCHITECTURES
from .diagnostics import CompileError
from .fit import check_program, device_for
from .frontend import select_architecture
from .jsonwriter import dumps
from .p4info.files import FORMAT_SUFFIX, write_p4info

PROG = "bufferlab-p4c"


class UsageError(Exception):
    """A bad command line."""


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so every error has one format."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Report a bad command line as a `UsageError`."""
        raise UsageError(message)


def argument_parser() -> argparse.ArgumentParser:
    """The options p4c-bm2-ss users pass."""
    p = _ArgumentParser(prog=PROG, description="P4_16 compiler for BMv2 v1model (a peer of p4c-bm2-ss) "
                                               "and Tofino's TNA/T2NA",
                        allow_abbrev=False)
    p.add_argument("source", help="P4_16 program")
    p.add_argument("-o", dest="output", metavar="FILE",
                   help="BMv2 JSON output file, or a directory for <program>.json (default: ./<program>.json)")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                   help="add DIR to the #include search path")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro")
    p.add_argument("--p4runtime-files", metavar="FILES",
                   help="comma-separated P4Info outputs; format by suffix: .txtpb .txt .json .bin")
    p.add_argument("--p4runtime-file", metavar="FILE", help="P4Info output (older form)")
    p.add_argument("--p4runtime-entries-files", metavar="FILES",
                   help="comma-separated outputs of a WriteRequest inserting the const entries")
    p.add_argument("--p4runtime-format", choices=sorted(FORMAT_SUFFIX),
                   help="format of --p4runtime-file (default: binary)")
    p.add_argument("--std", default="p4-16", help="language version (only p4-16)")
    p.add_argument("--p4v", default="16", help="language version as the tutorials pass it (only 16)")
    p.add_argument("-v", dest="verbose", action="count", default=0,
                   help="accepted for compatibility (diagnostics are always printed)")
    p.add_argument("--arch", default=None,
                   help="architecture: v1model, tna or t2na (default: the one the program includes, "
                        "else v1model)")
    p.add_argument("--target", default=None,
                   help="target: bmv2 (v1model), tofino or tofino2 (tna), tofino2 (t2na); "
                        "default: the architecture's")
    p.add_argument("--p4runtime-force-std-externs", action="store_true",
                   help="accepted as bf-p4c takes it: TNA registers, counters, meters, digests and "
                        "action profiles are always standard P4Runtime entities here")
    p.add_argument("--fit-report", action="store_true",
                   help="print what Tofino's compiler would refuse or split, with source locations, "
                        "and a lower bound on the stages; exit 1 when a rule is broken (the device: "
                        "--target, else --arch tna: Tofino 1, t2na: Tofino 2). Outputs are written "
                        "only when -o or --p4runtime-files is given")
    p.add_argument("--emit-externs", action="store_true",
                   help="compile user-declared extern objects and functions as p4c-bm2-ss does with "
                        "this option (extern_instances, _Type_method primitives); simple_switch, and "
                        "the bufferlab switch, refuse to load such JSON")
    p.add_argument("--Wdisable", action="append", default=[], metavar="WARNING", nargs="?",
                   help="accepted for compatibility; warnings are still printed")
    p.add_argument("--version", action="version", version=f"{PROG} 0.1.0")
    return p


def check_options(args: argparse.Namespace) -> None:
    """Reject option values we cannot honour."""
    if args.std not in ("p4-16", "p416", "p4_16"):
        raise UsageError(f"--std {args.std}: only p4-16 is supported")
    if args.p4v != "16":
        raise UsageError(f"--p4v {args.p4v}: only P4_16 (16) is supported")
    if args.arch is not None and args.arch not in ARCHITECTURES:
        raise UsageError(f"--arch {args.arch}: known architectures are {', '.join(ARCHITECTURES)}")
    if args.target is not None:
        archs = [ARCHITECTURES[args.arch]] if args.arch else list(ARCHITECTURES.values())
        if not any(args.target in a.targets for a in archs):
            known = sorted({t for a in archs for t in a.targets})
            raise UsageError(f"--target {args.target}: known targets are {', '.join(known)}")
    if args.p4runtime_format and not args.p4runtime_file:
        raise UsageError("--p4runtime-format needs --p4runtime-file")


def p4info_paths(args: argparse.Namespace) -> list[tuple[Path, str | None]]:
    """Every P4Info file to write, with its format (None: chosen by the suffix)."""
    paths: list[tuple[Path, str | None]] = [
        (Path(p), None) for p in (args.p4runtime_files or "").split(",") if p
    ]
    if args.p4runtime_file:
        paths.append((Path(args.p4runtime_file), args.p4runtime_format or "binary"))
    return paths


def run(argv: list[str]) -> int:
    """Compile as the command line says; returns the exit status."""
    try:
        args = argument_parser().parse_args(argv)
        check_options(args)
        outputs = p4info_paths(args)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        print(f"usage: {PROG} prog.p4 -o out.json [--p4runtime-files F.txtpb] [-I DIR] [-D NAME[=V]]",
              file=sys.stderr)
        return 2
    source = Path(args.source)
    if args.fit_report:
        return _guarded(lambda: fit_report(args, source, outputs), source)
    return _guarded(lambda: compile_to_files(args, source, outputs), source)


def compile_to_files(args: argparse.Namespace, source: Path, outputs: list[tuple[Path, str | None]]) -> int:
    """Compile as p4c-bm2-ss does: the JSON (default ./<program>.json) and the P4Info files."""
    result = compile_program(source, args.include, args.define, args.arch, args.target, args.emit_externs)
    for warning in result.warnings:
        print(warning.format(), file=sys.stderr)
    _write_outputs(args, result, Path(args.output) if args.output else Path(source.stem + ".json"),
                   source, outputs)
    return 0


def _guarded(step: Callable[[], int], source: Path) -> int:
    """Run one command step with the compiler's error handling and exit statuses."""
    try:
        return step()
    except CompileError as exc:
        print(exc.format(), file=sys.stderr)
        return 1
    except RecursionError:
        print(f"{source}: error: program nesting is too deep to compile", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a compiler bug must still end in a clear error
        print(f"{source}: error: internal compiler error ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 3


def fit_report(args: argparse.Namespace, source: Path, outputs: list[tuple[Path, str | None]]) -> int:
    """Compile `source` for its own architecture and print its Tofino fit report;
    0 when it fits, 1 when a rule is broken. A v1model program is read as the
    prototype of a Tofino port: its registers, actions and tables are checked as
    bf-p4c would check them."""
    _, own, _ = select_architecture(source, args.include, args.define, None, None)
    target = args.target if own.name != "v1model" else None
    result = compile_program(source, args.include, args.define, own.name, target)
    for warning in result.warnings:
        print(warning.format(), file=sys.stderr)
    _write_outputs(args, result, Path(args.output) if args.output else None, source, outputs)
    device = device_for(own.name if own.name == "t2na" else (args.arch or own.name), args.target)
    report = check_program(result.json, str(source), result.arch, device)
    print(report.format(), end="")
    return 0 if report.fits else 1


def _write_outputs(args: argparse.Namespace, result: Compiled, output: Path | None, source: Path,
                   outputs: list[tuple[Path, str | None]]) -> None:
    """Write the JSON (when `output` is given) and every P4Info and entries file asked for."""
    if output is not None:
        if output.is_dir():
            # The p4c driver's `-o` names a directory: the JSON goes there as <program>.json.
            output = output / (source.stem + ".json")
        try:
            output.write_text(dumps(result.json))
        except OSError as exc:
            raise CompileError(None, f"cannot write {output}: {exc.strerror}") from exc
    for path, fmt in outputs:
        for warning in write_p4info(result.p4info, path, fmt):
            print(warning.format(), file=sys.stderr)
    for path in (Path(p) for p in (args.p4runtime_entries_files or "").split(",") if p):
        for warning in write_p4info(result.entries, path):
            print(warning.format(), file=sys.stderr)


def main() -> None:
    """Console-script entry point."""
    sys.exit(run(sys.argv[1:]))
