"""The tester's ports and one RFC 2544 trial (RFC 2544 section 23).

A trial: bind the sink's receiver, start every source at the same CLOCK_REALTIME instant,
send for the trial duration (or one burst), wait for stragglers, stop the receiver and
count per source port. Each trial uses fresh flow ids, so a late frame of an earlier
trial is never counted in a later one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bufferlab.traffic.generate import (
    DEFAULT_DATA_PORT,
    SendResult,
    max_frame_rate_fps,
    send,
)
from bufferlab.traffic.receive import Receiver
from bufferlab.traffic.records import apply_tx_stamps, latency_ns

# Flow id reserved for learning frames; trial flows never use it.
LEARNING_FLOW = 0xFFFF
# Time between scheduling a trial's start and the start itself: covers socket set-up.
_START_LEAD_S = 0.05


@dataclass(frozen=True)
class SourcePort:
    """A tester source: the namespace it sends from and, optionally, the address to bind."""

    netns: str | None
    src_ip: str | None = None


@dataclass(frozen=True)
class PortCounts:
    """One source port's frames in one trial."""

    port: int
    flow: int
    sent_frames: int
    received_frames: int
    duplicate_frames: int
    achieved_rate_bps: float
    max_late_ns: int

    @property
    def lost_frames(self) -> int:
        """Frames sent but never received."""
        return self.sent_frames - self.received_frames


@dataclass(frozen=True)
class TrialResult:
    """One trial: what each port sent and what the sink received (frames of this trial)."""

    frame_size: int
    load: float | None
    burst_frames: int | None
    duration_s: float | None
    ports: list[PortCounts]
    frames: np.ndarray = field(repr=False)

    @property
    def sent_frames(self) -> int:
        """Frames sent by all ports."""
        return sum(p.sent_frames for p in self.ports)

    @property
    def received_frames(self) -> int:
        """Distinct frames received from all ports."""
        return sum(p.received_frames for p in self.ports)

    @property
    def lost_frames(self) -> int:
        """Frames sent and never received."""
        return self.sent_frames - self.received_frames

    @property
    def loss_ratio(self) -> float:
        """Lost / sent (0 when nothing was sent)."""
        return self.lost_frames / self.sent_frames if self.sent_frames else 0.0

    @property
    def max_late_ns(self) -> int:
        """Worst delay of any source behind its schedule, ns (how far the offered traffic
        strayed from the intended pattern)."""
        return max(p.max_late_ns for p in self.ports)

    def latencies_ns(self) -> np.ndarray:
        """Latency of every received frame, ns."""
        return latency_ns(self.frames)


@dataclass
class Tester:
    """Source ports sending to one sink address through the device under test.

    ``settle_s`` is waited before every trial so the device returns to idle (RFC 2544
    section 23 asks for at least 5 s). ``realtime_priority`` runs the senders SCHED_FIFO
    (root): on a busy machine this keeps
    them within about a millisecond of their schedule instead of ten or more, at frame
    rates whose gaps exceed the generator's spin time (see generate.send).
    """

    sources: Sequence[SourcePort]
    sink_ip: str
    sink_netns: str | None = None
    sink_port: int = DEFAULT_DATA_PORT
    line_rate_bps: float = 1e9
    dscp: int = 0
    realtime_priority: int | None = None
    settle_s: float = 0.0
    _trials: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.sources:
            raise ValueError("a tester needs at least one source port")
        if not self.line_rate_bps > 0:
            raise ValueError(f"line_rate_bps must be positive, got {self.line_rate_bps}")
        if self.settle_s < 0:
            raise ValueError(f"settle_s must be >= 0, got {self.settle_s}")

    def max_fps(self, frame_size: int) -> float:
        """Theoretical maximum frames/s of one source port at this frame size."""
        return max_frame_rate_fps(self.line_rate_bps, frame_size)

    def _flows(self) -> list[int]:
        base = self._trials * len(self.sources)
        self._trials += 1
        return [(base + i) % LEARNING_FLOW for i in range(len(self.sources))]

    def learn(self, frames: int = 3, wait_s: float = 0.1) -> None:
        """Send learning frames from every port (RFC 2544 section 23) and let them drain."""
        with Receiver(self.sink_port, netns=self.sink_netns) as rx:
            rx.start()
            for src in self.sources:
                send(self.sink_ip, self.sink_port, frame_size=64, count=frames, rate_bps=1e6,
                     flow=LEARNING_FLOW, netns=src.netns, src_ip=src.src_ip)
            time.sleep(wait_s)
            rx.stop()

    def trial(
        self,
        frame_size: int,
        load: float | None = None,
        duration_s: float | None = None,
        burst_frames: int | None = None,
        wait_s: float = 2.0,
        tx_timestamps: bool = False,
    ) -> TrialResult:
        """One trial: each port at ``load`` x line rate for ``duration_s``, or one burst of
        ``burst_frames`` back-to-back frames per port; then wait ``wait_s`` for stragglers."""
        if (load is None) == (burst_frames is None):
            raise ValueError("a trial is either a load with a duration or a burst")
        if load is not None and not (load > 0 and duration_s and duration_s > 0):
            raise ValueError(f"load {load} needs a positive duration, got {duration_s}")
        if burst_frames is not None and burst_frames < 1:
            raise ValueError(f"burst_frames must be >= 1, got {burst_frames}")
        if self.settle_s > 0:
            time.sleep(self.settle_s)
        flows = self._flows()
        results: list[SendResult | BaseException | None] = [None] * len(self.sources)
        with Receiver(self.sink_port, netns=self.sink_netns) as rx:
            rx.start()
            start = time.time_ns() + int(_START_LEAD_S * 1e9)

            def run(i: int) -> None:
                """Send source i's share of the trial; keep its result or its error."""
                src = self.sources[i]
                common = dict(frame_size=frame_size, flow=flows[i], dscp=self.dscp,
                              netns=src.netns, src_ip=src.src_ip, start_realtime_ns=start,
                              tx_timestamps=tx_timestamps,
                              realtime_priority=self.realtime_priority)
                try:
                    if burst_frames is not None:
                        results[i] = send(self.sink_ip, self.sink_port, count=burst_frames,
                                          burst_frames=burst_frames, **common)
                    else:
                        results[i] = send(self.sink_ip, self.sink_port,
                                          rate_bps=load * self.line_rate_bps,
                                          duration_s=duration_s, **common)
                except (OSError, ValueError) as err:
                    results[i] = err

            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(self.sources))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            time.sleep(wait_s)
            got = rx.stop()
        for r in results:
            if isinstance(r, BaseException):
                raise r
        frames = got.frames[np.isin(got.frames["flow"], flows)]
        if tx_timestamps:
            for r in results:
                apply_tx_stamps(frames, r.tx_stamps)
        ports = []
        for i, r in enumerate(results):
            mine = frames["seq"][frames["flow"] == flows[i]]
            unique = len(np.unique(mine))
            ports.append(PortCounts(i, flows[i], r.sent_frames, unique, len(mine) - unique,
                                    r.rate_bps, r.max_late_ns))
        return TrialResult(frame_size, load, burst_frames, duration_s, ports, frames)
