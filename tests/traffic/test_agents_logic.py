"""Host agents' pure logic with injected time: BCN reaction point, RLQ, PAUSE/PFC, sender."""

import pytest
from scapy.layers.l2 import Dot1Q, Ether

from bufferlab.traffic import layers
from bufferlab.traffic.agents import __main__ as agents_cli
from bufferlab.traffic.agents import bcn, pause
from bufferlab.traffic.agents.ratelimit import RateLimiterQueue, serialisation_ns
from bufferlab.traffic.agents.sender import RegulatedSender

CP = layers.make_cpid(1, 4, 0)
OTHER_CP = layers.make_cpid(2, 1, 0)
HOST = "08:00:00:00:01:01"


def _fb(fb, cpid=CP, severe=False):
    return bcn.BcnFeedback(cpid, 0, 0, fb, severe, 0)


def _rp():
    return bcn.ReactionPoint(bcn.RpConfig(line_rate_bps=10e9, min_rate_bps=10e6,
                                          gd_per_page=2.6e-4, gi=0.53, ru_bps=1e6,
                                          fb_max_pages=1875))


# --- BCN frames -----------------------------------------------------------------------


def test_parse_bcn_from_crafted_frames():
    sampled = bytes(Ether(src=HOST, dst="08:00:00:00:01:02"))
    raw = bytes(layers.bcn_frame(sampled, 1, 4, 0, qoff_pages=120, qdelta_pages=-5,
                                 fb_pages=-110, timestamp_us=777))
    feedback = bcn.parse_bcn(raw)
    assert (feedback.cpid, feedback.qoff_pages, feedback.qdelta_pages, feedback.fb_pages,
            feedback.severe, feedback.timestamp_us) == (CP, 120, -5, -110, False, 777)
    assert feedback.sample_offset == 38  # 12 MACs + 2 EtherType + 24 BCN header
    severe = bytes(layers.bcn_frame(sampled, 1, 4, 0, 2000, 0, -2000, severe=True))
    assert bcn.parse_bcn(severe).severe
    tagged = Ether(raw)
    vlan = bytes(Ether(src=tagged.src, dst=tagged.dst) / Dot1Q(vlan=5, type=0x88B5)
                 / tagged.payload)
    assert bcn.parse_bcn(vlan).fb_pages == -110
    assert bcn.parse_bcn(bytes(layers.pause_frame(HOST, 3))) is None
    assert bcn.parse_bcn(raw[:30]) is None
    bad_version = bytearray(raw)
    bad_version[14] = 0x10
    assert bcn.parse_bcn(bytes(bad_version)) is None


# --- Reaction point ---------------------------------------------------------------------


def test_negative_bcn_cuts_multiplicatively_and_installs_limiter_and_tag():
    rp = _rp()
    change = rp.on_bcn(5_000, _fb(-100))
    assert change.rate_bps == pytest.approx(10e9 * (1 - 2.6e-4 * 100))  # 9.74 Gb/s
    assert (change.now_ns, change.limited, change.rlt_cpid) == (5_000, True, CP)
    change = rp.on_bcn(6_000, _fb(-100))
    assert change.rate_bps == pytest.approx(10e9 * 0.974 * 0.974)


def test_positive_bcn_adds_gi_fb_ru_only_from_the_tagging_cp():
    rp = _rp()
    assert rp.on_bcn(0, _fb(+50)) is None  # no limiter yet: nothing to increase
    rp.on_bcn(1, _fb(-1000))  # 10e9 · (1 − 0.26) = 7.4e9
    assert rp.on_bcn(2, _fb(+40, cpid=OTHER_CP)) is None
    change = rp.on_bcn(3, _fb(+40))
    assert change.rate_bps == pytest.approx(7.4e9 + 0.53 * 40 * 1e6)  # + 21.2 Mb/s
    assert change.rlt_cpid == CP
    assert rp.on_bcn(4, _fb(0)) is None
    assert rp.ignored == 3


def test_negative_from_another_cp_retags_the_limiter():
    rp = _rp()
    rp.on_bcn(0, _fb(-10))
    change = rp.on_bcn(1, _fb(-10, cpid=OTHER_CP))
    assert change.rlt_cpid == OTHER_CP
    assert rp.on_bcn(2, _fb(+10)) is None


def test_severe_and_saturation_give_the_maximal_decrease():
    for feedback in (_fb(-3, severe=True), _fb(-5000), _fb(-1875)):
        rp = _rp()
        assert rp.on_bcn(0, feedback).rate_bps == pytest.approx(10e9 * (1 - 2.6e-4 * 1875))
    rp = _rp()
    rp.on_bcn(0, _fb(-1))
    assert rp.on_bcn(1, _fb(+5000)).rate_bps == pytest.approx(10e9)  # +1875 Mb/s, clamped


def test_rate_clamps_at_rmin_and_limiter_removed_at_line_rate():
    rp = _rp()
    for t in range(20):
        rp.on_bcn(t, _fb(-1875))
    assert rp.rate_bps == 10e6 and rp.limited
    rp.on_bcn(100, _fb(+1000))  # + 530 Mb/s
    assert rp.rate_bps == pytest.approx(540e6)
    while rp.limited:
        change = rp.on_bcn(200, _fb(+1875))
    assert change.rate_bps == 10e9 and change.rlt_cpid is None and not change.limited
    assert len(rp.history) == 20 + 1 + 10  # 540 Mb/s + 9 × 993.75 Mb/s ≥ 10 Gb/s
    assert rp.on_bcn(300, _fb(+1)) is None


def test_rp_config_is_checked():
    with pytest.raises(ValueError, match="min_rate_bps"):
        bcn.RpConfig(line_rate_bps=1e9, min_rate_bps=2e9)
    with pytest.raises(ValueError, match="gd_per_page"):
        bcn.RpConfig(line_rate_bps=1e9, min_rate_bps=1e6, gd_per_page=1e-3, fb_max_pages=1875)


class _RecordingTarget:
    def __init__(self):
        self.calls = []

    def set_rate_bps(self, rate_bps):
        self.calls.append(("rate", rate_bps))

    def set_rlt(self, cpid):
        self.calls.append(("rlt", cpid))


def test_bcn_agent_applies_decisions_to_its_target():
    target = _RecordingTarget()
    agent = bcn.BcnAgent("unused0", _rp(), target)
    sampled = bytes(Ether(src=HOST, dst="08:00:00:00:01:02"))
    agent.on_frame(bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, -1000)), 10)
    agent.on_frame(bytes(layers.pause_frame(HOST, 5)), 11)  # not BCN: ignored
    agent.on_frame(bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, +1875)), 12)
    agent.on_frame(bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, +1875)), 13)
    agent.on_frame(bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, +1875)), 14)
    assert target.calls == [("rate", 7_400_000_000), ("rlt", CP),
                            ("rate", 8_393_750_000), ("rlt", CP),
                            ("rate", 9_387_500_000), ("rlt", CP),
                            ("rate", None), ("rlt", None)]


class _Clock:
    """An injected clock the test moves by hand."""

    def __init__(self, now=0):
        self.now = now

    def __call__(self):
        return self.now


class _BackoffTarget(_RecordingTarget):
    def back_off_until(self, resume_ns):
        self.calls.append(("back off", resume_ns))


def _features_rp(**features):
    return bcn.ReactionPoint(bcn.RpConfig(line_rate_bps=10e9, min_rate_bps=10e6,
                                          **features), seed=3)


def _bcn_frame(fb, severe=False):
    sampled = bytes(Ether(src=HOST, dst="08:00:00:00:01:02"))
    return bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, fb, severe=severe))


def test_bcn_agent_runs_the_drift_timer_on_its_clock():
    clock = _Clock(1_000)
    target = _RecordingTarget()
    agent = bcn.BcnAgent("unused0", _features_rp(drift_interval_ns=100_000,
                                                 drift_step_bps=1e6), target, clock_ns=clock)
    # No limiter, no timer: the thread only looks in now and then.
    assert agent.timer_wait_s() == pytest.approx(0.05)
    agent.on_frame(_bcn_frame(-1000), 1_000)  # 7.4 Gbit/s, first drift step at 101 µs
    assert target.calls == [("rate", 7_400_000_000), ("rlt", CP)]
    clock.now = 31_000
    assert agent.timer_wait_s() == pytest.approx(70e-6)
    assert len(target.calls) == 2  # nothing due yet
    clock.now = 351_000  # steps at 101, 201 and 301 µs are due
    assert agent.timer_wait_s() == pytest.approx(50e-6)
    assert target.calls[2:] == [("rate", 7_403_000_000), ("rlt", CP)]
    assert agent.rp.history[-1].now_ns == 351_000
    assert agent.on_timer(360_000) is None  # the next step is at 401 µs


def test_bcn_agent_drift_back_to_line_rate_removes_the_limiter_and_the_timer():
    clock = _Clock()
    target = _RecordingTarget()
    agent = bcn.BcnAgent("unused0", _features_rp(drift_interval_ns=100_000,
                                                 drift_step_bps=1e6), target, clock_ns=clock)
    agent.on_frame(_bcn_frame(-1), 0)  # 10 Gbit/s · (1 − 2.6e-4) = 9,997.4 Mbit/s
    clock.now = 300_000
    agent.timer_wait_s()  # three steps: 9,999.4 Mbit/s, then line rate
    assert target.calls[-2:] == [("rate", None), ("rlt", None)]
    assert agent.rp.next_timer_ns is None and not agent.rp.limited
    assert agent.timer_wait_s() == pytest.approx(0.05)


def test_bcn_agent_backs_off_on_bcn00_and_restarts_at_rmin():
    target = _BackoffTarget()
    agent = bcn.BcnAgent("unused0", _features_rp(severe="stop", backoff_max_ns=100_000,
                                                 restart_rate_bps=100e6), target)
    agent.on_frame(_bcn_frame(-3, severe=True), 50_000)
    (_, rate), (_, rlt), (kind, resume_ns) = target.calls
    assert (rate, rlt, kind) == (100_000_000, CP, "back off")
    assert 50_000 < resume_ns <= 150_000
    assert agent.rp.history[-1].hold_until_ns == resume_ns
    # A target that cannot be stopped is refused up front, naming the feature.
    with pytest.raises(ValueError, match='severe = "stop"'):
        bcn.BcnAgent("unused0", _features_rp(severe="stop", backoff_max_ns=100_000,
                                             restart_rate_bps=100e6), _RecordingTarget())


def test_a_bcn00_back_off_holds_the_sender_and_an_xon_does_not_end_it():
    wire = _Wire()
    sender = _sender(wire)
    rp = _features_rp(severe="stop", backoff_max_ns=1_000_000, restart_rate_bps=80e6)
    agent = bcn.BcnAgent("unused0", rp, sender, clock_ns=wire.clock)
    sender.hold_until(200_000)  # a PAUSE
    agent.on_frame(_bcn_frame(-3, severe=True), 0)
    resume_ns = rp.history[-1].hold_until_ns
    assert 0 < resume_ns <= 1_000_000 and sender.rate_bps == 80_000_000
    sender.hold_until(0)  # XON: the PAUSE ends, the back-off does not
    assert sender.paused_until_ns() == resume_ns
    sender.send([b"a" * 1000, b"b" * 1000])
    # Nothing before the back-off's end, then 80 Mbit/s: 100 µs per 1,000 bytes.
    assert [t for t, _ in wire.sent] == [resume_ns, resume_ns + 100_000]


def test_bcn_agent_starts_the_limiter_from_the_rate_the_sender_sent_at():
    wire = _Wire()
    sender = _sender(wire, capacity=10_000)
    rp = _features_rp(initial_rate="current", rate_window_ns=1_000_000)
    agent = bcn.BcnAgent("unused0", rp, sender, clock_ns=wire.clock)
    sender.set_rate_bps(80_000_000)  # the source's own pace: 1,000 bytes per 100 µs
    sender.send([bytes(1000)] * 30)
    assert wire.now == 2_900_000
    wire.now = 3_000_000  # 1 ms after the 20th frame: the last window holds 10 frames
    agent.on_frame(_bcn_frame(-1000), wire.now)
    # From the measured 80 Mbit/s, not the 10 Gbit/s line rate: 80 · (1 − 0.26).
    assert sender.rate_bps == 59_200_000
    with pytest.raises(ValueError, match='initial_rate = "current"'):
        bcn.BcnAgent("unused0", _features_rp(initial_rate="current"), _RecordingTarget())


def test_htb_class_target_cannot_carry_a_back_off_or_a_meter():
    htb = bcn.HtbClassTarget("unused0", 2, 1_000_000, 2_000_000)
    assert bcn.target_error(bcn.RpConfig(1e9, 1e6), htb) is None
    assert "back_off_until" in bcn.target_error(
        bcn.RpConfig(1e9, 1e6, severe="stop", backoff_max_ns=1, restart_rate_bps=1e6), htb)
    assert "add_sent_observer" in bcn.target_error(
        bcn.RpConfig(1e9, 1e6, initial_rate="current"), htb)


def test_the_agents_cli_reads_bcn_options_and_refuses_bad_ones(capsys):
    assert agents_cli.bcn_options(["drift_interval_ns=100000", "drift_step_bps=1e6",
                                   "severe=stop"]) == {
        "drift_interval_ns": 100_000, "drift_step_bps": 1e6, "severe": "stop"}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        agents_cli.bcn_options(["drift"])
    for option, says in (("bogus=1", "bogus"), ("severe=stop", "backoff_max_ns"),
                         ("max_decrease=2", "max_decrease")):
        with pytest.raises(SystemExit) as exit_:
            agents_cli.main(["--dst", "10.0.1.3", "--rate-bps", "8Mbit", "--bcn-option", option])
        assert exit_.value.code == 2
        assert says in capsys.readouterr().err


# --- Rate-limiter queue ---------------------------------------------------------------


def test_rlq_releases_at_rate_and_backpressures_when_full():
    rlq = RateLimiterQueue(capacity_bytes=3000, rate_bps=8_000_000)  # 1 byte per µs
    assert serialisation_ns(1000, 8_000_000) == 1_000_000
    assert all(rlq.offer(name, 1000, now_ns=0) for name in "abc")
    assert not rlq.offer("d", 1000, now_ns=0)
    assert (rlq.refused_frames, rlq.occupancy_bytes, len(rlq)) == (1, 3000, 3)
    # A pacer: the head of an idle queue leaves at once, the next one wire time later.
    assert rlq.next_release_ns() == 0
    assert rlq.release(0) == ["a"]
    assert rlq.next_release_ns() == 1_000_000
    assert rlq.release(999_999) == []
    assert rlq.offer("d", 1000, now_ns=999_999)
    assert rlq.release(2_000_000) == ["b", "c"]
    assert rlq.release(3_000_000) == ["d"]
    assert rlq.next_release_ns() is None
    # After idling, a new frame leaves when offered and the next one is paced after it.
    rlq.offer("e", 500, now_ns=10_000_000)
    rlq.offer("f", 500, now_ns=10_000_000)
    assert rlq.next_release_ns() == 10_000_000
    assert rlq.release(10_000_000) == ["e"]
    assert rlq.next_release_ns() == 10_500_000
    with pytest.raises(ValueError, match="never fits"):
        rlq.offer("x", 4000)


def test_rlq_rate_change_applies_to_remaining_bits_and_pause_holds():
    rlq = RateLimiterQueue(capacity_bytes=10_000, rate_bps=8_000_000)
    rlq.offer("a", 1000, now_ns=0)
    rlq.offer("b", 1000, now_ns=0)
    assert rlq.release(0) == ["a"]  # b owes a's 8000 bits at 8 Mb/s: 1 ms
    rlq.set_rate(500_000, 4_000_000)  # 4000 bits left at 4 Mb/s: 1 ms more
    assert rlq.rate_bps == 4_000_000
    assert rlq.next_release_ns() == 1_500_000
    rlq.offer("c", 1000, now_ns=500_000)
    assert rlq.release(1_500_000) == ["b"]
    assert rlq.next_release_ns() == 3_500_000  # c: b's 8000 bits at 4 Mb/s
    rlq.hold_until(9_000_000)  # PAUSE: the head may not leave before the resume time
    assert rlq.next_release_ns() == 9_000_000
    rlq.hold_until(5_000_000)  # a later PAUSE (or XON) replaces the hold, even when shorter
    assert rlq.next_release_ns() == 5_000_000
    assert rlq.release(4_999_999) == []
    assert rlq.release(5_000_000) == ["c"]


# --- PAUSE / PFC ------------------------------------------------------------------------


def test_pause_duration_is_q_times_512_over_r():
    assert pause.pause_duration_ns(0xFFFF, 10_000_000_000) == 3_355_392
    assert pause.pause_duration_ns(0xFFFF, 1_000_000_000) == 33_553_920
    assert pause.pause_duration_ns(1, 1_000_000_000) == 512
    assert pause.pause_duration_ns(1, 10_000_000_000) == 52  # 51.2 ns, rounded up
    assert pause.pause_duration_ns(0, 10_000_000_000) == 0


def test_parse_mac_control():
    assert pause.parse_mac_control(bytes(layers.pause_frame(HOST, 300))) == pause.PauseEvent(
        1, 0, (300, 0, 0, 0, 0, 0, 0, 0))
    pfc = pause.parse_mac_control(bytes(layers.pfc_frame(HOST, {2: 9, 7: 1})))
    assert pfc.is_pfc and pfc.class_enable == 0x84 and pfc.quanta == (0, 0, 9, 0, 0, 0, 0, 1)
    other = bytearray(bytes(layers.pause_frame(HOST, 300)))
    other[15] = 2  # GATE opcode (802.3 MPCP): not ours
    assert pause.parse_mac_control(bytes(other)) is None
    assert pause.parse_mac_control(bytes(Ether(src=HOST) / (b"x" * 50))) is None


def test_pause_timer_pause_refresh_and_xon():
    timer = pause.PauseTimer(1_000_000_000)
    assert not timer.is_paused(0)
    assert timer.on_quanta(1_000, 100) == 1_000 + 51_200
    assert timer.is_paused(52_199) and not timer.is_paused(52_200)
    # A new PAUSE replaces the running timer, even with a shorter time.
    assert timer.on_quanta(20_000, 10) == 25_120
    assert not timer.is_paused(25_120)
    timer.on_quanta(30_000, 0xFFFF)
    assert timer.is_paused(30_000 + 33_553_919)
    assert timer.on_quanta(40_000, 0) == 40_000  # XON
    assert not timer.is_paused(40_000)
    assert (timer.pauses, timer.resumes) == (3, 1)


def test_pfc_timers_are_independent_per_class():
    pfc = pause.PfcTimers(10_000_000_000)
    resumes = pfc.on_pfc(0, 0b0010_1000, (9, 9, 9, 100, 9, 0xFFFF, 9, 9))
    assert resumes == {3: 5_120, 5: 3_355_392}
    assert pfc.paused_classes(5_000) == {3, 5}
    assert pfc.paused_classes(5_120) == {5}
    pfc.on_pfc(6_000, 0b0010_0000, (0,) * 8)  # XON for class 5 only
    assert pfc.paused_classes(6_000) == frozenset()


class _HoldTarget:
    def __init__(self):
        self.holds = []

    def hold_until(self, resume_ns):
        self.holds.append(resume_ns)


def test_pause_agent_holds_all_targets_on_pause_and_one_class_on_pfc():
    low, high = _HoldTarget(), _HoldTarget()
    agent = pause.PauseAgent("unused0", 100_000_000, {0: low, 3: high})
    agent.on_frame(bytes(layers.pause_frame(HOST, 1000)), 1_000_000)
    assert low.holds == high.holds == [1_000_000 + 5_120_000]
    agent.on_frame(bytes(layers.pfc_frame(HOST, {3: 2000, 6: 7})), 2_000_000)
    assert high.holds[-1] == 2_000_000 + 10_240_000 and len(low.holds) == 1
    agent.on_frame(bytes(layers.pause_frame(HOST, 0)), 3_000_000)
    assert low.holds[-1] == high.holds[-1] == 3_000_000
    assert [e.opcode for _, _, e in agent.events] == [1, 0x0101, 1]


# --- Regulated sender with injected clock --------------------------------------------


class _Wire:
    """Injected clock and transmit: time advances only by sleeping."""

    def __init__(self):
        self.now = 0
        self.sent = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += max(1, round(seconds * 1e9))

    def transmit(self, frame):
        self.sent.append((self.now, frame))


def _sender(wire, capacity=3000):
    return RegulatedSender("unused0", rlq_capacity_bytes=capacity, clock_ns=wire.clock,
                           sleep_s=wire.sleep, transmit=wire.transmit)


def test_sender_unlimited_sends_at_once_then_paces_at_the_set_rate():
    wire = _Wire()
    sender = _sender(wire)
    frames = [bytes([k]) * 1000 for k in range(7)]
    assert sender.send(frames[:2]) == 2
    assert [t for t, _ in wire.sent] == [0, 0]
    sender.set_rate_bps(8_000_000)
    assert sender.rate_bps == 8_000_000
    assert sender.send(frames[2:]) == 5
    # The first leaves at once, three more fill the 3000-byte RLQ, the fifth waits until
    # the first of them has left: no frame is lost.
    assert [t for t, _ in wire.sent[2:]] == [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]
    assert [f for _, f in wire.sent] == frames
    assert sender.source_waits == 1


def test_sender_tags_with_rlt_and_removing_the_limiter_flushes():
    wire = _Wire()
    sender = _sender(wire)
    sender.set_rate_bps(8_000_000)
    sender.set_rlt(CP)
    sender.send([b"\x01" * 100])
    frame = wire.sent[0][1]
    assert frame[12:14] == b"\x88\xb6" and int.from_bytes(frame[14:22], "big") == CP
    assert layers.strip_rlt(frame) == (b"\x01" * 100, CP)
    sender.set_rlt(None)
    sender.set_rate_bps(None)
    assert sender.rate_bps is None
    sender.send([b"\x02" * 100])
    assert wire.sent[-1] == (wire.now, b"\x02" * 100)


def test_sender_holds_during_pause_and_resumes_on_xon():
    wire = _Wire()
    sender = _sender(wire)
    sender.hold_until(5_000_000)
    sender.send([b"a" * 60])
    assert wire.sent[0][0] == 5_000_000
    sender.set_rate_bps(8_000_000)
    sender.hold_until(wire.now + 2_000_000)  # resume at 7 ms
    sender.send([b"b" * 1000, b"c" * 1000])
    # Nothing leaves before resume; then the regulated rate spaces frames 1 ms apart.
    assert [t for t, _ in wire.sent[1:]] == [7_000_000, 8_000_000]
