"""The rate-limiter queue (RLQ): a bounded host queue drained at the regulated rate.

A full RLQ refuses a frame instead of dropping it: the source must hold the frame
and offer it again once a frame has left (back-pressure, congestion.md §1.4 and
the seeds' "traffic source stops after memory is full (no drops)").
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

Item = TypeVar("Item")

NS_PER_S = 1_000_000_000


def serialisation_ns(frame_bytes: int, rate_bps: int) -> int:
    """Time to send ``frame_bytes`` at ``rate_bps``, rounded up to whole ns."""
    return -(-frame_bytes * 8 * NS_PER_S // rate_bps)


class RateLimiterQueue(Generic[Item]):
    """FIFO of frames up to ``capacity_bytes``, released one after another at ``rate_bps``."""

    def __init__(self, capacity_bytes: int, rate_bps: int) -> None:
        """An empty queue; ``rate_bps`` must be positive."""
        if capacity_bytes <= 0 or rate_bps <= 0:
            raise ValueError(f"RLQ needs positive capacity_bytes and rate_bps: "
                             f"{capacity_bytes}, {rate_bps}")
        self.capacity_bytes = capacity_bytes
        self.rate_bps = rate_bps
        self.occupancy_bytes = 0
        self.refused_frames = 0
        self._frames: deque[tuple[Item, int]] = deque()
        self._head_done_ns = 0
        self._resume_ns = 0

    def __len__(self) -> int:
        return len(self._frames)

    def offer(self, now_ns: int, item: Item, frame_bytes: int) -> bool:
        """Enqueue a frame; False (and counted) when it does not fit: the source must wait."""
        if frame_bytes > self.capacity_bytes:
            raise ValueError(f"a {frame_bytes}-byte frame never fits a {self.capacity_bytes}-byte RLQ")
        if self.occupancy_bytes + frame_bytes > self.capacity_bytes:
            self.refused_frames += 1
            return False
        if not self._frames:
            self._head_done_ns = now_ns + serialisation_ns(frame_bytes, self.rate_bps)
        self._frames.append((item, frame_bytes))
        self.occupancy_bytes += frame_bytes
        return True

    def release(self, now_ns: int) -> list[Item]:
        """Frames whose turn at the regulated rate has come by ``now_ns``, in order."""
        out = []
        while self._frames:
            leave_ns = max(self._head_done_ns, self._resume_ns)
            if leave_ns > now_ns:
                break
            item, size = self._frames.popleft()
            self.occupancy_bytes -= size
            out.append(item)
            if self._frames:
                # The next frame follows back to back (also after a pause: no burst).
                self._head_done_ns = leave_ns + serialisation_ns(self._frames[0][1],
                                                                 self.rate_bps)
        return out

    def next_release_ns(self) -> int | None:
        """When the head frame may leave (None when empty)."""
        return max(self._head_done_ns, self._resume_ns) if self._frames else None

    def set_rate(self, now_ns: int, rate_bps: int) -> None:
        """Change the drain rate; the head frame's remaining bits go at the new rate."""
        if rate_bps <= 0:
            raise ValueError(f"rate_bps must be positive, got {rate_bps}")
        if self._frames and self._head_done_ns > now_ns:
            remaining_bits_x1e9 = (self._head_done_ns - now_ns) * self.rate_bps
            self._head_done_ns = now_ns + -(-remaining_bits_x1e9 // rate_bps)
        self.rate_bps = rate_bps

    def hold_until(self, resume_ns: int) -> None:
        """Nothing leaves before ``resume_ns`` (PAUSE); a later call replaces it (XON shortens)."""
        self._resume_ns = resume_ns
