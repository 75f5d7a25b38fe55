"""`make cli`'s network: three tc-paced hosts on bufferlab-switch running buffer_switch.p4, entries written
by the controller from experiments/cli_demo/s1-config.json; pingall succeeds; nothing is left."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet"),
]


def pingall(live, tmp_path, prefix: str, *options: str) -> tuple[subprocess.CompletedProcess, str]:
    """`make cli`'s network with `--pingall` (and `options`) under tmp_path; the run and
    the switch's log, once every ping has been answered."""
    proc = subprocess.run(
        [sys.executable, "-m", "bufferlab.experiments.cli_demo", *options, "--pingall",
         "--build-dir", str(tmp_path / "build"), "--log-dir", str(tmp_path / "logs"),
         "--pcap-dir", str(tmp_path / "pcaps"), "--netns-prefix", prefix,
         "--grpc-base-port", str(live.free_port()), "--thrift-base-port", str(live.free_port())],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    log = (tmp_path / "logs" / "s1.log").read_text() if (tmp_path / "logs" / "s1.log").exists() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr + log
    assert "0% dropped (6/6 received)" in proc.stdout + proc.stderr
    return proc, log


def test_pingall_succeeds_and_the_network_comes_down(live, tmp_path):
    prefix = f"bld{uuid.uuid4().hex[:5]}-"
    proc, log = pingall(live, tmp_path, prefix)
    assert "tail -f" in proc.stdout
    requests = (tmp_path / "logs" / "s1-p4runtime-requests.txt").read_text()
    assert requests.count("[Write]") >= 2
    # The switch saw every host: each port received and sent frames, and it stopped cleanly.
    assert "stopped; live counters" in log
    for port in (1, 2, 3):
        assert (tmp_path / "pcaps" / f"s1-eth{port}_out.pcap").stat().st_size > 24
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert prefix not in namespaces


def test_the_tna_program_forwards_and_gets_its_tm_settings(live, tmp_path):
    # `make cli PROGRAM=tna`: the lab's Tofino port on the same topology and config.
    prefix = f"bld{uuid.uuid4().hex[:5]}-"
    proc, log = pingall(live, tmp_path, prefix, "--program", "tna")
    assert f"program {tmp_path / 'build' / 'tna' / 'buffer_switch.json'} (tna for tofino)" in log
    # The config's pool (65,536 B) and 50 % threshold, in 80-byte cells, sent to the TM and
    # accepted (each line is followed by the switch's answer).
    tm = (tmp_path / "logs" / "s1-tm-commands.txt").read_text().splitlines()
    assert tm[:2] == ["tm_pool_cfg EG_APP_POOL_0 size_cells=819", "EG_APP_POOL_0: 819 cells"]
    (port3,) = [line.split() for line in tm if line.startswith("tm_queue_buffer 3 0 ")]
    assert set(port3[3:]) == {"guaranteed_cells=0", "pool_id=EG_APP_POOL_0", "hysteresis_cells=0",
                              "pool_max_cells=410", "dynamic_baf=DISABLE"}
    # P4Runtime wrote the P4 side: each port's mirror session truncates a BCN copy.
    requests = (tmp_path / "logs" / "s1-p4runtime-requests.txt").read_text()
    assert requests.count("packet_length_bytes: 111") == 3
    assert "tm_counter_queue 3" in proc.stdout
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert prefix not in namespaces


def test_the_tna_program_needs_bufferlab_switch(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bufferlab.experiments.cli_demo", "--program", "tna",
         "--switch", "simple_switch_grpc", "--build-dir", str(tmp_path / "build")],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2
    assert "--program tna: simple_switch_grpc does not run TNA programs" in proc.stderr
