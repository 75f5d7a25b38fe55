"""LabNetwork in real namespaces: hosts set up, named namespaces, pacing, and nothing left behind."""

import os
import subprocess
import uuid

import pytest
from mininet.nodelib import LinuxBridge

from bufferlab.mininet.network import LabNetwork, NetworkOptions
from bufferlab.mininet.switch import SwitchStartError
from bufferlab.mininet.topology import parse_topology
from bufferlab.traffic import tc

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]


def _topology(pacing: bool = False) -> dict:
    link2: list | dict = ["h2", "s7-p2"]
    if pacing:
        link2 = {"a": "h2", "b": "s7-p2", "host_pacing": {"rate_bps": 20_000_000}}
    return {"hosts": {"h1": {}, "h2": {}}, "switches": {"s7": {}},
            "links": [["h1", "s7-p1"], link2]}


def _bridge(net, spec, _options):
    return net.addSwitch(spec.name, cls=LinuxBridge)


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {line.split(": ")[1].split("@")[0] for line in out.splitlines()}


@pytest.fixture
def prefix():
    value = f"blt{uuid.uuid4().hex[:5]}-"
    yield value
    for name in _netns_names():
        if name.startswith(value):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def test_hosts_get_the_tutorials_addresses_and_reach_each_other(prefix):
    options = NetworkOptions(netns_prefix=prefix)
    with LabNetwork(parse_topology(_topology()), options, make_switch=_bridge) as lab:
        h1 = lab.host("h1")
        assert "10.0.7.1/24" in h1.cmd("ip -o -4 addr show dev eth0")
        assert "08:00:00:00:07:01" in h1.cmd("ip -o link show dev eth0")
        assert "1 received" in h1.cmd("ping -c1 -W2 10.0.7.2")
        assert {f"{prefix}h1", f"{prefix}h2"} <= _netns_names()
        out = subprocess.run(["ip", "netns", "exec", f"{prefix}h2", "ip", "-o", "-4", "addr"],
                             capture_output=True, text=True, check=True).stdout
        assert "10.0.7.2/24" in out
    assert not {n for n in _netns_names() if n.startswith(prefix)}
    assert not {n for n in _links() if n.startswith("s7-")}


def test_a_link_mtu_is_set_on_both_ends_and_jumbo_frames_cross(prefix):
    topo = _topology()
    topo["links"] = [{"a": "h1", "b": "s7-p1", "mtu_bytes": 9000},
                     {"a": "h2", "b": "s7-p2", "mtu_bytes": 9000}]
    options = NetworkOptions(netns_prefix=prefix)
    with LabNetwork(parse_topology(topo), options, make_switch=_bridge) as lab:
        assert "mtu 9000" in lab.host("h1").cmd("ip -o link show dev eth0")
        assert "mtu 9000" in lab.host("s7").cmd("ip -o link show dev s7-eth1")
        # 8972 bytes of ICMP payload + 28 of headers: a full 9000-byte packet, unfragmented.
        assert "1 received" in lab.host("h1").cmd("ping -c1 -W2 -M do -s 8972 10.0.7.2")


def test_host_pacing_installs_an_htb_class_at_the_configured_rate(prefix):
    options = NetworkOptions(netns_prefix=prefix)
    with LabNetwork(parse_topology(_topology(pacing=True)), options, make_switch=_bridge) as lab:
        classes = tc.class_stats("eth0", netns=lab.netns("h2"))
        assert classes[2].rate_bps == 20_000_000
        # burst_bytes bounds what leaves back to back: both HTB buckets, not tc's one-MTU cburst.
        assert (classes[2].burst_bytes, classes[2].cburst_bytes) == (15_000, 15_000)
        assert tc.root_qdisc_stats("eth0", netns=lab.netns("h1")).kind != "htb"


def test_a_switch_that_cannot_start_leaves_nothing_behind(prefix, tmp_path):
    options = NetworkOptions(netns_prefix=prefix, switch_binary=str(tmp_path / "no-such-switch"),
                             log_dir=str(tmp_path))
    with pytest.raises(SwitchStartError, match="cannot run"):
        LabNetwork(parse_topology(_topology()), options).start()
    assert not {n for n in _netns_names() if n.startswith(prefix)}
    assert not {n for n in _links() if n.startswith("s7-")}


def test_a_switch_that_exits_shows_its_log(prefix, tmp_path):
    fake = tmp_path / "bufferlab-switch"
    fake.write_text("#!/bin/sh\necho 'error: cannot open interface' >&2\nexit 3\n")
    fake.chmod(0o755)
    options = NetworkOptions(netns_prefix=prefix, switch_binary=str(fake), log_dir=str(tmp_path))
    with pytest.raises(SwitchStartError) as err:
        LabNetwork(parse_topology(_topology()), options).start()
    assert "exited with status 3" in str(err.value)
    assert "error: cannot open interface" in str(err.value)
    assert not {n for n in _links() if n.startswith("s7-")}
