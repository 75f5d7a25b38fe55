"""The live labs' context manager: a failed start tears down what it brought up."""

from __future__ import annotations

import pytest

from bufferlab.experiments.common.lifecycle import ClosedOnFailedStart


class _Lab(ClosedOnFailedStart):
    def __init__(self, fail: BaseException | None) -> None:
        self.fail = fail
        self.events: list[str] = []

    def _start(self) -> None:
        self.events.append("network up")
        if self.fail is not None:
            raise self.fail
        self.events.append("switch up")

    def close(self) -> None:
        self.events.append("closed")


def test_a_started_lab_is_closed_on_exit_and_returned_by_enter() -> None:
    lab = _Lab(None)
    with lab as entered:
        assert entered is lab
        assert lab.events == ["network up", "switch up"]
    assert lab.events == ["network up", "switch up", "closed"]


@pytest.mark.parametrize("error", [RuntimeError("port never opened"), KeyboardInterrupt()])
def test_a_failed_start_closes_and_reraises(error: BaseException) -> None:
    lab = _Lab(error)
    with pytest.raises(type(error)):
        with lab:
            pytest.fail("the body must not run after a failed start")
    assert lab.events == ["network up", "closed"]


def test_an_error_in_the_body_still_closes() -> None:
    lab = _Lab(None)
    with pytest.raises(ValueError):
        with lab:
            raise ValueError("trial failed")
    assert lab.events[-1] == "closed"
