"""The switch SIGKILLed in the middle of a Mininet run, the run then dying too: `make stop`
removes every namespace, link and process the run created (the hosts' shells, a tool
started in a host's namespace, the switch's interfaces) and nothing else — a foreign
namespace, veth pair and processes, one of them even named bufferlab-switch, survive."""

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from bufferlab.experiments.common.ports import free_port_block
from bufferlab.mininet.cleanup import command_line, load_records, namespace_processes

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

ROOT = Path(__file__).resolve().parents[2]

# The run: a real bufferlab-switch between two hosts, a ping flood through it and a
# long-running tool in h2's namespace (as bufferlab-recv would be), then it waits.
RUN = textwrap.dedent("""\
    import subprocess, sys, time
    from pathlib import Path
    from bufferlab.mininet.network import LabNetwork, NetworkOptions
    from bufferlab.mininet.topology import parse_topology
    topo = parse_topology({"hosts": {"h1": {}, "h2": {}}, "switches": {"s6": {}},
                           "links": [["h1", "s6-p1"], ["h2", "s6-p2"]]})
    opts = NetworkOptions(log_dir=sys.argv[1], state_dir=Path(sys.argv[2]),
                          netns_prefix=sys.argv[3], grpc_base_port=int(sys.argv[4]),
                          thrift_base_port=int(sys.argv[5]))
    from bufferlab.mininet.cleanup import namespace_processes
    lab = LabNetwork(topo, opts)
    lab.start()
    lab.host("h1").cmd("ping -q -i 0.01 10.0.6.2 >/dev/null 2>&1 &")
    subprocess.Popen(["ip", "netns", "exec", sys.argv[3] + "h2", "sleep", "600"])
    # "up" once both tools run in their namespaces: the shell's child and `ip netns exec`
    # enter and exec after the fork, which a loaded machine can delay past the test's look.
    def running(host, tool):
        return tool in {Path(p).name for p in namespace_processes(sys.argv[3] + host).values()}
    deadline = time.monotonic() + 60
    while not (running("h1", "ping") and running("h2", "sleep")) and time.monotonic() < deadline:
        time.sleep(0.05)
    print("up", flush=True)
    time.sleep(600)
""")


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _link_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


def _alive(pid: int) -> bool:
    return command_line(pid) is not None


@pytest.fixture
def foreign(tmp_path):
    """Another user's namespace, veth pair and processes (one named bufferlab-switch)."""
    tag = uuid.uuid4().hex[:5]
    netns, veth = f"foreign{tag}", f"frn{tag}"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    subprocess.run(["ip", "link", "add", f"{veth}a", "type", "veth", "peer", "name", f"{veth}b"],
                   check=True)
    impostor = tmp_path / "bufferlab-switch"
    impostor.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    impostor.chmod(0o755)
    processes = [subprocess.Popen(["sleep", "600"]), subprocess.Popen([str(impostor)])]
    yield netns, veth, processes
    for process in processes:
        process.kill()
        process.wait()
    subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
    subprocess.run(["ip", "link", "delete", f"{veth}a"], capture_output=True)


def test_make_stop_after_the_switch_is_killed_mid_run(tmp_path, foreign):
    state = tmp_path / "state"
    prefix = f"blk{uuid.uuid4().hex[:5]}-"
    # Switch s6 serves on base + 5 (the tutorials' plan): its two ports are the free block.
    ports = free_port_block(2) - 5
    run = subprocess.Popen(
        [sys.executable, "-c", RUN, str(tmp_path), str(state), prefix, str(ports),
         str(ports + 1)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert run.stdout.readline().strip() == "up"
        (record,) = load_records(state)
        switches = [pid for pid, name in record.processes.items()
                    if Path(name).name == "bufferlab-switch"]
        assert len(switches) == 1
        assert sorted(record.netns) == [f"{prefix}h1", f"{prefix}h2"]
        assert {"s6-eth1", "s6-eth2"} <= set(record.interfaces)
        in_namespaces = {**namespace_processes(f"{prefix}h1"), **namespace_processes(f"{prefix}h2")}
        names = sorted(Path(name).name for name in in_namespaces.values())
        assert "ping" in names and "sleep" in names

        # The switch dies mid-run; its run dies with it (nobody takes the network down).
        os.kill(switches[0], signal.SIGKILL)
        run.send_signal(signal.SIGKILL)
        run.wait()

        env = {**os.environ, "BUFFERLAB_STATE_DIR": str(state)}
        stop = subprocess.run(["make", "-s", "stop"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert stop.returncode == 0, stop.stderr
        assert f"deleted namespace name {prefix}h1" in stop.stdout
        assert f"deleted namespace name {prefix}h2" in stop.stdout

        assert not {f"{prefix}h1", f"{prefix}h2"} & _netns_names()
        assert not any(_link_exists(iface) for iface in record.interfaces)
        assert not any(_alive(pid) for pid in [*record.processes, *in_namespaces])
        assert load_records(state) == []
        # Nothing else was touched.
        netns, veth, processes = foreign
        assert netns in _netns_names()
        assert _link_exists(f"{veth}a") and _link_exists(f"{veth}b")
        assert all(process.poll() is None for process in processes)
    finally:
        run.kill()
        run.wait()
        # Whatever a failed assertion left behind goes, by the record's own names.
        for leftover in load_records(state):
            for netns in leftover.netns:
                for pid in namespace_processes(netns):
                    os.kill(pid, signal.SIGKILL)
                subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
            for pid, name in leftover.processes.items():
                if command_line(pid) and Path(command_line(pid)[0]).name == Path(name).name:
                    os.kill(pid, signal.SIGKILL)
            for iface in leftover.interfaces:
                subprocess.run(["ip", "link", "delete", iface], capture_output=True)
