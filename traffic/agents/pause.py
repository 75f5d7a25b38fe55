"""PAUSE (802.3x) and PFC (802.1Qbb) honouring at a host.

A PAUSE with quanta q received at link rate R stops the host's sender for
q·512/R seconds from the frame's arrival; quanta 0 (XON) resumes at once; a new
PAUSE replaces the running timer (congestion.md §2.1). PFC keeps one such timer
per priority and only the classes whose enable bit is set are touched (§2.2).
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import Protocol

from bufferlab.traffic import layers
from bufferlab.traffic.agents.listener import FrameListener

NS_PER_S = 1_000_000_000
_PFC_TIMES = struct.Struct("!H8H")


def pause_duration_ns(quanta: int, link_rate_bps: int) -> int:
    """q·512/R in ns, rounded up (a pause never ends early)."""
    return -(-quanta * layers.QUANTUM_BITS * NS_PER_S // link_rate_bps)


@dataclass(frozen=True)
class PauseEvent:
    """A received MAC control frame: PAUSE (one time) or PFC (enable vector + 8 times)."""

    opcode: int
    class_enable: int
    quanta: tuple[int, ...]

    @property
    def is_pfc(self) -> bool:
        """True for a PFC frame, False for an 802.3x PAUSE."""
        return self.opcode == layers.OPCODE_PFC


def parse_mac_control(frame: bytes) -> PauseEvent | None:
    """Decode an untagged PAUSE or PFC frame; None for anything else (other opcodes too)."""
    if len(frame) < 18 or int.from_bytes(frame[12:14], "big") != layers.ETHERTYPE_MAC_CONTROL:
        return None
    opcode = int.from_bytes(frame[14:16], "big")
    if opcode == layers.OPCODE_PAUSE:
        return PauseEvent(opcode, 0, (int.from_bytes(frame[16:18], "big"),))
    if opcode == layers.OPCODE_PFC and len(frame) >= 16 + _PFC_TIMES.size:
        enable, *times = _PFC_TIMES.unpack_from(frame, 16)
        return PauseEvent(opcode, enable & 0xFF, tuple(times))
    return None


class PauseTimer:
    """One pause timer: paused while ``now_ns < paused_until_ns``."""

    def __init__(self, link_rate_bps: int) -> None:
        """A running (not paused) timer for a link of ``link_rate_bps``."""
        if link_rate_bps <= 0:
            raise ValueError(f"link_rate_bps must be positive, got {link_rate_bps}")
        self.link_rate_bps = link_rate_bps
        self.paused_until_ns = 0
        self.pauses = 0
        self.resumes = 0

    def on_quanta(self, now_ns: int, quanta: int) -> int:
        """Apply a pause time received at ``now_ns``; returns when sending may resume."""
        if quanta == 0:
            self.resumes += 1
            self.paused_until_ns = now_ns
        else:
            self.pauses += 1
            self.paused_until_ns = now_ns + pause_duration_ns(quanta, self.link_rate_bps)
        return self.paused_until_ns

    def is_paused(self, now_ns: int) -> bool:
        """Whether sending is stopped at ``now_ns``."""
        return now_ns < self.paused_until_ns


class PfcTimers:
    """Eight independent pause timers, one per priority."""

    def __init__(self, link_rate_bps: int) -> None:
        """All priorities running."""
        self.timers = [PauseTimer(link_rate_bps) for _ in range(layers.PFC_CLASSES)]

    def on_pfc(
        self, now_ns: int, class_enable: int, quanta: tuple[int, ...]
    ) -> dict[int, int]:
        """Apply the enabled classes' times; returns {priority: resume time ns} for them."""
        return {
            prio: self.timers[prio].on_quanta(now_ns, quanta[prio])
            for prio in range(layers.PFC_CLASSES)
            if class_enable & (1 << prio)
        }

    def paused_classes(self, now_ns: int) -> frozenset[int]:
        """The priorities stopped at ``now_ns``."""
        return frozenset(p for p, t in enumerate(self.timers) if t.is_paused(now_ns))


class PauseTarget(Protocol):
    """Something that can be stopped: a sender of one priority."""

    def hold_until(self, resume_ns: int) -> None:
        """Send nothing before ``resume_ns`` (a later call replaces an earlier one)."""


class PauseAgent:
    """Sniffs a host interface for PAUSE/PFC and holds the senders of the paused priorities.

    ``targets`` maps priority → sender; an 802.3x PAUSE stops all of them.
    """

    def __init__(
        self,
        dev: str,
        link_rate_bps: int,
        targets: dict[int, PauseTarget],
        netns: str | None = None,
    ) -> None:
        """Prepare the agent; start() (or a ``with`` block) opens the interface and listens."""
        self.pause = PauseTimer(link_rate_bps)
        self.pfc = PfcTimers(link_rate_bps)
        self.targets = targets
        # (arrival ns, ns when the targets had been held, event), for reports and tests.
        self.events: list[tuple[int, int, PauseEvent]] = []
        self.dev, self.netns = dev, netns
        self._listener: FrameListener | None = None

    def on_frame(self, frame: bytes, rx_ns: int) -> None:
        """Apply one received frame (anything but PAUSE/PFC is ignored)."""
        event = parse_mac_control(frame)
        if event is None:
            return
        if event.is_pfc:
            for prio, resume_ns in self.pfc.on_pfc(rx_ns, event.class_enable,
                                                   event.quanta).items():
                if prio in self.targets:
                    self.targets[prio].hold_until(resume_ns)
        else:
            resume_ns = self.pause.on_quanta(rx_ns, event.quanta[0])
            for target in self.targets.values():
                target.hold_until(resume_ns)
        self.events.append((rx_ns, time.time_ns(), event))

    def start(self) -> PauseAgent:
        """Start listening."""
        self._listener = FrameListener(self.dev, self.on_frame, self.netns,
                                       ethertype=layers.ETHERTYPE_MAC_CONTROL).start()
        return self

    def stop(self) -> None:
        """Stop listening (re-raises an error the frame handler hit)."""
        if self._listener is not None:
            listener, self._listener = self._listener, None
            listener.stop()

    def __enter__(self) -> PauseAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
