"""A rate-settable host sender: rate limiter with back-pressure, RLT tagging, PAUSE holds.

The BCN agent sets its rate and tag, the PAUSE agent holds it; both run in other
threads, so the shared state sits behind one lock. Times are CLOCK_REALTIME ns,
the clock of kernel RX timestamps on which the agents act.
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
    """Sends frames on ``dev``: unlimited until a rate is set, then through the RLQ.

    ``source_waits`` counts how often the source was held (RLQ full or PAUSE):
    frames are delayed, never dropped.
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
        self._rlq_capacity_bytes = rlq_capacity_bytes
        self._rlq: RateLimiterQueue[bytes] | None = None
        self._rlt_cpid: int | None = None
        self._resume_ns = 0
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
            return self._rlq.rate_bps if self._rlq is not None else None

    @property
    def rlt_cpid(self) -> int | None:
        """The CPID frames are tagged with, None when untagged."""
        return self._rlt_cpid

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Install/retune the limiter at ``rate_bps``; None removes it (queued frames go now)."""
        now = self._clock_ns()
        with self._lock:
            if rate_bps is None:
                rlq, self._rlq = self._rlq, None
                pending = rlq.release(2**63) if rlq is not None else []
            elif self._rlq is None:
                self._rlq = RateLimiterQueue(self._rlq_capacity_bytes, rate_bps)
                self._rlq.hold_until(self._resume_ns)
                pending = []
            else:
                self._rlq.set_rate(now, rate_bps)
                pending = []
        for frame in pending:
            self._send_now(frame)

    def set_rlt(self, cpid: int | None) -> None:
        """Tag frames sent from now on with RLT(cpid); None stops tagging."""
        self._rlt_cpid = cpid

    def hold_until(self, resume_ns: int) -> None:
        """Send nothing before ``resume_ns`` (PAUSE); a later call replaces an earlier one."""
        with self._lock:
            self._resume_ns = resume_ns
            if self._rlq is not None:
                self._rlq.hold_until(resume_ns)

    def paused_until_ns(self) -> int:
        """The time before which the sender is held."""
        return self._resume_ns

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
        """Take one frame: straight out when unlimited, else into the RLQ if it fits."""
        self._pump()
        now = self._clock_ns()
        with self._lock:
            if self._rlq is not None:
                return self._rlq.offer(now, frame, len(frame))
            if now < self._resume_ns:
                return False
        self._send_now(frame)
        return True

    def _pump(self) -> bool:
        """Send the RLQ frames that are due; True while frames remain queued."""
        now = self._clock_ns()
        with self._lock:
            if self._rlq is None:
                return False
            due = self._rlq.release(now)
            left = len(self._rlq) > 0
        for frame in due:
            self._send_now(frame)
        return left

    def _wait(self) -> None:
        now = self._clock_ns()
        with self._lock:
            wake = self._resume_ns if now < self._resume_ns else None
            if self._rlq is not None and wake is None:
                wake = self._rlq.next_release_ns()
        left_s = (wake - now) / 1e9 if wake is not None else _MAX_WAIT_S
        self._sleep_s(min(max(left_s, 0.0), _MAX_WAIT_S))

    def _send_now(self, frame: bytes) -> None:
        cpid = self._rlt_cpid
        self._transmit(layers.insert_rlt(frame, cpid) if cpid is not None else frame)
        self.sent_frames += 1
