"""TCP flows in the simulator from Python: a finite flow through forward.p4 delivers every
byte and reports its completion time, its series and tcp.csv; bulk flows share a
bottleneck; wrong flows are refused with the reason."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bufferlab.sim import Simulator, SwitchEngine, TcpFlow

GBIT = 1_000_000_000
FORWARD_JSON = Path(__file__).resolve().parents[2] / "sim" / "tests" / "fixtures" / "forward.json"


def _network(bottleneck_bps: int = 10 * GBIT) -> Simulator:
    """h1, h2 at 10 Gbit/s and h3 at ``bottleneck_bps`` on forward.p4; 50 µs per link."""
    engine = SwitchEngine(FORWARD_JSON.read_text())
    for port in (1, 2, 3):
        engine.table_add("l2_forward", {"dst_addr": f"08:00:00:00:01:0{port}"}, "l2_to_port",
                         {"port": port})
    sim = Simulator(seed=2)
    sim.add_switch("s1", engine)
    for n in (1, 2, 3):
        sim.add_host(f"h{n}", f"08:00:00:00:01:0{n}", f"10.0.1.{n}")
    sim.connect(("h1", None), ("s1", 1), rate_bps=10 * GBIT, delay_ns=50_000)
    sim.connect(("h2", None), ("s1", 2), rate_bps=10 * GBIT, delay_ns=50_000)
    sim.connect(("h3", None), ("s1", 3), rate_bps=bottleneck_bps, delay_ns=50_000)
    return sim


def test_a_finite_flow_delivers_every_byte_and_writes_tcp_csv(tmp_path):
    sim = _network()
    sim.add_tcp_flow(TcpFlow("f", "h1", "h2", profile="linux-2010", bytes=2_000_000,
                             start_ns=1_000_000))
    sim.record_every(1_000_000)
    sim.run(100_000_000)
    results = sim.results()
    row = results.tcp["f"]
    assert row["delivered_bytes"] == 2_000_000
    assert row["retransmitted_segments"] == row["timeouts"] == 0
    # 1,370 segments of 1,514 frame bytes take 1.66 ms at 10 Gbit/s; with the handshake
    # (RTT 200 µs) that is the least; slow start from IW 3 (3+6+...+768 ≥ 1,370 in 9
    # rounds) adds at most one RTT per round.
    assert 1_860_000 < row["fct_ns"] < 1_660_000 + 10 * 200_000
    assert row["min_rtt_ns"] >= 200_000
    assert results.series["tcp/f/delivered_bytes"][-1] == 2_000_000
    assert results.series["tcp/f/cwnd_bytes"].max() == row["max_cwnd_bytes"]
    # Data and ACKs crossed the switch as IPv4 frames.
    h1_out = next(link for link in results.links if link["from"] == "h1")
    assert h1_out["frames"]["ipv4"] == row["segments_sent"] + 1
    paths = results.write_csv(tmp_path)
    assert tmp_path / "tcp.csv" in paths
    with (tmp_path / "tcp.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["flow"] == "f" and rows[0]["fct_ns"] == str(row["fct_ns"])
    assert {"cwnd_bytes", "srtt_ns", "retransmitted_segments", "timeouts"} <= set(rows[0])


def test_bulk_flows_share_a_bottleneck_and_recover_from_drops():
    sim = _network(bottleneck_bps=GBIT)
    sim.add_tcp_flow(TcpFlow("a", "h1", "h3"))
    sim.add_tcp_flow(TcpFlow("b", "h2", "h3", profile="newreno"))
    sim.record_every(10_000_000)
    sim.run(300_000_000)
    results = sim.results()
    delivered = sum(results.between(f"tcp/{n}/delivered_bytes", 100_000_000, 300_000_000)
                    for n in ("a", "b"))
    assert delivered * 8 / 0.2 > 0.85 * GBIT
    assert sum(results.tcp[n]["retransmitted_segments"] for n in ("a", "b")) > 0
    assert all(results.tcp[n]["delivered_bytes"] > 2_000_000 for n in ("a", "b"))


def test_cwnd_grows_only_while_the_flight_fills_it():
    # Two flows of one host, each held by a 64 KiB receive window (RTT 200 µs: 2.6 Gbit/s
    # each), their segments interleaved on the host's NIC. Linux counts cwnd as used only
    # when the flight fills it to within 3 segments; a window grown beyond the receiver's
    # would make a loss cut nothing.
    window = 64 << 10
    sim = _network()
    for name in ("a", "b"):
        sim.add_tcp_flow(TcpFlow(name, "h1", "h2", profile="linux-2010",
                                 receive_window_bytes=window))
    sim.run(200_000_000)
    results = sim.results()
    for name in ("a", "b"):
        row = results.tcp[name]
        assert row["delivered_bytes"] > 50_000_000
        assert row["retransmitted_segments"] == 0
        # At most 3 segments over the window, plus what one ACK adds (two segments).
        assert window < row["max_cwnd_bytes"] <= window + 5 * 1460


@pytest.mark.parametrize(("flow", "reason"), [
    (TcpFlow("x", "h1", "h1"), "same host"),
    (TcpFlow("x", "h1", "s1"), "not a host"),
    (TcpFlow("x", "h1", "nowhere"), "no such host"),
    (TcpFlow("x", "h1", "h2", profile="dctcp", ecn=False), "ecn"),
    (TcpFlow("x", "h1", "h2", mss_bytes=10), "mss_bytes"),
])
def test_a_wrong_flow_is_refused_with_the_reason(flow, reason):
    with pytest.raises(ValueError, match=reason):
        _network().add_tcp_flow(flow)


def test_an_unknown_profile_or_algorithm_is_refused_before_the_simulator_sees_it():
    with pytest.raises(ValueError, match="linux-2010"):
        TcpFlow("x", "h1", "h2", profile="windows-xp")
    with pytest.raises(ValueError, match="algorithm"):
        TcpFlow("x", "h1", "h2", algorithm="bbr")


EXAMPLE = Path(__file__).resolve().parents[2] / "experiments" / "scenario" / "examples" / "tcp_ecn.json"


def test_a_scenario_runs_dctcp_flows_through_buffer_switch_with_ecn_marking():
    from bufferlab.experiments.scenario import load_scenario, run_scenario

    scenario = load_scenario(EXAMPLE)
    scenario.duration_ns = 35_000_000
    run = run_scenario(scenario)
    port3 = run.ports["s1"][3]
    # The DCTCP flows hold the queue near K = 97,500 B: marks, no drop.
    assert port3["ecn_marked_frames"] > 1000
    assert port3["port_drops_frames"] == 0
    tcp = run.results.tcp
    for name in ("d1", "d2"):
        assert tcp[name]["ecn_negotiated"] and tcp[name]["ecn_reductions"] > 10
        assert tcp[name]["ce_segments"] > 0 and tcp[name]["retransmitted_segments"] == 0
        assert 0 < tcp[name]["dctcp_alpha"] < 1
    delivered = sum(run.results.between(f"tcp/{n}/delivered_bytes", 10_000_000, 30_000_000)
                    for n in ("d1", "d2", "short"))
    assert delivered * 8 / 0.02 > 9e9, "10 Gbit/s less headers, kept full"
    assert tcp["short"]["delivered_bytes"] == 1_000_000 and tcp["short"]["fct_ns"] > 0


def test_a_wrong_tcp_flow_in_a_scenario_names_its_key():
    import json

    from bufferlab.experiments.scenario import ScenarioError, parse_scenario

    data = json.loads(EXAMPLE.read_text())
    data["tcp_flows"][1]["receiver"] = "h9"
    with pytest.raises(ScenarioError, match=r"tcp_flows\[1\]\.receiver"):
        parse_scenario(data, EXAMPLE.parent)
    data = json.loads(EXAMPLE.read_text())
    data["tcp_flows"][0]["bytes"] = "lots"
    with pytest.raises(ScenarioError, match=r"tcp_flows\[0\]\.bytes"):
        parse_scenario(data, EXAMPLE.parent)
    data = json.loads(EXAMPLE.read_text())
    data["tcp_flows"][0]["profile"] = "vegas"
    with pytest.raises(ScenarioError, match=r"tcp_flows\[0\].*profile 'vegas'"):
        parse_scenario(data, EXAMPLE.parent)
    data = json.loads(EXAMPLE.read_text())
    data["tcp_flows"][0]["window"] = 5
    with pytest.raises(ScenarioError, match=r"tcp_flows\[0\]\.window: unknown key"):
        parse_scenario(data, EXAMPLE.parent)
