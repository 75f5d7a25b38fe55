"""The interface between the study's procedure and a network that runs it: what a trial
returns, and the `Lab` protocol the live network (`live.LiveLab`) implements and a test
double can stand in for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bufferlab.experiments.common.accounting import Accounting
from bufferlab.experiments.common.traffic_tools import IperfResult, PingResult
from bufferlab.experiments.qbss.capture import Frames
from bufferlab.experiments.qbss.config import PhaseRun
from bufferlab.traffic.probe import ProbeRecord


@dataclass(frozen=True)
class PhaseTrial:
    """One run of the phase schedule: when it started (CLOCK_REALTIME, ns), how late the
    latest copy started (s), the receiver's frames, iperf3's reports by class, where frames
    were lost, and why earlier attempts were run again."""

    run: PhaseRun
    start_ns: int
    launch_lag_s: float
    frames: Frames
    iperf: dict[str, IperfResult]
    accounting: Accounting
    reruns: tuple[str, ...] = ()


@dataclass(frozen=True)
class PingTrial:
    """Pings and probes of every class (by class name) while a bulk flow of class ``bulk``
    (None: none) ran, with the bulk flow's iperf3 report, where frames were lost, and why
    earlier attempts were run again."""

    bulk: str | None
    pings: dict[str, PingResult]
    probes: dict[str, list[ProbeRecord]]
    probes_sent: int
    iperf: IperfResult | None
    accounting: Accounting
    reruns: tuple[str, ...] = ()


class Lab(Protocol):
    """A network that runs the study's trials."""

    def describe(self) -> list[tuple[str, str]]:
        """What runs, with units."""
        ...

    def phase_trial(self, run: PhaseRun) -> PhaseTrial:
        """The five phases of ``run``."""
        ...

    def ping_trial(self, bulk: str | None) -> PingTrial:
        """Pings and probes of every class beside a bulk flow of class ``bulk`` (or none)."""
        ...
