"""A rate-settable host sender: rate limiter with back-pressure, RLT tagging, PAUSE holds.

Every frame goes through one rate-limiter queue (bufferlab-hosts' RLQ, the simulator's):
unpaced until the BCN agent sets a rate, held by the PAUSE agent and by a BCN(0,0)
back-off. Both agents run in other threads, so the queue sits behind one lock. Times are
CLOCK_REALTIME ns, the clock of kernel RX timestamps on which the agents act.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from bufferlab.traffic import layers
from bufferlab.traffic.agents.ratelimit import RateLimiterQueue
from bufferlab.traffic.probe import open_packet_socket

DEFAULT_RLQ_BYTES = 150_000  # congestion.md §9: 150 KB per source
_MAX_WAIT_S = 0.001  # re-check rate/pause changes from the agents at least this often


class RegulatedSender:
    """Sends frames on ``dev`` through its RLQ: unpaced until a rate is set, then paced.

    ``source_waits`` counts how often the source was held (RLQ full, e.g. during a
    PAUSE or at a low rate): frames are delayed, never dropped.
    """

    def __init__(
        self,
        dev: str,
        netns: str | None = None,
        rlq_capacity_bytes: int = DEFAULT_RLQ_BYTES,
        clock_ns: Callable[[], int] = time.time_ns,
        sleep_s: Callable[[float], None] = time.sleep,
        transmit: Callable[[bytes], object] | None = None,
    ) -> None:
        """Open the socket (or use ``transmit`` instead, e.g. in a unit test)."""
        self._sock = None if transmit else open_packet_socket(dev, netns, receive=False)
        self._transmit = transmit or self._sock.send
        self._clock_ns = clock_ns
        self._sleep_s = sleep_s
        self._lock = threading.Lock()
        self._rlq: RateLimiterQueue[bytes] = RateLimiterQueue(rlq_capacity_bytes)
        self._rlt_cpid: int | None = None
        # PAUSE and a BCN(0,0) back-off hold the queue apart: an XON ends the one only.
        self._pause_until_ns = 0
        self._backoff_until_ns = 0
        self._sent_observers: list[Callable[[int, int], None]] = []
        self.sent_frames = 0
        self.source_waits = 0

    def close(self) -> None:
        """Close the socket."""
        if self._sock is not None:
            self._sock.close()

    @property
    def rate_bps(self) -> int | None:
        """The regulated rate, None when no limiter is installed."""
        with self._lock:
            return self._rlq.rate_bps

    @property
    def rlt_cpid(self) -> int | None:
        """The CPID frames are tagged with, None when untagged."""
        return self._rlt_cpid

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Pace at ``rate_bps``; None removes the limiter (queued frames may go now)."""
        now = self._clock_ns()
        with self._lock:
            self._rlq.set_rate(now, rate_bps)

    def set_rlt(self, cpid: int | None) -> None:
        """Tag frames sent from now on with RLT(cpid); None stops tagging."""
        self._rlt_cpid = cpid

    def hold_until(self, resume_ns: int) -> None:
        """Send nothing before ``resume_ns`` (PAUSE); a later call replaces an earlier one."""
        with self._lock:
            self._pause_until_ns = resume_ns
            self._rlq.hold_until(max(resume_ns, self._backoff_until_ns))

    def back_off_until(self, resume_ns: int) -> None:
        """Send nothing before ``resume_ns`` (a BCN(0,0) back-off; a PAUSE's XON does not end
        it); a later call replaces an earlier one."""
        with self._lock:
            self._backoff_until_ns = resume_ns
            self._rlq.hold_until(max(resume_ns, self._pause_until_ns))

    def add_sent_observer(self, observer: Callable[[int, int], None]) -> None:
        """Call ``observer(now_ns, frame_bytes)`` for each frame sent from now on (bytes as
        the RLQ paces them: the frame before the RLT, without FCS)."""
        self._sent_observers.append(observer)

    def paused_until_ns(self) -> int:
        """The time before which the sender is held."""
        with self._lock:
            return self._rlq.held_until_ns

    def send(self, frames: Iterable[bytes]) -> int:
        """Send all ``frames`` in order, blocking on PAUSE and on a full RLQ; returns the count."""
        before = self.sent_frames
        for frame in frames:
            while not self._accept(frame):
                self.source_waits += 1
                self._wait()
        while self._pump():
            self._wait()
        return self.sent_frames - before

    def _accept(self, frame: bytes) -> bool:
        """Queue one frame if it fits, sending whatever is due before and after."""
        self._pump()
        now = self._clock_ns()
        with self._lock:
            accepted = self._rlq.offer(frame, len(frame), now)
        if accepted:
            self._pump()
        return accepted

    def _pump(self) -> bool:
        """Send the RLQ frames that are due; True while frames remain queued.

        One frame per look at the queue, as a MAC checks for PAUSE between frames: a hold
        applied while a late thread catches up on several due frames stops the rest.
        """
        while True:
            now = self._clock_ns()
            with self._lock:
                due = self._rlq.release_one(now)
                left = len(self._rlq) > 0
            if due is None:
                return left
            self._send_now(due)

    def _wait(self) -> None:
        now = self._clock_ns()
        with self._lock:
            wake = self._rlq.next_release_ns()
        left_s = (wake - now) / 1e9 if wake is not None else _MAX_WAIT_S
        self._sleep_s(min(max(left_s, 0.0), _MAX_WAIT_S))

    def _send_now(self, frame: bytes) -> None:
        cpid = self._rlt_cpid
        self._transmit(layers.insert_rlt(frame, cpid) if cpid is not None else frame)
        self.sent_frames += 1
        if self._sent_observers:
            now = self._clock_ns()
            for observer in self._sent_observers:
                observer(now, len(frame))
