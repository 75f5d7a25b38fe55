"""bufferlab.traffic._hosts: the Rust host models (bufferlab-hosts) as the live agents use them."""

import gc
import weakref

import pytest
from scapy.layers.l2 import Ether

from bufferlab.traffic import _hosts, layers
from bufferlab.traffic.agents import bcn, pause, ratelimit

HOST = "08:00:00:00:01:01"


def test_the_agents_logic_is_the_rust_models():
    assert ratelimit.RateLimiterQueue is _hosts.RateLimiterQueue
    assert ratelimit.serialisation_ns is _hosts.serialisation_ns
    assert bcn.parse_bcn is _hosts.parse_bcn and bcn.RpConfig is _hosts.RpConfig
    assert pause.PauseTimer is _hosts.PauseTimer and pause.PfcTimers is _hosts.PfcTimers
    assert pause.parse_mac_control is _hosts.parse_mac_control


# --- Reaction point ---------------------------------------------------------------------


def test_one_regulator_step_cuts_10_gbit_to_7_4():
    rp = _hosts.ReactionPoint(line_rate_bps=10e9, min_rate_bps=10e6)
    assert (rp.rate_bps, rp.limited, rp.rlt_cpid) == (10e9, False, None)
    change = rp.on_bcn(1_000, _hosts.BcnFeedback(7, 0, 0, -1000))
    # 10 Gbit/s × (1 − 2.6e-4 · 1000) = 7.4 Gbit/s
    assert change.rate_bps == pytest.approx(7.4e9, abs=1.0)
    assert (change.now_ns, change.limited, change.rlt_cpid) == (1_000, True, 7)
    assert rp.rate_bps == change.rate_bps
    # + 0.53 · 100 · 1 Mbit/s from the tagging CP only
    assert rp.on_bcn(2_000, _hosts.BcnFeedback(8, 0, 0, 100)) is None
    assert rp.on_bcn(3_000, _hosts.BcnFeedback(7, 0, 0, 100)).rate_bps == pytest.approx(
        7.453e9, abs=1.0)
    assert rp.ignored == 1


def test_severe_bcn_is_the_largest_cut_whatever_its_fb():
    rp = _hosts.ReactionPoint(10e9, 10e6)
    change = rp.on_bcn(0, _hosts.BcnFeedback(7, 0, 0, 5, severe=True))
    assert change.rate_bps == pytest.approx(5.125e9, abs=1.0)  # × (1 − 2.6e-4 · 1875)


def test_rp_config_defaults_are_seed_003_and_reach_the_reaction_point():
    config = _hosts.RpConfig(10e9, 10e6)
    assert (config.gd_per_page, config.gi, config.ru_bps, config.fb_max_pages) == (
        2.6e-4, 0.53, 1e6, 1875)
    own = _hosts.RpConfig(1e9, 1e6, gd_per_page=5e-4, gi=0.5, ru_bps=2e6, fb_max_pages=1000)
    rp = _hosts.ReactionPoint.from_config(own)
    assert rp.config == own and rp.config != config
    # 1 Gbit/s × (1 − 5e-4 · 1000) = 500 Mbit/s (Fb saturated at 1000 pages)
    assert rp.on_bcn(0, _hosts.BcnFeedback(1, 0, 0, -4000)).rate_bps == pytest.approx(500e6)


def test_the_2006_features_are_keywords_that_read_back_and_act():
    config = _hosts.RpConfig(10e9, 10e6, max_decrease=0.1, drift_interval_ns=100_000,
                             drift_step_bps=50e6, severe="stop", backoff_max_ns=1_000,
                             restart_rate_bps=100e6)
    assert config.features == {"max_decrease": 0.1, "drift_interval_ns": 100_000,
                               "drift_step_bps": 50e6, "severe": "stop",
                               "backoff_max_ns": 1_000, "restart_rate_bps": 100e6}
    assert _hosts.RpConfig(10e9, 10e6).features == {}
    assert "max_decrease=0.1" in repr(config)
    rp = _hosts.ReactionPoint.from_config(config, seed=3)
    # The cut is capped at 10 %: 10 → 9 Gbit/s; the drift timer runs from then.
    assert rp.on_bcn(1_000_000, _hosts.BcnFeedback(7, 0, 0, -1875)).rate_bps == pytest.approx(
        9e9)
    assert rp.next_timer_ns == 1_100_000
    assert rp.on_timer(1_050_000) is None
    assert rp.on_timer(1_200_000).rate_bps == pytest.approx(9.1e9)  # two steps of 50 Mbit/s
    # BCN(0,0): held for (0, 1 µs], then 100 Mbit/s.
    change = rp.on_bcn(2_000_000, _hosts.BcnFeedback(7, 0, 0, 0, severe=True))
    assert change.rate_bps == 100e6 and 2_000_000 < change.hold_until_ns <= 2_001_000


def test_a_limiter_from_the_current_rate_reads_what_was_sent():
    rp = _hosts.ReactionPoint.from_config(_hosts.RpConfig(10e9, 10e6, initial_rate="current"))
    for k in range(400):  # 1,500 bytes every 2.4 µs: 5 Gbit/s
        rp.note_sent(k * 2_400, 1_500)
    # 5 Gbit/s × (1 − 2.6e-4 × 1000) = 3.7 Gbit/s
    assert rp.on_bcn(960_000, _hosts.BcnFeedback(7, 0, 0, -1000)).rate_bps == pytest.approx(
        3.7e9, rel=0.01)


# --- PAUSE / PFC ------------------------------------------------------------------------


def test_pause_of_65535_quanta_at_10_gbit_lasts_3_355_392_ns():
    assert _hosts.pause_duration_ns(65_535, 10_000_000_000) == 3_355_392
    timer = _hosts.PauseTimer(10_000_000_000)
    assert timer.link_rate_bps == 10_000_000_000
    assert timer.on_quanta(1_000, 65_535) == 3_356_392
    assert timer.is_paused(3_356_391) and not timer.is_paused(3_356_392)
    assert timer.paused_until_ns == 3_356_392
    assert timer.on_quanta(2_000, 0) == 2_000  # XON
    assert (timer.pauses, timer.resumes) == (1, 1)


def test_pfc_frame_from_the_wire_pauses_only_its_classes():
    event = _hosts.parse_mac_control(bytes(layers.pfc_frame(HOST, {1: 10, 6: 0xFFFF})))
    assert event == _hosts.PauseEvent(0x0101, 0b0100_0010, (0, 10, 0, 0, 0, 0, 0xFFFF, 0))
    assert event.is_pfc
    pfc = _hosts.PfcTimers(1_000_000_000)
    resumes = pfc.on_pfc(100, event.class_enable, event.quanta)
    assert resumes == {1: 100 + 5_120, 6: 100 + 33_553_920}
    assert pfc.paused_classes(5_219) == frozenset({1, 6})
    assert pfc.paused_classes(5_220) == frozenset({6})
    timers = pfc.timers
    assert [t.paused_until_ns for t in timers] == [0, 5_220, 0, 0, 0, 0, 33_554_020, 0]
    timers[6].on_quanta(200, 0)  # a copy: the PfcTimers keep their own state
    assert pfc.paused_classes(200) == frozenset({1, 6})


def test_parse_mac_control_reads_pause_and_ignores_other_frames():
    event = _hosts.parse_mac_control(bytearray(bytes(layers.pause_frame(HOST, 300))))
    assert (event.opcode, event.class_enable, event.quanta[0], event.is_pfc) == (1, 0, 300, False)
    assert _hosts.parse_mac_control(bytes(Ether(src=HOST) / (b"x" * 50))) is None
    assert _hosts.parse_mac_control(b"\x00" * 13) is None


# --- Rate-limiter queue -------------------------------------------------------------------


def test_paced_rlq_releases_one_wire_time_apart_from_the_first_at_once():
    # 976 bytes + 24 bytes overhead = 1000 bytes = 8,000 ns at 1 Gbit/s.
    rlq = _hosts.RateLimiterQueue(10_000, 1_000_000_000, overhead_bytes=24)
    for name in "abcd":
        assert rlq.offer(name, 976, now_ns=100)
    assert (len(rlq), rlq.occupancy_bytes, rlq.capacity_bytes) == (4, 3_904, 10_000)
    assert rlq.head_ready_ns() == rlq.next_release_ns() == 100
    assert rlq.pop(100) == ("a", 976)
    assert rlq.head_ready_ns() == 8_100
    assert rlq.pop(8_099) is None
    assert rlq.release(16_099) == ["b"]  # at 8,100
    assert rlq.release(24_099) == ["c"]  # at 16,100
    assert rlq.release(24_100) == ["d"]
    assert rlq.head_ready_ns() is None and len(rlq) == 0


def test_rlq_refuses_what_does_not_fit_and_counts_it():
    rlq = _hosts.RateLimiterQueue(2_500, 1_000_000_000)
    assert rlq.offer("a", 1000) and rlq.offer("b", 1000)
    assert not rlq.offer("c", 1000)
    assert (rlq.refused_frames, rlq.occupancy_bytes, len(rlq)) == (1, 2000, 2)


def test_rlq_rate_change_and_removal_and_hold():
    rlq = _hosts.RateLimiterQueue(10_000, 1_000_000_000)
    for name in "abc":
        rlq.offer(name, 1000, now_ns=0)
    assert rlq.release(0) == ["a"]
    # 4,000 ns of b's 8,000 ns wait are left at 1 Gbit/s: 8,000 ns at 500 Mbit/s.
    rlq.set_rate(4_000, 500_000_000)
    assert (rlq.rate_bps, rlq.head_ready_ns()) == (500_000_000, 12_000)
    rlq.set_rate(5_000, None)  # unpaced: the rest may leave now
    assert rlq.rate_bps is None
    rlq.hold_until(50_000)
    assert rlq.held_until_ns == 50_000
    assert rlq.release(49_999) == []
    assert rlq.release(50_000) == ["b", "c"]


def test_rlq_items_that_refer_to_the_queue_are_collected():
    class Frame:
        pass

    rlq = _hosts.RateLimiterQueue(10_000)
    frame = Frame()
    frame.queue = rlq
    rlq.offer(frame, 100)
    gone = weakref.ref(frame)
    del frame, rlq
    gc.collect()
    assert gone() is None


def test_serialisation_ns_rounds_up():
    assert _hosts.serialisation_ns(1500, 10_000_000_000) == 1200
    assert _hosts.serialisation_ns(1524, 10_000_000_000) == 1220  # 1,219.2 ns


# --- BCN frames ---------------------------------------------------------------------------


def test_parse_bcn_reads_the_programs_frame():
    sampled = bytes(Ether(src=HOST, dst="08:00:00:00:01:02"))
    raw = bytes(layers.bcn_frame(sampled, 1, 4, 0, 120, -5, -110, timestamp_us=777,
                                 severe=True))
    feedback = _hosts.parse_bcn(raw)
    assert (feedback.cpid, feedback.qoff_pages, feedback.qdelta_pages, feedback.fb_pages,
            feedback.severe, feedback.timestamp_us) == (
        layers.make_cpid(1, 4, 0), 120, -5, -110, True, 777)
    assert feedback.sample_offset == 38
    assert _hosts.parse_bcn(raw[:37]) is None
    assert _hosts.parse_bcn(bytes(layers.pause_frame(HOST, 1))) is None


def test_parse_bcn_carries_exactly_the_sampled_bytes():
    sampled = bytes(Ether(src=HOST, dst="08:00:00:00:01:02"))
    raw = bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, -1, timestamp_us=777))
    feedback = _hosts.parse_bcn(raw)
    assert feedback.sample_len == 14
    assert feedback.sample(raw) == sampled


# --- Bad arguments --------------------------------------------------------------------------


def _queue():
    return _hosts.RateLimiterQueue(100, 1_000_000)


def _rp():
    return _hosts.ReactionPoint(10e9, 10e6)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: _hosts.RateLimiterQueue(0), "capacity_bytes must be positive"),
    (lambda: _hosts.RateLimiterQueue(-1), r"capacity_bytes must be in 0\.\."),
    (lambda: _hosts.RateLimiterQueue(100, 0), "rate_bps must be positive"),
    (lambda: _hosts.RateLimiterQueue(100, overhead_bytes=-1), "overhead_bytes must be in"),
    (lambda: _queue().offer("x", 101), "frame_bytes 101: the frame never fits a 100-byte RLQ"),
    (lambda: _queue().offer("x", -1), "frame_bytes must be in"),
    (lambda: _queue().offer("x", 1, now_ns=-1), "now_ns must be in"),
    (lambda: _queue().release(-1), r"now_ns must be in 0\.\.=18446744073709551615, got -1"),
    (lambda: _queue().pop(2**200), "now_ns must be in .* got 2\\^127 - 1 or more"),
    (lambda: _queue().set_rate(0, 0), "rate_bps must be positive"),
    (lambda: _queue().hold_until(2**64), "resume_ns must be in"),
    (lambda: _hosts.pause_duration_ns(65_536, 10**9), r"quanta must be in 0\.\.=65535"),
    (lambda: _hosts.pause_duration_ns(1, 0), "link_rate_bps must be positive"),
    (lambda: _hosts.serialisation_ns(-1, 10**9), "frame_bytes must be in"),
    (lambda: _hosts.serialisation_ns(1, 0), "rate_bps must be positive"),
    (lambda: _hosts.PauseTimer(0), "link_rate_bps must be positive"),
    (lambda: _hosts.PauseTimer(10**9).on_quanta(0, -1), "quanta must be in"),
    (lambda: _hosts.PfcTimers(10**9).on_pfc(0, 256, (0,) * 8), "class_enable must be in"),
    (lambda: _hosts.PfcTimers(10**9).on_pfc(0, 1, (0,) * 7), "quanta must hold 8 times"),
    (lambda: _hosts.PauseEvent(1, 0, (300,)), "quanta must hold 8 times"),
    (lambda: _hosts.RpConfig(1e9, 2e9), "min_rate_bps"),
    (lambda: _hosts.RpConfig(float("inf"), 1e6), "line_rate_bps must be finite"),
    (lambda: _hosts.RpConfig(1e9, 1e6, gd_per_page=1e-3), "gd_per_page"),
    (lambda: _hosts.RpConfig(1e9, 1e6, gi=-1.0), "gi >= 0"),
    (lambda: _hosts.RpConfig(1e9, 1e6, fb_max_pages=2**31), "fb_max_pages must be in"),
    (lambda: _hosts.ReactionPoint(1e9, 0.0), "min_rate_bps"),
    (lambda: _hosts.RpConfig(1e9, 1e6, max_increase=0.0), "max_increase must be positive"),
    (lambda: _hosts.RpConfig(1e9, 1e6, drift_step_bps=1e6), "go together"),
    (lambda: _hosts.RpConfig(1e9, 1e6, severe="stop", backoff_max_ns=10,
                             restart_rate_bps=2e9), "restart_rate_bps <= line rate"),
    (lambda: _hosts.RpConfig(1e9, 1e6, fb_bits=300), "fb_bits must be in 0..=255"),
    (lambda: _hosts.RpConfig(1e9, 1e6, positive_from="all"), "positive_from"),
    (lambda: _hosts.RpConfig(1e9, 1e6, drift_interval_ns=-1, drift_step_bps=1.0),
     "drift_interval_ns must be in"),
    (lambda: _hosts.BcnFeedback(2**64, 0, 0, 0), "cpid must be in"),
    (lambda: _hosts.BcnFeedback(0, 40_000, 0, 0), r"qoff_pages must be in -32768\.\.=32767"),
    (lambda: _rp().on_bcn(-5, _hosts.BcnFeedback(1, 0, 0, -1)), "now_ns must be in"),
])
def test_bad_arguments_are_value_errors_that_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_an_argument_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError):
        _queue().offer("x", 1.5)
    with pytest.raises(TypeError):
        _rp().on_bcn(0, "not feedback")
