"""Host agents live: BCN and PAUSE frames crafted on the switch side of a veth in a namespace."""

import threading
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers, tc
from bufferlab.traffic.agents import bcn, pause
from bufferlab.traffic.agents.listener import FrameListener
from bufferlab.traffic.agents.sender import RegulatedSender
from bufferlab.traffic.probe import open_packet_socket

HOST_MAC = "08:00:00:00:01:01"
SWITCH_MAC = layers.port_mac(1, 4)
CP = layers.make_cpid(1, 4, 0)
DATA_PORT = 40000

pytestmark = pytest.mark.root


def _wait_for(predicate, what, timeout_s=10.0):
    """Poll until ``predicate()`` holds; the timeout only guards against a hang."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def _bcn(fb_pages):
    sampled = bytes(Ether(src=HOST_MAC, dst="08:00:00:00:01:02") / IP() / UDP())
    return bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, fb_pages))


def _data_frame(seq):
    return bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src="10.0.1.1", dst="10.0.1.2")
                 / UDP(sport=DATA_PORT, dport=DATA_PORT, chksum=0)
                 / layers.BufferlabData(flow=1, seq=seq) / bytes(900))


def _seq_if_data(frame):
    frame, _ = layers.strip_rlt(frame)
    if len(frame) < 50 or frame[36:38] != DATA_PORT.to_bytes(2, "big"):
        return None
    return int.from_bytes(frame[46:50], "big")


def test_bcn_agent_retunes_an_htb_class(link):
    tc.install_htb("ha", 100_000_000, [tc.HtbClass(2, 20_000_000, ceil_bps=100_000_000)], 2,
                   netns=link)
    rp = bcn.ReactionPoint(bcn.RpConfig(line_rate_bps=100e6, min_rate_bps=1e6, gd_per_page=5e-4,
                                        gi=0.5, ru_bps=1e6, fb_max_pages=1000))
    target = bcn.HtbClassTarget("ha", 2, 20_000_000, 100_000_000, netns=link)
    switch = open_packet_socket("sw", link, receive=False)

    def htb_rate_and_tag():
        # The agent changes the class first and records the tag after: wait for both.
        leaf = tc.class_stats("ha", link)[2]
        return leaf.rate_bps, leaf.ceil_bps, target.rlt_cpid

    try:
        with bcn.BcnAgent("ha", rp, target, link):
            switch.send(_bcn(-1000))  # R = 100 Mb/s · (1 − 5e-4 · 1000) = 50 Mb/s
            _wait_for(lambda: htb_rate_and_tag() == (50_000_000, 50_000_000, CP),
                      "the cut to 50 Mb/s, tagged")
            switch.send(_bcn(+20))  # + 0.5 · 20 · 1 Mb/s = 60 Mb/s
            _wait_for(lambda: htb_rate_and_tag() == (60_000_000, 60_000_000, CP),
                      "the rise to 60 Mb/s")
            switch.send(_bcn(+1000))  # back at line rate: limiter removed, class restored
            _wait_for(lambda: htb_rate_and_tag() == (20_000_000, 100_000_000, None),
                      "the class restored, untagged")
    finally:
        switch.close()
    assert [round(c.rate_bps) for c in rp.history] == [50_000_000, 60_000_000, 100_000_000]


def test_bcn_agent_tags_a_regulated_senders_frames(link):
    rp = bcn.ReactionPoint(bcn.RpConfig(line_rate_bps=100e6, min_rate_bps=1e6, gd_per_page=5e-4,
                                        gi=0.5, ru_bps=1e6, fb_max_pages=1000))
    sender = RegulatedSender("ha", link, rlq_capacity_bytes=10_000)
    switch = open_packet_socket("sw", link, receive=False)
    seen = []
    try:
        with FrameListener("sw", lambda f, t: seen.append(f), link), \
                bcn.BcnAgent("ha", rp, sender, link):
            sender.send([_data_frame(0)])
            switch.send(_bcn(-1800))  # saturated at 1000 pages: 50 Mb/s
            _wait_for(lambda: sender.rlt_cpid == CP, "the RLT installed")
            assert sender.rate_bps == 50_000_000
            sender.send([_data_frame(1), _data_frame(2)])
            _wait_for(lambda: sum(_seq_if_data(f) is not None for f in seen) == 3, "3 frames")
    finally:
        sender.close()
        switch.close()
    data = [f for f in seen if _seq_if_data(f) is not None]
    assert layers.strip_rlt(data[0]) == (data[0], None)
    for frame, seq in zip(data[1:], (1, 2), strict=True):
        assert frame[12:14] == b"\x88\xb6"
        assert layers.strip_rlt(frame) == (_data_frame(seq), CP)
        assert Ether(frame)[layers.RLT].cpid == CP


def test_bcn_agent_drifts_a_sender_up_and_a_bcn00_stops_it(link):
    rp = bcn.ReactionPoint(bcn.RpConfig(
        line_rate_bps=100e6, min_rate_bps=1e6, gd_per_page=5e-4, gi=0.5, ru_bps=1e6,
        fb_max_pages=1000, drift_interval_ns=1_000_000, drift_step_bps=1e6, severe="stop",
        backoff_max_ns=50_000_000, restart_rate_bps=2e6))
    sender = RegulatedSender("ha", link, rlq_capacity_bytes=10_000)
    switch = open_packet_socket("sw", link, receive=False)
    sampled = bytes(Ether(src=HOST_MAC, dst="08:00:00:00:01:02") / IP() / UDP())
    # A timer that fires late takes every step due in one change (53 Mb/s may be one change
    # after the cut on a loaded machine), so the wait is for two changes after the cut.
    def drift_changes():
        return [c for c in rp.history if c.hold_until_ns is None][1:]

    try:
        with bcn.BcnAgent("ha", rp, sender, link):
            switch.send(_bcn(-1000))  # 50 Mb/s, then +1 Mb/s every ms from the agent's timer
            _wait_for(lambda: (sender.rate_bps or 0) >= 53_000_000 and len(drift_changes()) >= 2,
                      "three drift steps in two changes")
            switch.send(bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, -3, severe=True)))
            _wait_for(lambda: any(c.hold_until_ns for c in rp.history), "the BCN(0,0)")
    finally:
        sender.close()
        switch.close()
    cut, *drifts = [c for c in rp.history if c.hold_until_ns is None][:3]
    assert round(cut.rate_bps) == 50_000_000
    assert [round(c.rate_bps - cut.rate_bps) % 1_000_000 for c in drifts] == [0, 0]
    assert all(c.rate_bps > cut.rate_bps and c.rlt_cpid == CP for c in drifts)
    stop = next(c for c in rp.history if c.hold_until_ns)
    assert stop.rate_bps == 2e6 and stop.now_ns < stop.hold_until_ns <= stop.now_ns + 50_000_000
    assert sender.paused_until_ns() == stop.hold_until_ns


def test_pause_agent_stops_and_resumes_the_sender(link):
    # At 10 Mb/s the longest PAUSE lasts 3.36 s: the XON must land inside it even when a
    # loaded CI machine stalls this thread (one run took 480 ms between the two sends).
    link_rate_bps = 10_000_000
    out = open_packet_socket("ha", link, receive=False)
    transmitted = []  # (ns when the sender handed the frame to the kernel, seq)

    def transmit(frame):
        transmitted.append((time.time_ns(), _seq_if_data(frame)))
        return out.send(frame)

    sender = RegulatedSender("ha", link, rlq_capacity_bytes=5_000, transmit=transmit)
    sender.set_rate_bps(8_000_000)  # 1000-byte frames, one per ms
    agent = pause.PauseAgent("ha", link_rate_bps, {0: sender}, link)
    arrivals = []  # (rx_ns, seq) at the switch side
    lock = threading.Lock()

    def on_switch_frame(frame, rx_ns):
        seq = _seq_if_data(frame)
        if seq is not None:
            with lock:
                arrivals.append((rx_ns, seq))

    def arrived_after(t_ns):
        with lock:
            return [rx for rx, _ in arrivals if rx >= t_ns]

    stop = threading.Event()

    def frames():
        seq = 0
        while not stop.is_set():
            yield _data_frame(seq)
            seq += 1

    switch = open_packet_socket("sw", link, receive=False)
    worker = threading.Thread(target=sender.send, args=(frames(),), daemon=True)
    try:
        with FrameListener("sw", on_switch_frame, link, ethertype=0x0800) as tap, agent:
            worker.start()
            _wait_for(lambda: len(arrived_after(0)) >= 10, "traffic before the PAUSE")

            switch.send(bytes(layers.pause_frame(SWITCH_MAC, 2_000)))  # 102.4 ms at 10 Mb/s
            _wait_for(lambda: len(agent.events) == 1, "the PAUSE")
            pause_rx, applied, _ = agent.events[0]
            until = agent.pause.paused_until_ns
            assert until == pause_rx + 2_000 * 512 * 1_000_000_000 // link_rate_bps
            assert sender.paused_until_ns() == until
            _wait_for(lambda: len(arrived_after(until)) >= 5, "traffic after the pause")
            # Only a frame already past the sender's check may leave after the PAUSE. (Its
            # arrival times cannot tell: on a loaded host frames sent before the PAUSE can
            # wait in the kernel's backlog until after it, 4 of them in one run.)
            late = [(t, seq) for t, seq in transmitted if applied <= t < until]
            assert len(late) <= 1, late

            switch.send(bytes(layers.pause_frame(SWITCH_MAC, 0xFFFF)))  # 3.36 s
            _wait_for(lambda: len(agent.events) == 2, "the long PAUSE")
            long_until = agent.pause.paused_until_ns
            switch.send(bytes(layers.pause_frame(SWITCH_MAC, 0)))  # XON
            _wait_for(lambda: len(agent.events) == 3, "the XON")
            xon_rx, xon_applied, _ = agent.events[2]
            assert agent.pause.paused_until_ns == xon_rx
            _wait_for(lambda: len(arrived_after(xon_applied)) >= 3, "traffic after XON")
            assert min(arrived_after(xon_applied)) < long_until
            stop.set()
            worker.join()
    finally:
        stop.set()
        if worker.is_alive():
            worker.join(timeout=5)
        sender.close()
        out.close()
        switch.close()
    assert tap.kernel_drops == 0
    assert (agent.pause.pauses, agent.pause.resumes) == (2, 1)
    seqs = [s for _, s in sorted(arrivals)]
    assert seqs == list(range(len(seqs)))  # held, never dropped or reordered
    assert len(seqs) == sender.sent_frames


class _Holds:
    def __init__(self):
        self.resume_ns = []

    def hold_until(self, resume_ns):
        self.resume_ns.append(resume_ns)


def test_pfc_from_the_wire_holds_only_the_enabled_class(link):
    best_effort, lossless = _Holds(), _Holds()
    agent = pause.PauseAgent("ha", 10_000_000_000, {0: best_effort, 3: lossless}, link)
    switch = open_packet_socket("sw", link, receive=False)
    try:
        with agent:
            switch.send(bytes(layers.pfc_frame(SWITCH_MAC, {3: 0xFFFF, 5: 100})))
            _wait_for(lambda: len(agent.events) == 1, "the PFC frame")
            switch.send(bytes(layers.pfc_frame(SWITCH_MAC, {3: 0})))
            _wait_for(lambda: len(agent.events) == 2, "the per-class XON")
    finally:
        switch.close()
    (pfc_rx, _, first), (xon_rx, _, _) = agent.events
    assert first.class_enable == 0b0010_1000
    assert lossless.resume_ns == [pfc_rx + 3_355_392, xon_rx]  # 65535 quanta at 10 Gb/s
    assert best_effort.resume_ns == []
    assert agent.pfc.timers[5].paused_until_ns == pfc_rx + 5_120
    assert agent.pause.pauses == 0
