"""The throughput search's logic, against a test double of the Tester (no namespaces)."""

from dataclasses import dataclass

import pytest

from bufferlab.traffic.rfc2544.procedures import throughput


@dataclass
class Trial:
    loss_ratio: float
    max_late_ns: int = 0


class StallingDut:
    """Test double: a device that forwards up to `capacity` of line rate without loss, except
    that the first trial at `stall_load` loses frames (a stall of the host, not the device)."""

    def __init__(self, capacity: float, stall_load: float) -> None:
        self.capacity = capacity
        self.stall_load = stall_load
        self.stalled = False
        self.sources = [object()]
        self.loads: list[float] = []

    def max_fps(self, frame_size: int) -> float:
        return 1e9 / (8 * (frame_size + 20))

    def trial(self, frame_size: int, load: float, duration_s: float, wait_s: float) -> Trial:
        self.loads.append(load)
        if load == self.stall_load and not self.stalled:
            self.stalled = True
            return Trial(loss_ratio=0.01)
        return Trial(loss_ratio=0.0 if load <= self.capacity else 0.2)


def test_one_stalled_trial_sends_an_unconfirmed_search_below_the_throughput():
    res = throughput(StallingDut(capacity=0.4, stall_load=0.25), 512, resolution=0.001)
    assert res.load < 0.25


def test_confirmed_losses_find_the_throughput_despite_a_stall():
    dut = StallingDut(capacity=0.4, stall_load=0.25)
    res = throughput(dut, 512, resolution=0.001, confirm_losses=1)
    assert 0.4 - 0.001 <= res.load <= 0.4
    assert dut.loads.count(0.25) == 2
    # Loads above the capacity lose every time: each is tried 1 + confirm_losses times.
    assert dut.loads.count(1.0) == 2 and dut.loads.count(0.5) == 2
    assert res.trials == len(dut.loads)


def test_confirm_losses_cannot_be_negative():
    with pytest.raises(ValueError, match="confirm_losses"):
        throughput(StallingDut(0.4, 0.25), 512, confirm_losses=-1)
