"""`make cli`: three hosts on one bufferlab-switch running p4src/forward.p4, then the Mininet CLI.

    sudo .venv/bin/python -m bufferlab.experiments.cli_demo [--pingall] [--log-dir logs] [--pcap-dir pcaps]

Compiles forward.p4 with bufferlab's compiler into `--build-dir` (default `build/`), starts
the network of `experiments/cli_demo/topology.json` (h1, h2, h3 on s1 ports 1..3, addresses
10.0.1.N/24), writes the pipeline and the entries of `experiments/cli_demo/s1-runtime.json` through
P4Runtime as the tutorials' controller does (requests logged to
`<log-dir>/s1-p4runtime-requests.txt`), prints where every log is, and opens the Mininet
CLI (`pingall` works). With `--pingall` it runs `pingall` instead of the CLI and exits 0
only if every ping succeeded. The network comes down on exit, also after an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from google.protobuf import text_format

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.runtime_json import load_runtime, program_switch
from bufferlab.mininet.network import (
    GRPC_BASE_PORT,
    THRIFT_BASE_PORT,
    LabNetwork,
    NetworkOptions,
    log_banner,
)
from bufferlab.mininet.switch import default_switch_binary
from bufferlab.mininet.topology import load_topology

DEMO_DIR = Path(__file__).resolve().parent
PROGRAM = DEMO_DIR.parent.parent / "p4src" / "forward.p4"


def build(build_dir: Path) -> tuple[Path, Path]:
    """Compile forward.p4 to `<build_dir>/forward.json` and `forward.p4.p4info.txtpb`."""
    document, p4info = compile_p4(PROGRAM)
    build_dir.mkdir(parents=True, exist_ok=True)
    json_path = build_dir / "forward.json"
    p4info_path = build_dir / "forward.p4.p4info.txtpb"
    json_path.write_text(json.dumps(document))
    p4info_path.write_text(text_format.MessageToString(p4info))
    return json_path, p4info_path


def program(lab: LabNetwork, json_path: Path, p4info_path: Path, log_dir: Path) -> None:
    """Write every switch's pipeline and runtime file, logging the requests as the tutorials."""
    from bufferlab.controller.p4info import load_p4info

    p4info = load_p4info(p4info_path)
    for name, spec in lab.topo.switches.items():
        if spec.runtime_json is None:
            continue
        config = load_runtime(lab.topo.base_dir / spec.runtime_json, p4info)
        device_id = lab.switch_options(spec).device_id
        with open(log_dir / f"{name}-p4runtime-requests.txt", "w") as requests, \
                SwitchConnection(lab.grpc_address(name), device_id, request_log=requests) as conn:
            if not conn.connect():
                raise RuntimeError(f"{name}: another controller is primary")
            program_switch(conn, config, bmv2_json=json_path.read_bytes())


def main(argv: list[str] | None = None) -> int:
    """Bring the demo network up, program it, open the CLI (or run pingall); exit status."""
    parser = argparse.ArgumentParser(prog="python -m bufferlab.experiments.cli_demo",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--pingall", action="store_true", help="run pingall instead of the CLI")
    parser.add_argument("--switch", default=None,
                        help="switch program to run (default bufferlab-switch; e.g. simple_switch_grpc)")
    parser.add_argument("--build-dir", type=Path, default=Path("build"))
    parser.add_argument("--log-dir", type=Path, default=Path("logs"))
    parser.add_argument("--pcap-dir", type=Path, default=Path("pcaps"))
    parser.add_argument("--netns-prefix", default="bl-")
    parser.add_argument("--grpc-base-port", type=int, default=GRPC_BASE_PORT,
                        help="TCP port of s1's P4Runtime server (s2 gets the next one, ...)")
    parser.add_argument("--thrift-base-port", type=int, default=THRIFT_BASE_PORT,
                        help="TCP port of s1's runtime CLI")
    args = parser.parse_args(argv)

    json_path, p4info_path = build(args.build_dir)
    args.log_dir.mkdir(parents=True, exist_ok=True)
    args.pcap_dir.mkdir(parents=True, exist_ok=True)
    options = NetworkOptions(json_path=str(json_path), switch_binary=args.switch or default_switch_binary(),
                             log_dir=str(args.log_dir), pcap_dir=str(args.pcap_dir),
                             netns_prefix=args.netns_prefix, grpc_base_port=args.grpc_base_port,
                             thrift_base_port=args.thrift_base_port)
    with LabNetwork(load_topology(DEMO_DIR / "topology.json"), options) as lab:
        program(lab, json_path, p4info_path, args.log_dir)
        print(log_banner(lab))
        print(f"  P4Runtime requests: cat {args.log_dir}/s1-p4runtime-requests.txt")
        assert lab.net is not None
        if args.pingall:
            loss = lab.net.pingAll(timeout="2")
            return 0 if loss == 0 else 1
        from mininet.cli import CLI

        CLI(lab.net)
    return 0


if __name__ == "__main__":
    sys.exit(main())
