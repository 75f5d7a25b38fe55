"""A progress reporter for long runs: one line per step with elapsed time and ETA."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """Counts steps of a run of known length and prints one line per step.

    The ETA assumes the remaining steps take as long as the finished ones on average.
    """

    def __init__(
        self,
        total_steps: int,
        label: str = "",
        out: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Start timing now; ``out`` defaults to standard error."""
        if total_steps <= 0:
            raise ValueError(f"total_steps must be positive, got {total_steps}")
        self.total_steps = total_steps
        self.done = 0
        self.label = label
        self._out = out
        self._clock = clock
        self._start = clock()

    def step(self, what: str = "") -> str:
        """Record one finished step and print its line; returns the line."""
        self.done += 1
        elapsed = self._clock() - self._start
        left = self.total_steps - self.done
        eta = elapsed / self.done * left
        head = f"{self.label}: " if self.label else ""
        detail = f" {what}" if what else ""
        line = (f"{head}step {self.done}/{self.total_steps} "
                f"({100 * self.done // self.total_steps}%){detail} — "
                f"elapsed {_duration(elapsed)}, ETA {_duration(eta)}")
        print(line, file=self._out if self._out is not None else sys.stderr, flush=True)
        return line
