"""The tester's wire model: exact last-bit times, loads, frame counts."""

from fractions import Fraction

import pytest

from bufferlab.experiments.common import wire

GIG = 1_000_000_000


def test_back_to_back_64_byte_frames_at_1_gbit_s():
    # Slot 84 bytes = 672 ns; the last FCS bit is 8 + 64 = 72 bytes = 576 ns into the slot.
    assert wire.last_bit_in_ns(4, 64, GIG).tolist() == [576, 1248, 1920, 2592]


def test_half_load_doubles_the_slot_and_start_offsets_everything():
    assert wire.last_bit_in_ns(3, 1518, GIG, Fraction(1, 2), start_ns=1000).tolist() == [
        1000 + 12208, 1000 + 12208 + 24608, 1000 + 12208 + 2 * 24608]


def test_fractional_slots_are_floored_without_drift():
    load = wire.load_fraction(49.8)
    assert load == Fraction(249, 500)
    times = wire.last_bit_in_ns(1_000_001, 64, GIG, load)
    slot = Fraction(672) / load  # 1349.397... ns
    assert times[1] == int(slot + 576)
    assert times[-1] == int(1_000_000 * slot + 576)
    # The average spacing is the exact slot, so the offered load is exactly 49.8 %.
    assert (times[-1] - times[0]) / 1_000_000 == pytest.approx(float(slot), abs=1e-6)


def test_a_slot_with_a_large_denominator_gives_the_same_exact_times():
    # 1,000,000,007 bit/s is prime: the exact slot's denominator is too large for int64
    # arithmetic over a long stream, so the times come from whole integers instead.
    rate = 1_000_000_007
    times = wire.last_bit_in_ns(2_000_000, 64, rate, wire.load_fraction(49.9))
    slot, own = wire.slot_ns(64, rate, Fraction(499, 1000)), wire.frame_ns(64, rate)
    assert times.dtype.name == "int64"
    for k in (0, 1, 1_999_999):
        assert times[k] == int(k * slot + own)


def test_frames_in_counts_slots_starting_inside_the_duration():
    assert wire.frames_in(1344, 64, GIG, Fraction(1, 2)) == 1
    assert wire.frames_in(1345, 64, GIG, Fraction(1, 2)) == 2
    assert wire.frames_in(1_000_000, 64, GIG, Fraction(1)) == 1489  # ceil(1e6 / 672)
    assert wire.frames_in(0, 64, GIG, Fraction(1)) == 0


def test_slot_frame_and_gap_durations():
    assert wire.slot_ns(64, GIG) == 672
    assert wire.frame_ns(1518, 10 * GIG) == Fraction(12208, 10)
    assert wire.ifg_ns(GIG) == 96


@pytest.mark.parametrize("load", [0, -1, 100.1, 150])
def test_loads_outside_line_rate_are_refused(load):
    with pytest.raises(ValueError, match="load"):
        wire.load_fraction(load)


def test_runt_frames_are_refused():
    with pytest.raises(ValueError, match="below Ethernet's 64"):
        wire.last_bit_in_ns(1, 63, GIG)
