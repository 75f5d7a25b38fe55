"""The p4lang tutorials' command names in .venv/compat/bin (`make setup`) run bufferlab's tools
with the tutorials' command lines: p4c (the driver) and p4c-bm2-ss compile, simple_switch_grpc
takes a pipeline wrapped in PI's P4DeviceConfig and stops on SIGTERM under its own name,
simple_switch switches run side by side and simple_switch_CLI programs them, and python3 and
ptf are the venv's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.tmp import p4config_pb2

from bufferlab.controller import entities
from bufferlab.controller.client import SwitchConnection, entity

COMPAT_BIN = Path(sys.prefix) / "compat" / "bin"
COMMANDS = ("p4c", "p4c-bm2-ss", "simple_switch_grpc", "simple_switch", "simple_switch_CLI",
            "python3", "ptf")
ROUTER = Path(__file__).resolve().parents[1] / "p4" / "ipv4_lpm_router.p4"
LPM_TABLE = "RouterIngress.ipv4_lpm"


@pytest.fixture(scope="module")
def compat() -> Path:
    missing = [name for name in COMMANDS if not (COMPAT_BIN / name).is_file()]
    if missing:
        pytest.fail(f"{COMPAT_BIN} lacks {', '.join(missing)}: `make setup` makes them")
    return COMPAT_BIN


def run(*argv, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, input=stdin, capture_output=True,
                          text=True, check=False, timeout=120)


def table_names(p4info_text: str) -> list[str]:
    p4info = text_format.Parse(p4info_text, p4info_pb2.P4Info())
    return [table.preamble.name for table in p4info.tables]


def test_p4c_driver_flags_write_dir_prog_json_and_the_p4info(compat, tmp_path):
    # exercises/basic/runptf.sh's line; build/ does not exist yet (the driver makes it).
    done = run(compat / "p4c", "--target", "bmv2", "--arch", "v1model",
               "--p4runtime-files", "build/router.p4info.txtpb", "-o", "build", ROUTER,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "build" / "ipv4_lpm_router.json").read_text())
    assert LPM_TABLE in [t["name"] for p in document["pipelines"] for t in p["tables"]]
    assert table_names((tmp_path / "build" / "router.p4info.txtpb").read_text()) == [LPM_TABLE]

    # The short driver options and --std, as other Makefiles pass them.
    done = run(compat / "p4c", "-b", "bmv2", "-a", "v1model", "--std", "p4-16", "-o", "out",
               ROUTER, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out" / "ipv4_lpm_router.json").read_text()) == document


def test_p4c_refuses_other_targets_and_an_output_that_is_a_file(compat, tmp_path):
    # Tofino is a target now, for TNA programs: a v1model program for it is refused.
    done = run(compat / "p4c", "-b", "tofino", "-o", "build", ROUTER, cwd=tmp_path)
    assert done.returncode == 1
    assert "--target tofino: architecture v1model runs on bmv2" in done.stderr
    assert not (tmp_path / "build" / "ipv4_lpm_router.json").exists()
    done = run(compat / "p4c", "-b", "fpga", "-o", "build", ROUTER, cwd=tmp_path)
    assert done.returncode == 2 and "fpga" in done.stderr
    (tmp_path / "taken").write_text("a file, not a directory")
    done = run(compat / "p4c", "-o", "taken", ROUTER, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("p4c: error: -o taken: File exists"), done.stderr


def test_p4c_bm2_ss_as_the_tutorials_makefiles_call_it(compat, tmp_path):
    (tmp_path / "build").mkdir()
    done = run(compat / "p4c-bm2-ss", "--p4v", "16", "--p4runtime-files",
               "build/router.p4.p4info.txtpb", "-o", "build/router.json", ROUTER, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    p4info_text = (tmp_path / "build" / "router.p4.p4info.txtpb").read_text()
    assert table_names(p4info_text) == [LPM_TABLE]
    # The older Makefile form: one P4Info file, format given apart.
    done = run(compat / "p4c-bm2-ss", "--p4v", "16", "--p4runtime-file", "build/old.p4info",
               "--p4runtime-format", "text", "-o", "build/old.json", ROUTER, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "build" / "old.p4info").read_text() == p4info_text
    assert (tmp_path / "build" / "old.json").read_text() == \
        (tmp_path / "build" / "router.json").read_text()


def test_simple_switch_grpc_takes_a_wrapped_pipeline_and_stops_on_sigterm(compat, live, programs,
                                                                           tmp_path):
    prog = programs("ipv4_lpm_router.p4")
    grpc_port, thrift_port = live.free_port(), live.free_port()
    switch = live.SwitchProcess(
        ["--no-p4", "--log-console", "--device-id", "3", "--thrift-port", str(thrift_port),
         "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"],
        tmp_path / "switch.log", grpc_port, command=[str(compat / "simple_switch_grpc")])
    try:
        # `kill %simple_switch_grpc` (Mininet) and `pkill simple_switch` (runptf.sh) find the
        # switch by this name; the kernel keeps 15 characters of it.
        comm = Path(f"/proc/{switch.process.pid}/comm").read_text().strip()
        assert comm == "simple_switch_grpc"[:15]
        wrapped = p4config_pb2.P4DeviceConfig(reassign=True,
                                              device_data=prog.json.encode()).SerializeToString()
        with SwitchConnection(f"127.0.0.1:{grpc_port}", 3) as controller:
            assert controller.connect()
            controller.set_pipeline(prog.p4info, wrapped)
            assert controller.get_pipeline().p4_device_config == wrapped
            controller.insert(entity(entities.table_entry(
                prog.index, LPM_TABLE, match={"hdr.ipv4.dstAddr": ("10.0.2.0", 24)},
                action_name="RouterIngress.ipv4_forward",
                params={"dstAddr": "08:00:00:00:02:22", "port": 2})))
        # The engine runs the unwrapped program: its runtime CLI sees the table and the entry.
        cli = run(compat / "simple_switch_CLI", "--thrift-port", thrift_port, cwd=tmp_path,
                  stdin=f"table_num_entries {LPM_TABLE}\n")
        assert cli.returncode == 0, cli.stdout + cli.stderr
        assert cli.stdout.split()[-1] == "1", cli.stdout
    finally:
        status = switch.stop()
    assert status == 0, switch.log()
    assert "SIGTERM: stopping" in switch.log()


def test_simple_switches_side_by_side_programmed_by_simple_switch_cli(compat, live, tmp_path):
    # run_exercise.py's P4Switch: one simple_switch per Mininet switch, each its Thrift port.
    json_path = tmp_path / "router.json"
    done = run(compat / "p4c-bm2-ss", "-o", json_path, ROUTER, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    switches = []
    try:
        for n in range(2):
            thrift_port = live.free_port()
            switches.append(live.SwitchProcess(
                ["--thrift-port", str(thrift_port), "--device-id", str(n), str(json_path),
                 "--log-console"],
                tmp_path / f"s{n}.log", thrift_port, command=[str(compat / "simple_switch")]))
        first, second = (switch.grpc_port for switch in switches)
        cli = run(compat / "simple_switch_CLI", "--thrift-port", first, cwd=tmp_path,
                  stdin=f"table_add {LPM_TABLE} RouterIngress.ipv4_forward 10.0.1.1/32 => "
                        f"08:00:00:00:01:11 1\ntable_num_entries {LPM_TABLE}\n")
        assert cli.returncode == 0, cli.stdout + cli.stderr
        assert cli.stdout.split()[-1] == "1", cli.stdout
        cli = run(compat / "simple_switch_CLI", "--thrift-port", second, cwd=tmp_path,
                  stdin=f"table_num_entries {LPM_TABLE}\n")
        assert cli.stdout.split()[-1] == "0", cli.stdout
    finally:
        statuses = [switch.stop() for switch in switches]
    assert statuses == [0, 0], [switch.log() for switch in switches]


def test_python3_and_ptf_are_the_venvs(compat, tmp_path):
    done = run(compat / "python3", "-c",
               "import sys, grpc, psutil, ptf, scapy, p4.tmp.p4config_pb2; print(sys.prefix)",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == sys.prefix
    done = run(compat / "ptf", "--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
