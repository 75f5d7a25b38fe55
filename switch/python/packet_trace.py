"""The per-packet trace as BMv2 writes it, for `--log-level debug|trace`.

The engine records each packet's events (parser states and headers, table keys, hits and
misses, actions, primitives with their source lines, conditions, the egress port, deparsed
headers, transmissions and drops) with the engine time and the packet's id and copy; this
module turns each into the line simple_switch would write::

    [11:15:02.862] [bmv2] [D] [thread 4066] [0.0] [cxt 0] Processing packet received on port 1

so that `logs/s1.log`, the tutorials' first debugging step, reads as it does on BMv2. The
thread field is the switch process's id (bufferlab runs the pipeline on one packet thread).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

#: Log levels at which the engine records a per-packet trace (BMv2's, lowest first).
TRACE_LEVELS = ("trace", "debug")

#: One trace line from the engine: (t_ns, level letter, packet id, copy, text).
TraceRow = tuple[int, str, int, int, str]


def wall_stamp(wall_s: float) -> str:
    """`HH:MM:SS.mmm` of a wall-clock time, local time, as BMv2's log prefix."""
    whole = int(wall_s)
    return time.strftime("%H:%M:%S", time.localtime(whole)) + f".{int((wall_s - whole) * 1000):03d}"


def elapsed_stamp(t_ns: int) -> str:
    """`HH:MM:SS.mmm` of a virtual time (time since the engine started)."""
    ms = t_ns // 1_000_000
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def format_row(row: TraceRow, origin_wall_s: float | None, thread: int | None = None) -> str:
    """One engine trace row as a BMv2 log line; engine time 0 is `origin_wall_s` on the wall
    clock, or None for virtual time shown as time since the start."""
    t_ns, letter, packet, copy, text = row
    stamp = (elapsed_stamp(t_ns) if origin_wall_s is None
             else wall_stamp(origin_wall_s + t_ns / 1e9))
    thread = os.getpid() if thread is None else thread
    return f"[{stamp}] [bmv2] [{letter}] [thread {thread}] [{packet}.{copy}] [cxt 0] {text}"


def format_rows(rows: Iterable[TraceRow], origin_wall_s: float | None,
                lost: int = 0) -> list[tuple[str, str]]:
    """(level letter, BMv2 log line) for a batch of rows, after a warning when the engine
    had to drop some because they were not taken in time."""
    thread = os.getpid()
    lines = []
    if lost:
        lines.append(("W", f"[{wall_stamp(time.time())}] [bmv2] [W] [thread {thread}] "
                           f"{lost} trace lines lost: the log could not keep up with the packets"))
    lines += [(row[1], format_row(row, origin_wall_s, thread)) for row in rows]
    return lines
