"""`bufferlab.sim.Simulator` refuses a wrong network with ValueError saying why, and runs a
right one built by hand (forward.p4, programmed through the engine's table API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bufferlab.sim import Simulator, Source, SwitchEngine

TEN_GBIT = 10_000_000_000
#: p4src/forward.p4 compiled (L2 forwarding by destination MAC), the Rust tests' fixture.
FORWARD_JSON = Path(__file__).resolve().parents[2] / "sim" / "tests" / "fixtures" / "forward.json"


def _network() -> Simulator:
    """h1 - s1 port 1, h2 - s1 port 2, forward.p4 bridging by MAC; h3 not linked."""
    engine = SwitchEngine(FORWARD_JSON.read_text())
    for port in (1, 2):
        engine.table_add("l2_forward", {"dst_addr": f"08:00:00:00:01:0{port}"}, "l2_to_port",
                         {"port": port})
    sim = Simulator(seed=3)
    sim.add_switch("s1", engine, latency_ns=1_000)
    for n in (1, 2, 3):
        sim.add_host(f"h{n}", f"08:00:00:00:01:0{n}", f"10.0.1.{n}")
    sim.connect(("h1", None), ("s1", 1), rate_bps=TEN_GBIT, delay_ns=500)
    sim.connect(("h2", None), ("s1", 2), rate_bps=TEN_GBIT, delay_ns=500)
    return sim


def test_a_hand_built_network_delivers_what_it_sends():
    sim = _network()
    sim.add_source(Source("one", "h1", "h2", rate_bps=TEN_GBIT, start_ns=1_000,
                          stop_ns=1_001))
    sim.run(100_000)
    flow = sim.results().flows["one"]
    # 1,524 wire bytes at 10 Gbit/s = 1,219 ns per hop, + 500 ns, + the switch's 1,000 ns.
    assert (flow["frames"], flow["first_rx_ns"]) == (1, 1_000 + 1_719 + 1_000 + 1_719)


def test_a_capturing_host_hands_back_every_data_frame_as_a_structured_array():
    sim = _network()
    sim.add_source(Source("one", "h1", "h2", rate_bps=TEN_GBIT, start_ns=1_000,
                          stop_ns=3_500))
    sim.capture("h2")
    assert sim.captured("h1").size == 0
    sim.run(100_000)
    got = sim.captured("h2")
    assert got.dtype.names == ("flow", "seq", "tx_ns", "rx_ns")
    # 1,219.2 ns a frame, back to back on both links (each run carries the fraction, so
    # the first four take 1,219 ns): every frame arrives 1,219 + 500 + 1,000 + 1,219 + 500
    # ns after it started.
    assert got.tolist() == [(0, 0, 1_000, 5_438), (0, 1, 2_219, 6_657), (0, 2, 3_438, 7_876)]
    with pytest.raises(ValueError, match="s1: a switch, not a host"):
        sim.capture("s1")
    with pytest.raises(ValueError, match="h9: no such host or switch"):
        sim.captured("h9")


@pytest.mark.parametrize(("change", "reason"), [
    (lambda sim: sim.connect(("h3", None), ("s1", 1), rate_bps=TEN_GBIT),
     "s1-p1: port already linked"),
    (lambda sim: sim.connect(("h1", None), ("s1", 4), rate_bps=TEN_GBIT),
     "h1: a host has one link, this one is linked already"),
    (lambda sim: sim.connect(("h3", None), ("s9", 4), rate_bps=TEN_GBIT),
     "s9: no such host or switch"),
    (lambda sim: sim.connect(("h3", None), ("s1", 3), rate_bps=0),
     "link h3 - s1-p3: rate_bps must be positive"),
    (lambda sim: sim.connect(("h3", None), ("s1", None), rate_bps=TEN_GBIT),
     "s1: a switch end needs a port"),
    (lambda sim: sim.add_host("h1", "08:00:00:00:01:09", "10.0.1.9"),
     "h1: a node of that name exists"),
    (lambda sim: sim.add_host("h4", "08:00:00:00:01", "10.0.1.4"),
     '"08:00:00:00:01" is not a MAC address'),
    (lambda sim: sim.add_source(Source("s", "h3", "h2", rate_bps=TEN_GBIT)),
     "source s: host h3 has no link"),
    (lambda sim: sim.add_source(Source("s", "h1", "h9", rate_bps=TEN_GBIT)),
     "h9: no such host or switch"),
    (lambda sim: sim.add_source(Source("s", "h1", "h2", rate_bps=0)),
     "source s: constant rate_bps must be positive"),
    (lambda sim: sim.add_source(Source("s", "h1", "h2", pattern="bernoulli", load=1.5)),
     "source s: bernoulli load 1.5 must be in (0, 1]"),
    (lambda sim: sim.add_source(Source("s", "h1", "h2", rate_bps=TEN_GBIT, rlq_bytes=1000)),
     "source s: rlq_bytes 1000 cannot hold a 1500-byte frame"),
    (lambda sim: sim.add_source(Source("s", "h1", "h2", rate_bps=TEN_GBIT,
                                       when_full="block")),
     "source s: when_full \"block\": use 'drop' or 'backpressure'"),
    (lambda sim: sim.record_every(0), "record interval_ns must be positive"),
], ids=["port linked twice", "host linked twice", "unknown node", "zero rate",
         "switch end without port", "duplicate name", "bad MAC", "source on an unlinked host",
         "unknown destination", "zero source rate", "load above 1", "rlq smaller than a frame",
         "bad when_full", "zero record interval"])
def test_a_wrong_network_is_refused_with_the_reason(change, reason):
    sim = _network()
    with pytest.raises(ValueError) as caught:
        change(sim)
    assert str(caught.value) == reason


def test_a_network_that_has_run_cannot_change():
    sim = _network()
    sim.add_source(Source("a", "h1", "h2", rate_bps=TEN_GBIT, stop_ns=10_000))
    sim.run(20_000)
    for change, what in [
        (lambda: sim.add_host("h4", "08:00:00:00:01:04", "10.0.1.4"), "add_host"),
        (lambda: sim.connect(("h3", None), ("s1", 3), rate_bps=TEN_GBIT), "connect"),
        (lambda: sim.add_source(Source("b", "h2", "h1", rate_bps=TEN_GBIT)), "add_source"),
        (lambda: sim.add_switch("s2", SwitchEngine(FORWARD_JSON.read_text())), "add_switch"),
        (lambda: sim.record_every(1_000), "record_every"),
    ]:
        with pytest.raises(ValueError) as caught:
            change()
        assert str(caught.value) == f"{what}: the network cannot change once it has run"
    # Running on is fine: the clock only moves forward.
    sim.run(30_000)
    assert sim.now_ns == 30_000


class NoTimer:
    """A reaction model without on_timer: refused."""

    def on_feedback(self, ctx, frame):
        pass


def test_a_refused_hook_leaves_no_source_behind():
    sim = _network()
    with pytest.raises(ValueError, match="hook has no on_timer"):
        sim.add_source(Source("a", "h1", "h2", rate_bps=TEN_GBIT, reaction=NoTimer()))
    sim.add_source(Source("a", "h1", "h2", rate_bps=TEN_GBIT, stop_ns=5_000))
    sim.run(10_000)
    assert list(sim.results().sources) == ["a"]


def test_a_bernoulli_source_on_an_unknown_host_names_the_host():
    sim = _network()
    with pytest.raises(ValueError) as caught:
        sim.add_source(Source("s", "h9", "h2", pattern="bernoulli", load=0.5))
    assert str(caught.value) == "h9: no such host or switch"
