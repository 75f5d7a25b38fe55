"""`make cli`: three tc-paced hosts on one bufferlab-switch running p4src/buffer_switch.p4.

    sudo .venv/bin/python -m bufferlab.experiments.cli_demo [--program v1model|tna]
        [--target tofino|tofino2] [--view] [--pingall] [--log-dir logs]

Compiles buffer_switch.p4 with bufferlab's compiler into `--build-dir` (default `build/`);
`--program tna` compiles its Tofino port, p4src/tna/buffer_switch.p4, for `--target`
(TNA JSON: Tofino 1's 80-byte cells, or Tofino 2's 176), whose shared buffer, thresholds
and PAUSE are the traffic manager's, set from the config's `tofino_tm` section over the
switch's runtime CLI. It then
starts the network of `experiments/cli_demo/topology.json` (h1, h2, h3 on s1 ports 1..3,
addresses 10.0.1.N/24; h1 and h2 paced by HTB to 8 Mbit/s, port 3 shaped to 10 Mbit/s, so
the two senders together overfill h3's port), installs the program and writes the
controller config `experiments/cli_demo/s1-config.json` over P4Runtime (requests logged to
`<log-dir>/s1-p4runtime-requests.txt`), prints where every log is and how to change a
threshold live, and opens the Mininet CLI. `--view` also serves the live view of s1's
queues, drops and congestion signals. With `--pingall` it runs `pingall` instead of the
CLI and exits 0 only if every ping succeeded. The network comes down on exit, also after
an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from google.protobuf import text_format

from bufferlab.compiler.api import compile_program
from bufferlab.controller.config import load_config
from bufferlab.experiments.common.live_lab import (
    LiveLab,
    Program,
    add_network_arguments,
    network_options,
    open_cli,
)
from bufferlab.mininet.network import put_tools_on_path
from bufferlab.mininet.switch import is_bufferlab_switch
from bufferlab.mininet.topology import load_topology

DEMO_DIR = Path(__file__).resolve().parent
P4SRC = DEMO_DIR.parent.parent / "p4src"
#: The lab's switch for each architecture --program names.
PROGRAMS = {"v1model": P4SRC / "buffer_switch.p4", "tna": P4SRC / "tna" / "buffer_switch.p4"}
TARGETS = ("tofino", "tofino2")
TRAFFIC_HINTS = [
    "Try, in the Mininet CLI (each sender is paced to 8 Mbit/s, h3's port drains 10 Mbit/s):",
    "  h3 bufferlab-recv --port 5001 --idle-timeout-s 5 &",
    "  h1 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size 1000 --duration-s 60 &",
    "  h2 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size 1000 --duration-s 60 &",
    "then watch port 3's occupancy sit at its threshold and its drops grow, and change the"
    " threshold with the lines above (in this CLI, put `sh ` before them).",
]


def build(build_dir: Path, arch: str = "v1model", target: str = "tofino") -> Program:
    """Compile the lab's switch for `arch` (v1model or tna; tna for `target`) to
    `<build_dir>/buffer_switch.json` (`<build_dir>/tna/` for TNA) and its P4Info."""
    if arch == "tna":
        compiled = compile_program(PROGRAMS[arch], arch="tna", target=target)
        build_dir = build_dir / ("tna" if target == "tofino" else target)
    else:
        compiled = compile_program(PROGRAMS[arch])
    build_dir.mkdir(parents=True, exist_ok=True)
    program = Program(build_dir / "buffer_switch.json",
                      build_dir / "buffer_switch.p4.p4info.txtpb")
    program.json_path.write_text(json.dumps(compiled.json))
    program.p4info_path.write_text(text_format.MessageToString(compiled.p4info))
    return program


def main(argv: list[str] | None = None) -> int:
    """Bring the demo network up, configure it, open the CLI (or run pingall); exit status."""
    parser = argparse.ArgumentParser(prog="python -m bufferlab.experiments.cli_demo",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--pingall", action="store_true", help="run pingall instead of the CLI")
    parser.add_argument("--build-dir", type=Path, default=Path("build"))
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="v1model",
                        help="the lab's switch for v1model (default) or Tofino's TNA")
    parser.add_argument("--target", choices=TARGETS, default="tofino",
                        help="with --program tna: Tofino 1 (80-byte cells, default) or 2 (176)")
    add_network_arguments(parser)
    args = parser.parse_args(argv)

    if args.program == "tna" and args.switch and not is_bufferlab_switch(args.switch):
        parser.error(f"--program tna: {args.switch} does not run TNA programs (bufferlab-switch does)")
    program = build(args.build_dir, args.program, args.target)
    configs = {"s1": load_config(DEMO_DIR / "s1-config.json")}
    # `sh bufferlab-ctl …` in the CLI finds the tool as the hosts' shells do.
    put_tools_on_path()
    with LiveLab(load_topology(DEMO_DIR / "topology.json"), configs, program,
                 network_options(args)) as lab:
        if args.pingall:
            print(lab.banner(3))
            assert lab.network.net is not None
            loss = lab.network.net.pingAll(timeout="2")
            return 0 if loss == 0 else 1
        open_cli(lab, args, "make cli", TRAFFIC_HINTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
