"""The live view's last-packets panel: `PacketTraces` reads the switch's BMv2-form log
(grouping lines by packet, continuation lines included, other loggers' lines left out)
and keeps the last packets of each port; the view's server serves them at /traces."""

from __future__ import annotations

import json
import urllib.request
from types import SimpleNamespace

from bufferlab.controller.client import P4RuntimeError
from bufferlab.controller.view.server import LiveView
from bufferlab.controller.view.traces import PacketTraces


def line(packet: int, text: str, copy: int = 0) -> str:
    return f"[10:00:00.000] [bmv2] [D] [thread 7] [{packet}.{copy}] [cxt 0] {text}\n"


LOG = (
    "[10:00:00.000] [bufferlab-switch] [I] port 1: veth1\n"
    + line(0, "Processing packet received on port 1")
    + line(0, "Looking up key:")
    + "* hdr.ethernet.dst_addr: 080000000102\n"
    + "\n"
    + line(0, "Egress port is 2")
    + line(0, "Transmitting packet of size 60 out of port 2")
    + line(1, "Processing packet received on port 1")
    + line(1, "Dropping packet at the end of ingress")
    + line(2, "Processing packet received on port 3")
    + line(2, "Cloning packet to egress port 2")
    + line(2, "Transmitting packet of size 60 out of port 2", copy=1)
)


def test_lines_are_grouped_by_packet_and_kept_per_port():
    t = PacketTraces()
    t.feed(LOG)
    assert t.ports() == [1, 2, 3]
    assert [p["packet"] for p in t.last(1)] == [0, 1]
    assert [p["packet"] for p in t.last(2)] == [0, 2]
    assert t.last(1, 1) == [{"packet": 1, "lines": ["[1.0] Processing packet received on port 1",
                                                    "[1.0] Dropping packet at the end of ingress"]}]
    # The key's field continues the line before it; the switch's own log line is not a packet's.
    assert t.last(2)[0]["lines"][:3] == ["[0.0] Processing packet received on port 1",
                                         "[0.0] Looking up key:",
                                         "* hdr.ethernet.dst_addr: 080000000102"]
    assert t.last(9) == [] and t.last(1, 0) == []


def test_a_line_cut_between_two_reads_waits_for_its_end_and_old_packets_go():
    t = PacketTraces(per_port=2)
    cut = LOG.index("Egress port")
    t.feed(LOG[:cut])
    assert [p["packet"] for p in t.last(2)] == []
    t.feed(LOG[cut:])
    assert [p["packet"] for p in t.last(2)] == [0, 2]
    t.feed(line(5, "Processing packet received on port 2") + line(6, "Egress port is 2"))
    assert [p["packet"] for p in t.last(2)] == [5, 6], "two kept per port"


def test_the_log_is_followed_as_it_grows_and_read_again_when_it_is_truncated(tmp_path):
    log = tmp_path / "s1.log"
    t = PacketTraces(log)
    t.poll()
    assert t.ports() == [], "no log yet"
    log.write_text(LOG)
    t.poll()
    assert [p["packet"] for p in t.last(1)] == [0, 1]
    with log.open("a") as f:
        f.write(line(9, "Processing packet received on port 1"))
    t.poll()
    assert [p["packet"] for p in t.last(1)] == [0, 1, 9]
    log.write_text(line(3, "Processing packet received on port 4"))
    t.poll()
    assert [p["packet"] for p in t.last(4)] == [3]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def test_the_server_serves_a_ports_last_packets(tmp_path):
    log = tmp_path / "s1.log"
    log.write_text(LOG)

    def unavailable():
        raise P4RuntimeError("Read", "UNAVAILABLE", "no switch in this test")

    # The sampler's P4Runtime side is not under test: it fails, the view keeps serving.
    sampler = SimpleNamespace(ports=[1, 2, 3], queues=1, sample=unavailable)
    with LiveView(sampler, interval_s=0.05, traces=PacketTraces(log, per_port=5)) as view:
        answer = get(view.url + "traces?port=2&n=1")
        assert answer["ports"] == [1, 2, 3]
        assert [p["packet"] for p in answer["packets"]] == [2]
        assert answer["packets"][0]["lines"][-1] == "[2.1] Transmitting packet of size 60 out of port 2"
        assert [p["packet"] for p in get(view.url + "traces?port=1")["packets"]] == [0, 1]
    with LiveView(sampler, interval_s=0.05) as view:
        assert "--log" in get(view.url + "traces?port=1")["error"]
