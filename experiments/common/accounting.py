"""Where frames were lost: the proof that the emulator was not the bottleneck.

A live trial is valid only if every frame it lost was lost where the study configured a
loss, the P4 program's admission (a queue's cap at the bottleneck). Counters are read
before and after a trial and compared:

* the switch's live ports (`show_port_counters`): frames the kernel dropped at the switch's
  receive buffer, oversize frames, frames the switch could not send;
* the switch's engine: frames its traffic manager dropped, and frames the P4 program
  dropped other than by admission (its `queue_drops` counter holds the admission drops);
* every veth of the network, both ends (`ip -s link`): frames dropped on the way in or out;
* the receiver's capture (tcpdump): frames it missed, which would bias the goodput.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

#: Live port counters that count a frame lost on its way into or out of the switch.
PORT_LOSSES = ("kernel_drops", "rx_oversize", "tx_dropped", "tx_oversize", "tx_runt")


@dataclass(frozen=True)
class SwitchCounters:
    """`show_port_counters` read back: live port counters by port, queue counters by (port,
    queue), the switch's totals."""

    ports: dict[int, dict[str, int]]
    queues: dict[tuple[int, int], dict[str, int]]
    switch: dict[str, int]


def _pairs(text: str) -> dict[str, int]:
    out = {}
    for pair in text.split():
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"not name=value: {pair!r}")
        out[name] = int(value)
    return out


def parse_switch_counters(text: str) -> SwitchCounters:
    """The runtime CLI's `show_port_counters` answer as `SwitchCounters`."""
    ports: dict[int, dict[str, int]] = {}
    queues: dict[tuple[int, int], dict[str, int]] = {}
    switch: dict[str, int] = {}
    for line in text.splitlines():
        head, sep, rest = line.partition(": ")
        words = head.split()
        if not sep:
            raise ValueError(f"not a show_port_counters line: {line!r}")
        if words == ["switch"]:
            switch = _pairs(rest)
        elif len(words) == 4 and words[0] == "port" and words[2] == "queue":
            queues[int(words[1]), int(words[3])] = _pairs(rest)
        elif len(words) == 3 and words[0] == "port":
            ports[int(words[1])] = _pairs(rest)
        else:
            raise ValueError(f"not a show_port_counters line: {line!r}")
    if not switch:
        raise ValueError("show_port_counters gave no switch line")
    return SwitchCounters(ports, queues, switch)


def link_drops(ip_json: str) -> dict[str, int]:
    """`ip -j -s link show DEV`'s dropped counters: {"rx_dropped": n, "tx_dropped": n}."""
    (link,) = json.loads(ip_json)
    stats = link["stats64"]
    return {"rx_dropped": int(stats["rx"]["dropped"]), "tx_dropped": int(stats["tx"]["dropped"])}


@dataclass(frozen=True)
class Snapshot:
    """Every counter of the network at one moment: the switch's, each veth's dropped frames
    (by interface), and the P4 program's admission drops (frames)."""

    switch: SwitchCounters
    links: dict[str, dict[str, int]]
    admission_drops: int


@dataclass(frozen=True)
class Accounting:
    """What a trial lost, where: admission drops (configured), and every other loss."""

    admission_drops: int
    capture_drops: int
    losses: dict[str, int] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        """Whether nothing was lost outside the configured admission."""
        return not self.losses and self.capture_drops == 0

    def describe(self) -> str:
        """One line: valid with its admission drops, or every loss outside it."""
        if self.valid:
            return f"valid: {self.admission_drops} frames dropped by admission, nothing else"
        where = [f"{name} {n}" for name, n in self.losses.items()]
        if self.capture_drops:
            where.append(f"capture (tcpdump) {self.capture_drops}")
        return "INVALID: frames lost outside admission: " + ", ".join(where)


def _delta(after: Mapping[str, int], before: Mapping[str, int], name: str) -> int:
    return after.get(name, 0) - before.get(name, 0)


def account(before: Snapshot, after: Snapshot, capture_drops: int = 0) -> Accounting:
    """The losses between two snapshots, by place and counter."""
    losses: dict[str, int] = {}
    for port, counters in sorted(after.switch.ports.items()):
        for name in PORT_LOSSES:
            n = _delta(counters, before.switch.ports.get(port, {}), name)
            if n:
                losses[f"switch port {port} {name}"] = n
    admission = after.admission_drops - before.admission_drops
    program = _delta(after.switch.switch, before.switch.switch, "dropped_by_program")
    if program != admission:
        losses["P4 program drops other than admission"] = program - admission
    for name in ("dropped_by_tm", "dropped_priority_out_of_range"):
        n = _delta(after.switch.switch, before.switch.switch, name)
        if n:
            losses[f"switch {name}"] = n
    for link, counters in sorted(after.links.items()):
        for name in ("rx_dropped", "tx_dropped"):
            n = _delta(counters, before.links.get(link, {}), name)
            if n:
                losses[f"{link} {name}"] = n
    return Accounting(admission, capture_drops, losses)
