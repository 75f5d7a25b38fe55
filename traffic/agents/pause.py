"""PAUSE (802.3x) and PFC (802.1Qbb) honouring at a host.

A PAUSE with quanta q received at link rate R stops the host's sender for
q·512/R seconds from the frame's arrival; quanta 0 (XON) resumes at once; a new
PAUSE replaces the running timer (congestion.md §2.1). PFC keeps one such timer
per priority and only the classes whose enable bit is set are touched (§2.2).

The timers and the frame parser are bufferlab-hosts' ``pause`` module (through
``bufferlab.traffic._hosts``), the code the simulator's hosts run; ``PauseAgent``
only feeds them received frames and holds its targets.
"""

from __future__ import annotations

import time
from typing import Protocol

from bufferlab.traffic import layers
from bufferlab.traffic._hosts import (
    PauseEvent,
    PauseTimer,
    PfcTimers,
    parse_mac_control,
    pause_duration_ns,
)
from bufferlab.traffic.agents.listener import FrameListener

__all__ = [
    "PauseAgent",
    "PauseEvent",
    "PauseTarget",
    "PauseTimer",
    "PfcTimers",
    "parse_mac_control",
    "pause_duration_ns",
]


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
