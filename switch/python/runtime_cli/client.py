"""`bufferlab-switch-cli`: simple_switch_CLI for bufferlab's switch.

Reads commands from standard input — with a `RuntimeCmd: ` prompt on a
terminal, as a script otherwise — sends each to the switch's runtime CLI
server and prints the answers. In script mode the exit status is 1 if any
command failed, so `bufferlab-switch-cli < s1-commands.txt` can gate a setup.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from bufferlab.switch.runtime_cli.commands import command_names
from bufferlab.switch.runtime_cli.transport import DEFAULT_PORT, RuntimeCliConnection

PROMPT = "RuntimeCmd: "
INTRO = "Control utility for runtime P4 table manipulation"


def build_parser() -> argparse.ArgumentParser:
    """simple_switch_CLI's options."""
    p = argparse.ArgumentParser(
        prog="bufferlab-switch-cli",
        description="Runtime CLI of bufferlab-switch (simple_switch_CLI commands on standard input).",
    )
    p.add_argument("--thrift-port", type=int, default=DEFAULT_PORT,
                   help=f"TCP port of the switch's runtime CLI server (default {DEFAULT_PORT})")
    p.add_argument("--thrift-ip", default="127.0.0.1", help="address of the switch (default 127.0.0.1)")
    p.add_argument("--json", help="accepted for compatibility and ignored: the switch serves its own program")
    p.add_argument("--pre", help="accepted for compatibility and ignored: the PRE is SimplePre")
    return p


def _script(conn: RuntimeCliConnection, lines: TextIO, out: TextIO) -> int:
    failed = False
    for line in lines:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        answer = conn.run(text)
        if answer.text:
            print(answer.text, file=out, flush=True)
        failed |= not answer.ok
    return 1 if failed else 0


def _complete_command(text: str, state: int) -> str | None:
    """readline completer for the first word: command names."""
    matches = [n for n in command_names() if n.startswith(text)]
    return matches[state] if state < len(matches) else None


def _interactive(conn: RuntimeCliConnection, out: TextIO) -> int:
    try:
        import readline  # line editing and history for input()

        readline.set_completer(_complete_command)
        readline.parse_and_bind("tab: complete")
    except ImportError:
        pass
    print(INTRO, file=out)
    while True:
        try:
            line = input(PROMPT)
        except EOFError:
            print(file=out)
            return 0
        except KeyboardInterrupt:
            print(file=out)
            continue
        if line.strip() in ("exit", "quit", "EOF"):
            return 0
        if not line.strip():
            continue
        answer = conn.run(line)
        if answer.text:
            print(answer.text, file=out, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 on a failed scripted command or no switch)."""
    args = build_parser().parse_args(argv)
    try:
        conn = RuntimeCliConnection(args.thrift_ip, args.thrift_port)
    except OSError as e:
        print(
            f"Could not connect to the switch's runtime CLI on {args.thrift_ip}:{args.thrift_port} ({e.strerror or e})\n"
            "Make sure the switch is running and that you have the right port (--thrift-port)",
            file=sys.stderr,
        )
        return 1
    try:
        if sys.stdin.isatty():
            return _interactive(conn, sys.stdout)
        return _script(conn, sys.stdin, sys.stdout)
    except ConnectionError as e:
        print(f"Lost the connection to the switch: {e}", file=sys.stderr)
        return 1
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
