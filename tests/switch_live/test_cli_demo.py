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


def test_pingall_succeeds_and_the_network_comes_down(live, tmp_path):
    prefix = f"bld{uuid.uuid4().hex[:5]}-"
    proc = subprocess.run(
        [sys.executable, "-m", "bufferlab.experiments.cli_demo", "--pingall",
         "--build-dir", str(tmp_path / "build"), "--log-dir", str(tmp_path / "logs"),
         "--pcap-dir", str(tmp_path / "pcaps"), "--netns-prefix", prefix,
         "--grpc-base-port", str(live.free_port()), "--thrift-base-port", str(live.free_port())],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    log = (tmp_path / "logs" / "s1.log").read_text() if (tmp_path / "logs" / "s1.log").exists() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr + log
    assert "0% dropped (6/6 received)" in proc.stdout + proc.stderr
    assert "tail -f" in proc.stdout
    requests = (tmp_path / "logs" / "s1-p4runtime-requests.txt").read_text()
    assert requests.count("[Write]") >= 2
    # The switch saw every host: each port received and sent frames, and it stopped cleanly.
    assert "stopped; live counters" in log
    for port in (1, 2, 3):
        assert (tmp_path / "pcaps" / f"s1-eth{port}_out.pcap").stat().st_size > 24
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert prefix not in namespaces
