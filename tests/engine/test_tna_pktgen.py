"""Tofino's packet generator on the engine: applications configured by the control plane
put packets into pipe 0's ingress on its generator port (68 on Tofino 1) with the
generator's header in front of the payload, on a periodic or one-shot timer or when a
port goes down. tests/p4/tna/pktgen.p4 sends them out of port 1 as they came in, so the
frames show the header; times and numbers are worked out from the configuration."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine
from bufferlab.switch.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = bytes(range(60))


def generator_switch() -> Engine:
    doc, _ = compile_p4(ROOT / "tests" / "p4" / "tna" / "pktgen.p4")
    return Engine(json.dumps(doc))


def header(app: int, word: int, packet: int) -> bytes:
    """Tofino 1's generator header: pipe 0 and the app id, 24 bits (pad + batch, or the
    port that went down), the packet's number in its batch."""
    return bytes([app & 7]) + word.to_bytes(3, "big") + packet.to_bytes(2, "big")


def test_a_periodic_application_makes_its_batches_every_period():
    e = generator_switch()
    assert e.pktgen_port() == 68
    e.pktgen_configure(1, "periodic", timer_ns=1000, batches=2, packets=3, ibg_ns=300, ipg_ns=100,
                       payload=PAYLOAD)
    e.pktgen_enable(1)
    e.advance(2500)
    out = e.received()
    # Triggers at 1,000 and 2,000 ns; batch b packet p at + 300 b + 100 p.
    assert [t for _, _, t in out] == [1000, 1100, 1200, 1300, 1400, 1500,
                                      2000, 2100, 2200, 2300, 2400, 2500]
    assert [f for _, f, _ in out[:6]] == [header(1, b, p) + PAYLOAD for b in (0, 1) for p in (0, 1, 2)]
    assert {port for port, _, _ in out} == {1}
    assert e.pktgen_generated(1) == 12 and e.stats()["generated"] == 12


def test_drain_returns_while_a_periodic_application_runs():
    e = generator_switch()
    e.pktgen_configure(0, "periodic", timer_ns=10_000, payload=PAYLOAD)
    e.pktgen_enable(0)
    assert e.next_event_ns() == 10_000
    e.drain()
    assert e.received() == [], "nothing was due yet"
    e.advance(30_000)
    assert len(e.received()) == 3


def test_a_one_shot_application_fires_once_and_a_disabled_one_never():
    e = generator_switch()
    e.pktgen_configure(2, "one_shot", timer_ns=500, packets=2, ipg_ns=10, payload=PAYLOAD)
    e.pktgen_configure(3, "periodic", timer_ns=100, payload=PAYLOAD)
    e.pktgen_enable(2)
    e.advance(100_000)
    assert [t for _, _, t in e.received()] == [500, 510]
    assert e.pktgen_generated(3) == 0


def test_a_port_down_application_fires_once_per_down_event():
    e = generator_switch()
    e.pktgen_configure(4, "port_down", ports=[5, 300], payload=PAYLOAD)
    e.pktgen_enable(4)
    e.advance(1000)
    e.port_status(5, False)
    e.port_status(5, False)  # still down: no second trigger
    e.port_status(7, False)  # not watched
    e.advance(2000)
    e.port_status(5, True)
    e.port_status(300, False)
    e.advance(3000)
    e.port_status(5, False)
    e.advance(4000)
    frames = [f for _, f, _ in e.received()]
    # The header's 24-bit word holds the port (9 bits).
    assert frames == [header(4, 5, 0) + PAYLOAD, header(4, 300, 0) + PAYLOAD, header(4, 5, 0) + PAYLOAD]


def test_the_generator_refuses_what_it_cannot_do():
    e = generator_switch()
    with pytest.raises(InvalidArgumentError, match="application 8: the generator has 8"):
        e.pktgen_configure(8, "periodic", timer_ns=100)
    with pytest.raises(InvalidArgumentError, match="timer_ns > 0"):
        e.pktgen_configure(1, "periodic")
    with pytest.raises(InvalidArgumentError, match="trigger 'sometimes'"):
        e.pktgen_configure(1, "sometimes", timer_ns=1)
    with pytest.raises(InvalidArgumentError, match="pipe 1: the program has 1 pipe"):
        e.pktgen_configure(1, "periodic", timer_ns=100, pipe=1)
    with pytest.raises(NotFoundError, match="application 6 is not configured"):
        e.pktgen_enable(6)
    v1 = Engine((ROOT / "tests" / "engine" / "fixtures" / "l3.json").read_text())
    with pytest.raises(FailedPreconditionError, match="v1model"):
        v1.pktgen_configure(0, "periodic", timer_ns=100)
