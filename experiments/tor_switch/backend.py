"""What a backend does for the study: run one cell and hand back what the tester saw.

The runner, the analysis, the checks and the report only see these types, so a live
backend (Mininet hosts, bufferlab-switch, the controller and the RFC 2544 tester) can
replace the virtual-time one without touching them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

LOST = -1  # out_ns of a frame that never left port C


@dataclass(frozen=True)
class DelayCell:
    """One forwarding-delay trial: A and B each send ``frame_size_bytes`` frames at
    ``load_pct`` % of line rate for ``trial_ns`` into C, whose share is ``threshold_pct``."""

    frame_size_bytes: int
    threshold_pct: int
    load_pct: float
    trial_ns: int


@dataclass(frozen=True)
class BurstCell:
    """One buffer-size search: back-to-back bursts of ``frame_size_bytes`` frames from A and
    B at once into C, whose share is ``threshold_pct``."""

    frame_size_bytes: int
    threshold_pct: int


@dataclass(frozen=True)
class FrameRecords:
    """Every frame of a delay trial, one array element per frame.

    ``source`` is 0 for port A and 1 for port B; ``in_ns`` is when the frame's last bit
    entered the switch, ``out_ns`` when its last bit left port C (``LOST`` if it never did),
    both on one clock.
    """

    source: np.ndarray
    seq: np.ndarray
    in_ns: np.ndarray
    out_ns: np.ndarray

    def __post_init__(self) -> None:
        sizes = {a.size for a in (self.source, self.seq, self.in_ns, self.out_ns)}
        if len(sizes) != 1:
            raise ValueError(f"frame record arrays differ in length: {sorted(sizes)}")

    @property
    def received(self) -> np.ndarray:
        """Mask of the frames that left port C."""
        return self.out_ns != LOST

    def latency_ns(self, from_ns: int = 0) -> np.ndarray:
        """Last bit out − last bit in (RFC 1242 store-and-forward, measured to the last bit
        out), ns, of the received frames whose last bit entered at or after ``from_ns``."""
        mask = self.received & (self.in_ns >= from_ns)
        return (self.out_ns[mask] - self.in_ns[mask]).astype(np.int64)


@dataclass(frozen=True)
class BurstTrial:
    """One back-to-back trial: frames sent and received per source port (A, B)."""

    sent_frames: tuple[int, int]
    received_frames: tuple[int, int]

    @property
    def lost_frames(self) -> int:
        """Frames sent by A and B that never left port C."""
        return sum(self.sent_frames) - sum(self.received_frames)


class Backend(Protocol):
    """Runs cells of the study on some switch."""

    name: str
    #: True when times are exact virtual time, False when measured on a live switch.
    virtual: bool
    #: The TM's cell size when the switch runs the TNA port (None: the buffer counts bytes).
    cell_bytes: int | None
    #: Bytes the program adds to each frame across the TM (the TNA port's bridged header).
    tm_overhead_bytes: int

    def delay_trial(self, cell: DelayCell) -> FrameRecords:
        """Runs one forwarding-delay trial and returns every frame's timestamps."""
        ...

    def burst_trial(self, cell: BurstCell, frames_per_port: int) -> BurstTrial:
        """Sends one back-to-back burst of ``frames_per_port`` frames from A and from B,
        starting together from idle, and counts what came out of C."""
        ...

    def describe(self) -> list[tuple[str, str]]:
        """(parameter, value with unit) pairs that say what this backend modelled."""
        ...
