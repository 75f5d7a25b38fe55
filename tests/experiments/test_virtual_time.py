"""The virtual-time backend: buffer_switch.p4 in the simulator, fed by the exact tester model."""

from fractions import Fraction

import numpy as np
import pytest

from bufferlab.experiments.common.wire import last_bit_in_ns
from bufferlab.experiments.tor_switch.backend import BurstCell, DelayCell
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.virtual_time import VirtualTimeBackend

GIG = 1_000_000_000
CONFIG = TorConfig(pool_bytes=16_384, frame_sizes_bytes=(64, 512), thresholds_pct=(25, 100),
                   burst_thresholds_pct=(25, 100))


@pytest.fixture(scope="module")
def backend():
    return VirtualTimeBackend(CONFIG)


def test_every_frame_of_each_source_is_recorded_once_in_sequence(backend):
    rec = backend.delay_trial(DelayCell(512, 100, 10.0, 2_000_000))
    for source in (0, 1):
        mine = rec.source == source
        assert rec.seq[mine].tolist() == list(range(mine.sum()))
    assert rec.received.all()
    # Out in arrival order at C: the two sources' frames interleave, none overtakes its own.
    assert (np.diff(rec.out_ns[rec.source == 0]) > 0).all()


def test_uncongested_frames_take_exactly_their_serialisation(backend):
    # One frame at a time (1 % load): the last bit leaves C (8 + L) byte times after it came in.
    for size in (64, 512, 1518):
        rec = backend.delay_trial(DelayCell(size, 100, 1.0, 2_000_000))
        lat = rec.latency_ns()
        assert rec.received.all()
        assert set(lat.tolist()) == {(size + 8) * 8}


def test_send_times_are_the_wire_model(backend):
    cell = DelayCell(64, 100, 49.8, 1_000_000)
    rec = backend.delay_trial(cell)
    a = rec.in_ns[rec.source == 0]
    b = rec.in_ns[rec.source == 1]
    rate_a = last_bit_in_ns(len(a), 64, GIG, load=Fraction(249, 500))
    assert a.tolist() == rate_a.tolist()
    phase = backend.phase_ns(cell)
    assert b.tolist() == (rate_a[:len(b)] + phase).tolist()
    assert 0 <= phase < 1350


def test_phase_is_seeded(backend):
    cell = DelayCell(512, 25, 50.0, 1)
    other = VirtualTimeBackend(TorConfig(pool_bytes=16_384, thresholds_pct=(25,),
                                         burst_thresholds_pct=(25,), seed=7))
    assert backend.phase_ns(cell) == VirtualTimeBackend(CONFIG).phase_ns(cell)
    assert backend.phase_ns(cell) != other.phase_ns(cell)


@pytest.mark.parametrize("size, threshold", [(512, 25), (512, 100), (1024, 100), (64, 100)])
def test_back_to_back_burst_fills_the_threshold_then_tail_drops(backend, size, threshold):
    # Each frame time brings two frames and starts one, so when B's k-th frame arrives k
    # frames wait (the one in service no longer counts): it fits while (k + 1) frames of
    # (size - 4) bytes stay within the share.
    share = CONFIG.pool_bytes * threshold // 100
    held = share // (size - 4)
    assert backend.burst_trial(BurstCell(size, threshold), held).lost_frames == 0
    over = backend.burst_trial(BurstCell(size, threshold), held + 1)
    assert over.sent_frames == (held + 1, held + 1)
    # Ties go to A: B's last frame is the one that finds the share full.
    assert over.received_frames == (held + 1, held)


def test_congesting_load_tail_drops_and_holds_delay_at_the_threshold(backend):
    cell = DelayCell(512, 25, 50.2, 100_000_000)
    rec = backend.delay_trial(cell)
    lost = (~rec.received).sum()
    assert lost > 0
    lat = rec.latency_ns(50_000_000)
    # 25 % of 16,384 B = 4,096 B = 8 frames of 508 B; each drains in 532 byte times (8 ns).
    frame_ns = 532 * 8
    assert lat.max() <= 8 * frame_ns + (512 + 8) * 8
    assert lat.min() >= 7 * frame_ns
    # A trial of a fixed length at a slight overload loses about the excess it offered.
    sent = rec.in_ns.size
    assert lost == pytest.approx(sent * (1 - 100 / 100.4), abs=12)


def test_no_loss_below_line_rate(backend):
    rec = backend.delay_trial(DelayCell(64, 25, 49.9, 20_000_000))
    assert rec.received.all()
    assert np.unique(rec.seq[rec.source == 0]).size == (rec.source == 0).sum()


def test_a_cell_reproduces_bit_for_bit(backend):
    cell = DelayCell(512, 25, 50.1, 5_000_000)
    first, second = backend.delay_trial(cell), backend.delay_trial(cell)
    for name in ("source", "seq", "in_ns", "out_ns"):
        assert np.array_equal(getattr(first, name), getattr(second, name))


def test_a_load_the_simulator_cannot_pace_exactly_is_refused_up_front():
    odd = TorConfig(port_rate_bps=1_000_000_001, pool_bytes=16_384, thresholds_pct=(25,),
                    burst_thresholds_pct=(25,), frame_sizes_bytes=(64,), loads_pct=(50.1,))
    with pytest.raises(ValueError, match=r"loads_pct: 50.1 % of port_rate_bps 1,000,000,001"):
        VirtualTimeBackend(odd)
