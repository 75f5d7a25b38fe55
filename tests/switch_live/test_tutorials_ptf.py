"""The p4lang tutorials' PTF convention on bufferlab-switch, as their runptf.sh runs it:
veth pairs, the switch started with `--no-p4` (and runptf.sh's logging flags) on one end of
each, then `ptf` on the other ends with the gRPC address, P4Info and JSON as test parameters;
the PTF tests (ptf_tests/router_ptf.py) install the pipeline in PI's P4DeviceConfig wrapper and
check packets. Only the switch this test started is stopped; the veths go even on failure."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for veth pairs and raw sockets"),
]

PTF_DIR = Path(__file__).with_name("ptf_tests")
PORTS = 4
PTF_TESTS = 5


@pytest.fixture
def veth_pairs(live):
    """PORTS veth pairs in this namespace, runptf.sh's layout: (switch end, PTF end) by port."""
    tag = f"blptf{os.getpid() % 10000}"
    pairs = [(f"{tag}s{n}", f"{tag}p{n}") for n in range(PORTS)]
    made: list[str] = []
    try:
        for switch_end, ptf_end in pairs:
            live.sh("ip", "link", "add", switch_end, "type", "veth", "peer", "name", ptf_end)
            made.append(switch_end)
            for iface in (switch_end, ptf_end):
                # No IPv6 on either end: no router solicitations for PTF to see as stray frames.
                live.sh("sysctl", "-qw", f"net.ipv6.conf.{iface}.disable_ipv6=1")
                live.sh("ethtool", "-K", iface, "rx", "off", "tx", "off", "sg", "off", "tso", "off",
                        "gso", "off", "gro", "off")
                live.sh("ip", "link", "set", iface, "up")
        yield pairs
    finally:
        # Deleting one end deletes the pair.
        for switch_end in made:
            subprocess.run(["ip", "link", "del", switch_end], capture_output=True, check=False)
        left = [line for line in live.sh("ip", "-o", "link").splitlines() if tag in line]
        assert not left, f"veths left behind: {left}"


def test_ptf_tests_drive_bufferlab_switch_over_veths(live, programs, veth_pairs, tmp_path):
    prog = programs("ipv4_lpm_router.p4")
    (tmp_path / "build").mkdir()
    json_path = tmp_path / "build" / "ipv4_lpm_router.json"
    p4info_path = tmp_path / "build" / "ipv4_lpm_router.p4info.txtpb"
    json_path.write_text(prog.json)
    p4info_path.write_text(prog.p4info_text)

    grpc_port, thrift_port = live.free_port(), live.free_port()
    switch_args = ["--log-file", str(tmp_path / "ss-log"), "--log-flush",
                   "--dump-packet-data", "10000"]
    for port, (switch_end, _) in enumerate(veth_pairs):
        switch_args += ["-i", f"{port}@{switch_end}"]
    switch_args += ["--no-p4", "--thrift-port", str(thrift_port), "--",
                    "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
    switch = live.SwitchProcess(switch_args, tmp_path / "switch.out", grpc_port)
    try:
        ptf_args = [str(Path(sys.prefix) / "bin" / "ptf"), "--test-dir", str(PTF_DIR),
                    "--log-file", str(tmp_path / "ptf.log"), "--failfast"]
        for port, (_, ptf_end) in enumerate(veth_pairs):
            ptf_args += ["-i", f"{port}@{ptf_end}"]
        ptf_args.append(f"--test-params=grpcaddr='127.0.0.1:{grpc_port}';"
                        f"p4info='{p4info_path}';config='{json_path}'")
        done = subprocess.run(ptf_args, cwd=tmp_path, capture_output=True, text=True,
                              check=False, timeout=300)
    finally:
        status = switch.stop()
    report = done.stdout + done.stderr
    switch_log = (tmp_path / "ss-log").read_text()
    assert done.returncode == 0, report + switch_log
    assert re.search(rf"^Ran {PTF_TESTS} tests? in ", report, re.MULTILINE), report
    assert re.search(r"^OK$", report, re.MULTILINE), report
    assert status == 0, switch.log() + switch_log
    # Every test pushed the wrapped pipeline; the switch ran each (P4Runtime at debug level
    # is not logged here, but the ports are, and frames went through them).
    for port, (switch_end, _) in enumerate(veth_pairs):
        assert f"port {port}: {switch_end}" in switch_log
