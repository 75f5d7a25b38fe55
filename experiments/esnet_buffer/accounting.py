"""Where frames were lost, over both switches: the proof that the emulator was not the
bottleneck.

qbss's accounting reads one switch; this study has two and one place where loss is
configured: the bottleneck queue (s41 port 5, queue 0). Its loss is the P4 admission's
(the `queue_drops` counter) or, for the hold-queue variant, the traffic manager's queue
depth in packets (that queue's `dropped_pkts` in `show_port_counters`). Every other loss, on
either switch's live ports, in either engine, or on any veth, makes the trial invalid.
"""

from __future__ import annotations

from dataclasses import dataclass

from bufferlab.experiments.common.accounting import Accounting as OneSwitch
from bufferlab.experiments.common.accounting import Snapshot as OneSwitchSnapshot
from bufferlab.experiments.common.accounting import SwitchCounters
from bufferlab.experiments.common.accounting import account as account_one


@dataclass(frozen=True)
class Snapshot:
    """Both switches' counters by name, every veth's drops by interface, and the
    bottleneck's P4 admission drops (frames)."""

    switches: dict[str, SwitchCounters]
    links: dict[str, dict[str, int]]
    admission_drops: int


@dataclass(frozen=True)
class Accounting:
    """What a trial lost: at the bottleneck's admission (configured), and anywhere else."""

    admission_drops: int
    losses: dict[str, int]

    @property
    def valid(self) -> bool:
        """Whether nothing was lost outside the configured admission."""
        return not self.losses

    def describe(self) -> str:
        """One line: valid with its admission drops, or every loss outside it."""
        if self.valid:
            return f"valid: {self.admission_drops} frames dropped by admission, nothing else"
        return "INVALID: frames lost outside admission: " + ", ".join(
            f"{where} {n}" for where, n in self.losses.items())


def _queue_drops(counters: SwitchCounters, port: int, queue: int) -> int:
    return counters.queues.get((port, queue), {}).get("dropped_pkts", 0)


def account(before: Snapshot, after: Snapshot, bottleneck_switch: str, port: int, queue: int,
            tm_admission: bool = False) -> Accounting:
    """The losses between two snapshots; ``tm_admission``: the bottleneck queue's
    traffic-manager drops are the configured ones (hold queue), else its P4 admission's."""
    losses: dict[str, int] = {}
    admission = 0
    for name, counters in sorted(after.switches.items()):
        at_bottleneck = name == bottleneck_switch
        one: OneSwitch = account_one(
            OneSwitchSnapshot(before.switches[name], {},
                              before.admission_drops if at_bottleneck else 0),
            OneSwitchSnapshot(counters, {}, after.admission_drops if at_bottleneck else 0))
        found = dict(one.losses)
        if at_bottleneck:
            admission = one.admission_drops
            if tm_admission:
                held = (_queue_drops(counters, port, queue)
                        - _queue_drops(before.switches[name], port, queue))
                admission += held
                left = found.pop("switch dropped_by_tm", 0) - held
                if left:
                    found["switch dropped_by_tm"] = left
        losses.update({f"{name} {where}": n for where, n in found.items()})
    links = account_one(OneSwitchSnapshot(SwitchCounters({}, {}, {}), before.links, 0),
                        OneSwitchSnapshot(SwitchCounters({}, {}, {}), after.links, 0))
    losses.update(links.losses)
    return Accounting(admission, losses)
