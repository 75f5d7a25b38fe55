"""What a cell of the study is (`Cell`) and what it returns (`CellResult`); the virtual
backend (`virtual_time.run_cell`) runs one, the runner a grid of them on the grid runner."""

from __future__ import annotations

from dataclasses import dataclass

from bufferlab.experiments.dctcp.config import DctcpConfig

#: Cell kinds: long-lived flows alone, or N → 1 queries beside them.
LONG, INCAST = "long", "incast"


@dataclass(frozen=True)
class Cell:
    """One simulation: ``kind`` (LONG or INCAST), the algorithm every host runs
    (`config.ALGORITHMS`), the incast's servers (0 for LONG), and the study's config."""

    kind: str
    algorithm: str
    senders: int
    config: DctcpConfig

    @property
    def name(self) -> str:
        """`dctcp long`, `cubic incast 32`: the cell in progress lines and failures."""
        return f"{self.algorithm} {self.kind}" + (f" {self.senders}" if self.kind == INCAST
                                                  else "")


@dataclass(frozen=True)
class QueueStats:
    """The bottleneck queue's samples in the measured window, bytes."""

    mean: float
    p50: float
    p95: float
    p99: float
    max: float
    samples: int


@dataclass(frozen=True)
class Query:
    """One query: when it was sent (ns), its completion time (ns: the last response's last
    byte at the client; None if a response never completed) and its responses' timeouts."""

    start_ns: int
    qct_ns: int | None
    timeouts: int
    retransmits: int


@dataclass(frozen=True)
class CellResult:
    """A cell's figures over the measured window: the bottleneck's throughput (bit/s of
    frames reaching the receiver, retransmissions included), the long flows' goodput
    (bit/s of bytes delivered in order: loss recovery makes it lumpy), the bottleneck
    queue; over the whole run: frames the bottleneck dropped and marked, the largest queue
    it held (bytes), the queries (incast cells), the long flows' timeouts and the wall time
    the simulation took (s)."""

    cell: Cell
    bottleneck_bps: float
    long_goodput_bps: float
    queue: QueueStats
    drops_frames: int
    marked_frames: int
    max_queue_bytes: int
    queries: tuple[Query, ...]
    long_timeouts: int
    wall_s: float
    #: The queue over the window for plots: sample times (ns) and bytes, at most
    #: `TRACE_POINTS` of them.
    queue_trace: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())


#: Points of a cell's queue trace (every k-th sample).
TRACE_POINTS = 2000
