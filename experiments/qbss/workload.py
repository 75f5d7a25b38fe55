"""The seed's workload: the phase schedule and each class's iperf3 port (the tools' command
lines and parsers are `common/traffic_tools.py`).

A run has five phases of equal length: QBSS alone; + BE; + priority; priority stopped; BE
stopped (the seed's bbcp copies, started and stopped in reverse order ~30 s apart). Each
class's copy is one iperf3 client marking its packets with the class's TOS (`-S`), sending
to its own iperf3 server on the receiver, so the receiver's capture tells the classes apart
by port as well as by the DSCP the switch classifies on.
"""

from __future__ import annotations

from dataclasses import dataclass

from bufferlab.experiments.qbss.config import BE, PRIORITY, QBSS, TrafficClass

PHASES = 5
#: Phase k's classes, in queue order.
PHASE_CLASSES: tuple[tuple[TrafficClass, ...], ...] = (
    (QBSS,), (QBSS, BE), (QBSS, BE, PRIORITY), (QBSS, BE), (QBSS,))
#: What happens at the start of phase k (k = 1..4).
CHANGES = ("BE starts", "priority starts", "priority stops", "BE stops")
#: Class c's iperf3 server listens on this port + c's queue.
IPERF_BASE_PORT = 5201


@dataclass(frozen=True)
class Flow:
    """One class's copy in a run: start and length in s from the run's start."""

    cls: TrafficClass
    start_s: float
    duration_s: float


def phase_schedule(phase_s: float) -> list[Flow]:
    """The copies of one run, in the order they start: QBSS for all five phases, BE from
    the second to the fourth, priority in the third."""
    return [Flow(QBSS, 0.0, PHASES * phase_s), Flow(BE, phase_s, 3 * phase_s),
            Flow(PRIORITY, 2 * phase_s, phase_s)]


def iperf_port(cls: TrafficClass) -> int:
    """The receiver's iperf3 server port of class ``cls``."""
    return IPERF_BASE_PORT + cls.queue
