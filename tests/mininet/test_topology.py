"""Topology files: the tutorials' format, our port-model extension, and located errors."""

import json

import pytest

from bufferlab.mininet.topology import (
    Endpoint,
    HostPacing,
    PortModel,
    TopologyError,
    load_topology,
    parse_topology,
)

TUTORIAL = {
    "hosts": {
        "h1": {
            "ip": "10.0.1.1/24",
            "mac": "08:00:00:00:01:01",
            "commands": ["route add default gw 10.0.1.10 dev eth0"],
        },
        "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:02"},
    },
    "switches": {"s1": {"runtime_json": "s1-runtime.json"}, "s2": {}},
    "links": [["h1", "s1-p1"], ["h2", "s2-p2"], ["s1-p3", "s2-p3", "0", 0.5]],
}


def test_tutorial_topology_is_read_with_rate_and_delay_on_the_switch_ports():
    topo = parse_topology(TUTORIAL)
    assert topo.hosts["h1"].commands == ["route add default gw 10.0.1.10 dev eth0"]
    assert topo.switches["s1"].runtime_json == "s1-runtime.json"
    assert topo.switches["s2"].index == 2
    assert topo.switch_ports("s1") == {1: PortModel(), 3: PortModel(rate_bps=500_000)}
    assert topo.peer("s1", 3) == Endpoint("s2", 3)
    assert topo.peer("h2") == Endpoint("s2", 2)


def test_missing_addresses_follow_the_tutorials_plan():
    topo = parse_topology({"hosts": {"h1": {}, "h3": {}}, "switches": {"s1": {}},
                           "links": [["h1", "s1-p1"], ["s1-p3", "h3"]]})
    assert (topo.hosts["h1"].ip, topo.hosts["h1"].mac) == ("10.0.1.1/24", "08:00:00:00:01:01")
    assert (topo.hosts["h3"].ip, topo.hosts["h3"].mac) == ("10.0.1.3/24", "08:00:00:00:01:03")


def test_object_links_carry_the_port_model_and_host_pacing():
    topo = parse_topology({
        "hosts": {"h1": {}},
        "switches": {"s1": {"priority_queues": 8, "pool_bytes": 1_000_000}},
        "links": [{"a": "h1", "b": "s1-p1", "rate_bps": 100_000_000, "delay_ns": 50_000,
                   "wire_overhead_bytes": 0,
                   "host_pacing": {"rate_bps": 50_000_000, "qdisc": "tbf"}}],
    })
    link = topo.links[0]
    assert link.model == PortModel(rate_bps=100_000_000, delay_ns=50_000, wire_overhead_bytes=0)
    assert link.host_pacing == HostPacing(rate_bps=50_000_000, burst_bytes=15_000, qdisc="tbf")
    assert topo.switches["s1"].priority_queues == 8


def test_a_link_carries_its_mtu_and_leaves_linux_default_without_one():
    topo = parse_topology({"hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}},
                           "links": [{"a": "h1", "b": "s1-p1", "mtu_bytes": 9000},
                                     ["h2", "s1-p2"]]})
    assert [link.mtu_bytes for link in topo.links] == [9000, None]


@pytest.mark.parametrize(("mtu", "reason"), [(67, "must be 68 to 65535, not 67"),
                                             (65536, "must be 68 to 65535, not 65536"),
                                             ("9000", "must be an integer")])
def test_a_bad_mtu_names_the_key(mtu, reason):
    with pytest.raises(TopologyError) as err:
        parse_topology({"hosts": {"h1": {}}, "switches": {"s1": {}},
                        "links": [{"a": "h1", "b": "s1-p1", "mtu_bytes": mtu}]})
    assert err.value.key == "links[0].mtu_bytes"
    assert reason in err.value.reason


@pytest.mark.parametrize(
    ("latency", "ns"), [("0", 0), ("5ms", 5_000_000), ("20us", 20_000), ("1.5", 1_500_000)]
)
def test_tutorial_latencies_convert_to_ns(latency, ns):
    topo = parse_topology({"hosts": {"h1": {}}, "switches": {"s1": {}},
                           "links": [["h1", "s1-p1", latency, 10]]})
    assert topo.links[0].model == PortModel(rate_bps=10_000_000, delay_ns=ns)


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        (lambda t: t.update(routers={}), "routers", "unknown key"),
        (lambda t: t["links"].append(["h1", "s9-p1"]), "links[3][1]", "unknown switch 's9'"),
        (lambda t: t["links"].append(["h1", "s1"]), "links[3][1]", "names its port"),
        (lambda t: t["links"].append(["s1-p1", "h2"]), "links[3]", "s1-p1 is already linked in links[0]"),
        (lambda t: t["links"].append(["h1", "s1-p9", "fast", 1]), "links[3][2]", "latency"),
        (lambda t: t["links"].append(["h1", "s1-p9", "1ms", -1]), "links[3][3]", ">= 0"),
        (lambda t: t["switches"].update(tor={}), "switches.tor", "s<N>"),
        (lambda t: t["switches"]["s1"].update(priority_queues=9), "switches.s1.priority_queues",
         "must be 1 to 8"),
        (lambda t: t["switches"]["s1"].update(cpu_port="255"), "switches.s1.cpu_port",
         "must be an integer"),
        (lambda t: t["hosts"]["h1"].update(ip="10.0.1.1"), "hosts.h1.ip", "prefix length"),
        (lambda t: t["hosts"]["h1"].update(mac="08:00"), "hosts.h1.mac", "not a MAC"),
        (lambda t: t["hosts"].update(h9={}), "hosts.h9", "not linked"),
    ],
)
def test_bad_topologies_name_the_key_and_the_reason(change, key, reason):
    data = json.loads(json.dumps(TUTORIAL))
    change(data)
    with pytest.raises(TopologyError) as err:
        parse_topology(data)
    assert err.value.key == key
    assert reason in err.value.reason


def test_host_pacing_on_a_switch_to_switch_link_is_refused():
    with pytest.raises(TopologyError, match=r"links\[0\].host_pacing: only a link with a host"):
        parse_topology({"switches": {"s1": {}, "s2": {}},
                        "links": [{"a": "s1-p1", "b": "s2-p1", "host_pacing": {"rate_bps": 1}}]})


def test_load_reports_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(TopologyError, match="cannot read"):
        load_topology(tmp_path / "missing.json")
    bad = tmp_path / "topology.json"
    bad.write_text('{"hosts": }')
    with pytest.raises(TopologyError, match="not JSON: .* at line 1"):
        load_topology(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(TUTORIAL))
    assert load_topology(good).base_dir == tmp_path
