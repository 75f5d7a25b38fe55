"""SCHED_FIFO for a live experiment's processes: on a busy shared machine ordinary threads
wake up tens of ms late, which shows as queueing (or idle links) that the network did not
cause. The processes this is used for block or sleep between events, so they never spin
at this priority."""

from __future__ import annotations

import subprocess

#: The priority (1..99) live experiments give their switch, senders and tools.
REALTIME_PRIORITY = 10


def realtime_argv(argv: list[str], priority: int = REALTIME_PRIORITY) -> list[str]:
    """``argv`` started SCHED_FIFO at ``priority`` (through chrt; needs root)."""
    return ["chrt", "--fifo", str(priority), *argv]


def make_realtime(pid: int, priority: int = REALTIME_PRIORITY) -> None:
    """Every thread of the running process ``pid`` SCHED_FIFO at ``priority`` (root)."""
    subprocess.run(["chrt", "--all-tasks", "--fifo", "--pid", str(priority), str(pid)],
                   check=True, capture_output=True)
