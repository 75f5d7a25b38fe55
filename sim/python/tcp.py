"""TCP flows in a simulated network: the host models of `bufferlab_hosts::tcp` (a
sender and a receiver exchanging real TCP/IPv4 frames), described once per flow.

A flow names its sender and receiver hosts and a profile (``linux-2010``,
``linux-today``, ``newreno``, ``dctcp``); any field left None keeps the profile's value.
See ``traffic/hosts/README.md`` for what each profile sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Profiles the host models know.
PROFILES = ("linux-2010", "linux-today", "newreno", "dctcp")
#: Congestion-control algorithms a flow may name instead of its profile's.
ALGORITHMS = ("newreno", "cubic", "dctcp")


@dataclass(frozen=True)
class TcpFlow:
    """One TCP flow: ``bytes`` to send (None: a bulk flow that never ends) from
    ``sender`` to ``receiver``, opening its connection at ``start_ns``."""

    name: str
    sender: str
    receiver: str
    profile: str = "linux-today"
    bytes: int | None = None
    start_ns: int = 0
    dscp: int = 0
    algorithm: str | None = None
    mss_bytes: int | None = None
    initial_window_segments: int | None = None
    sack: bool | None = None
    rack_tlp: bool | None = None
    ecn: bool | None = None
    pacing_bps: int | None = None
    receive_window_bytes: int | None = None
    delayed_ack: bool | None = None
    rto_min_ns: int | None = None
    #: CUBIC's HyStart (on in the profiles that run CUBIC, but linux-2010's).
    hystart: bool | None = None
    #: Proportional rate reduction in fast recovery (on in every profile but linux-2010).
    prr: bool | None = None
    #: Linux's GSO buffers and TSO deferral: an unpaced sender sends about a millisecond
    #: of its rate at once instead of segment by segment (on in linux-today only).
    gso: bool | None = None

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"tcp flow {self.name}: profile {self.profile!r} is not one of "
                             f"{', '.join(PROFILES)}")
        if self.algorithm is not None and self.algorithm not in ALGORITHMS:
            raise ValueError(f"tcp flow {self.name}: algorithm {self.algorithm!r} is not one "
                             f"of {', '.join(ALGORITHMS)}")
        if self.bytes is not None and self.bytes < 0:
            raise ValueError(f"tcp flow {self.name}: bytes must be at least 0")
        if self.start_ns < 0:
            raise ValueError(f"tcp flow {self.name}: start_ns must be at least 0")

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of the native ``add_tcp_flow`` (after the simulator): the
        fields that are set (None keeps the profile's value there too)."""
        return {k: v for k in self.__dataclass_fields__ if (v := getattr(self, k)) is not None}
