"""What a run of a scenario measured, in either world: per TCP flow its goodput over the
counted window, the switches' admission drops, and whether the run is valid."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FlowResult:
    """One TCP flow: payload bytes the receiver got in order over the counted window and
    the window's length (s), and the sender's retransmitted segments in it."""

    name: str
    received_bytes: int
    seconds: float
    retransmits: int

    @property
    def goodput_bps(self) -> float:
        """Goodput, bit/s."""
        return 8 * self.received_bytes / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class RunResult:
    """One run of a scenario: its flows, the frames the P4 admission dropped (all
    switches, all ports, whole run), every loss elsewhere by place, notes (the live
    switch's CPU share, ...) and other problems. A run with losses elsewhere or a
    problem is invalid."""

    backend: str
    flows: tuple[FlowResult, ...]
    admission_drops: int
    losses: dict[str, int] = field(default_factory=dict)
    notes: dict[str, float] = field(default_factory=dict)
    #: Why the run cannot be trusted besides lost frames (a saturated switch, ...).
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        """Whether nothing was lost outside the configured admission and nothing else
        went wrong."""
        return not self.losses and not self.problems

    @property
    def goodput_bps(self) -> float:
        """All flows' goodput, bit/s."""
        return sum(f.goodput_bps for f in self.flows)

    @property
    def retransmits(self) -> int:
        """All flows' retransmitted segments in the counted window."""
        return sum(f.retransmits for f in self.flows)

    def describe(self) -> str:
        """One line: valid with its drops, or INVALID and where frames were lost."""
        if self.valid:
            return f"valid: {self.admission_drops} frames dropped by admission, nothing else"
        why = [f"lost outside admission: {where} {n}" for where, n in self.losses.items()]
        return "INVALID: " + "; ".join([*why, *self.problems])
