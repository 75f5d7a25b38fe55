"""Seed 003 (BCN calibration) shortened: drops only at the hosts' rate-limiter queues, the
egress link to the sink fully used, and runs that repeat byte for byte."""

from __future__ import annotations

from pathlib import Path

from bufferlab.experiments.scenario import build_simulation, run_scenario

TEN_GBIT = 10_000_000_000
SINK_LINK = "link/s1-p5>ep4/bytes"
PORTS = (1, 2, 3, 4, 5)


def test_drops_happen_only_at_the_rlqs_and_the_sink_link_is_full(seed003):
    # Sources start at 5 ms; EP0 and EP1 stop at 20 ms; the run ends at 25 ms.
    scenario = seed003(25_000_000, stop_ns=20_000_000)
    sim = build_simulation(scenario)
    sim.run(scenario.duration_ns)
    results = sim.results()

    engine = sim.switches["s1"]
    assert [engine.counter_read("port_drops", p)[0] for p in PORTS] == [0] * 5
    assert [engine.counter_read("queue_drops", p * 8)[0] for p in PORTS] == [0] * 5
    assert results.switches["s1"]["dropped_by_tm_frames"] == 0
    assert results.switches["s1"]["dropped_by_program_frames"] == 0
    dropped = {name: s["dropped_frames"] for name, s in results.sources.items()}
    assert all(n > 0 for n in dropped.values()), dropped
    # Each host received BCNs from the congestion point at port 5 and lowered its rate.
    assert all(results.hosts[h]["bcn_frames"] > 0 for h in ("ep0", "ep1", "ep2", "ep3"))
    assert all(s["feedback_applied"] > 0 for s in results.sources.values())

    # Converged from 10 ms on: 20 Gbit/s offered into 10 Gbit/s, the link never idles.
    # Bare frames (overhead 0): 10 Gbit/s × 10 ms = 12,500,000 bytes.
    window_ns = 10_000_000
    arrived = results.between(SINK_LINK, 10_000_000, 20_000_000)
    assert arrived >= 0.99 * TEN_GBIT / 8 * window_ns / 1e9, arrived
    # ...and the link carries no more than its rate (a check of the check), give or take
    # the one 1,500-byte frame under way at a window's edge (10 ms is 8,333⅓ frame times).
    assert arrived <= TEN_GBIT / 8 * window_ns / 1e9 + 1500
    # Every frame that crossed it is a data frame that reached ep4.
    received = sum(f["bytes"] for f in results.flows.values())
    assert results.series[SINK_LINK][-1] == received


def _csvs(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.csv"))}


def test_the_same_seed_writes_the_same_csvs_and_another_seed_other_ones(seed003, tmp_path):
    scenario = seed003(10_000_000, stop_ns=8_000_000)
    runs = {}
    for label, seed in (("a", 1), ("b", 1), ("c", 2)):
        run_scenario(scenario, seed).results.write_csv(tmp_path / label)
        runs[label] = _csvs(tmp_path / label)
    assert set(runs["a"]) == {"series.csv", "sources.csv", "flows.csv", "hosts.csv",
                              "switches.csv", "links.csv", "run.csv"}
    assert runs["a"] == runs["b"]
    # Bernoulli arrivals and the CP's sampling jitter follow the seed.
    for name in ("series.csv", "sources.csv", "flows.csv", "links.csv"):
        assert runs["a"][name] != runs["c"][name], name
    header = runs["a"]["sources.csv"].decode().splitlines()[0].split(",")
    assert header[:3] == ["source", "host", "flow_id"]
    assert "dropped_frames" in header and "rate_bps" in header
