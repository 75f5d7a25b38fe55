"""After a crash, cleanup removes exactly what the crashed network created."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from bufferlab.mininet.cleanup import NetworkRecord, clean, load_records, runs

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

# A stand-in switch binary: it only has to keep running and accept TCP on its gRPC port.
FAKE_SWITCH = textwrap.dedent("""\
    #!/usr/bin/env python3
    import socket, sys, time
    addr = sys.argv[sys.argv.index("--grpc-server-addr") + 1]
    host, port = addr.rsplit(":", 1)
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port))); s.listen()
    while True:
        time.sleep(1)
""")

CRASHING_RUN = textwrap.dedent("""\
    import os, sys, time
    from pathlib import Path
    from bufferlab.mininet.network import LabNetwork, NetworkOptions
    from bufferlab.mininet.topology import parse_topology
    topo = parse_topology({"hosts": {"h1": {}}, "switches": {"s8": {}},
                           "links": [["h1", "s8-p1"]]})
    opts = NetworkOptions(switch_binary=sys.argv[1], log_dir=sys.argv[2], state_dir=Path(sys.argv[3]),
                          netns_prefix=sys.argv[4], grpc_base_port=int(sys.argv[5]))
    LabNetwork(topo, opts).start()
    print("up", flush=True)
    time.sleep(600)
""")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _netns() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_cleanup_after_a_killed_run_removes_its_switch_namespaces_and_links(tmp_path):
    fake = tmp_path / "bufferlab-switch"
    fake.write_text(FAKE_SWITCH)
    fake.chmod(0o755)
    state = tmp_path / "state"
    prefix = f"blt{uuid.uuid4().hex[:5]}-"
    run = subprocess.Popen(
        [sys.executable, "-c", CRASHING_RUN, str(fake), str(tmp_path), str(state), prefix,
         str(_free_port())],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert run.stdout.readline().strip() == "up"
        (record,) = load_records(state)
        switch_pids = [pid for pid, name in record.processes.items() if name == str(fake)]
        assert len(switch_pids) == 1
        assert record.netns == [f"{prefix}h1"]
        assert "s8-eth1" in record.interfaces
        run.send_signal(signal.SIGKILL)
        run.wait()
        assert runs(switch_pids[0], str(fake))
        done = clean(state)
        assert f"stopped bufferlab-switch (pid {switch_pids[0]})" in done
        assert f"deleted namespace name {prefix}h1" in done
        assert not runs(switch_pids[0], str(fake))
        assert f"{prefix}h1" not in _netns()
        time.sleep(0.2)
        assert subprocess.run(["ip", "link", "show", "s8-eth1"], capture_output=True).returncode
        assert load_records(state) == []
    finally:
        run.kill()
        for record in load_records(state):
            for pid in record.processes:
                if runs(pid, str(fake)):
                    os.kill(pid, signal.SIGKILL)
            for name in record.netns:
                subprocess.run(["ip", "netns", "delete", name], capture_output=True)
        subprocess.run(["ip", "link", "delete", "s8-eth1"], capture_output=True)


def test_cleanup_leaves_a_running_owner_and_foreign_processes_alone(tmp_path):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        mine = NetworkRecord(owner_pid=os.getpid(), processes={sleeper.pid: "sleep"})
        mine.save(tmp_path)
        assert clean(tmp_path) == [f"left network of running process {os.getpid()} alone"]
        stale = NetworkRecord(owner_pid=2**22 + 7, processes={sleeper.pid: "/usr/bin/python3"})
        mine.discard(tmp_path)
        stale.save(tmp_path)
        assert clean(tmp_path) == []
        assert sleeper.poll() is None
        assert load_records(tmp_path) == []
    finally:
        sleeper.kill()
