"""The BCN reaction point (RP) at a host, congestion.md §1.4 and the 2006 features.

On a BCN with feedback Fb (64-byte pages, |Fb| saturated at Fbmax):
negative ⇒ R ← R·(1 − Gd·|Fb|); positive ⇒ R ← R + Gi·Fb·Ru; severe ⇒ the maximal
decrease (Fb = −Fbmax); R is clamped to [Rmin, line rate]. The first negative BCN
installs the limiter and the rate-limiter tag RLT(CPID); when R climbs back to
line rate the limiter and tag are removed.

One limiter regulates the host's flow (or HTB class); it is tagged with the CPID of
the latest negative BCN, and positive BCNs count only from that congestion point
(the CP sends them only to sources tagged with its CPID, §1.2).

The RP and the frame parser are bufferlab-hosts' ``bcn`` module (through
``bufferlab.traffic._hosts``), the code the simulator's hosts run, with the 2006
features of experiments/bcn/README.md. ``BcnAgent`` drives every one of them on a live
host as the simulator does: BCNs as they arrive, the drift timer from a thread at the
RP's ``next_timer_ns``, a BCN(0,0) back-off held at the sender before it restarts at
Rmin, and the bytes sent fed to the rate meter a limiter starting from the current rate
reads. ``ReactionPoint`` here adds only the history of rate changes for reports.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from bufferlab.traffic import _hosts, layers, tc
from bufferlab.traffic._hosts import BcnFeedback, RateChange, RpConfig, parse_bcn
from bufferlab.traffic.agents.listener import FrameListener

__all__ = [
    "BackoffTarget",
    "BcnAgent",
    "BcnFeedback",
    "HtbClassTarget",
    "MeteredTarget",
    "RateChange",
    "RateTarget",
    "ReactionPoint",
    "RpConfig",
    "parse_bcn",
]

#: The timer thread looks at the RP at least this often (a BCN that installs a limiter
#: wakes it at once; this only bounds a missed wake-up).
_MAX_TIMER_WAIT_S = 0.05


class ReactionPoint:
    """The RP of bufferlab-hosts fed BCNs, timer expiries and bytes sent, plus ``history``."""

    def __init__(self, config: RpConfig, seed: int = 0) -> None:
        """Start unlimited, at line rate; BCN(0,0) back-offs are drawn from ``seed``."""
        self._rp = _hosts.ReactionPoint.from_config(config, seed)
        self.history: list[RateChange] = []

    @property
    def config(self) -> RpConfig:
        """The parameters."""
        return self._rp.config

    @property
    def rate_bps(self) -> float:
        """The regulated rate, bit/s (line rate when unlimited)."""
        return self._rp.rate_bps

    @property
    def rlt_cpid(self) -> int | None:
        """The CPID frames are tagged with, None when no limiter is installed."""
        return self._rp.rlt_cpid

    @property
    def limited(self) -> bool:
        """Whether a rate limiter is installed."""
        return self._rp.limited

    @property
    def ignored(self) -> int:
        """BCNs that did not apply (positive without a matching tag, or Fb = 0)."""
        return self._rp.ignored

    @property
    def next_timer_ns(self) -> int | None:
        """When the RP next wants ``on_timer`` (its next drift step), None for never."""
        return self._rp.next_timer_ns

    def on_bcn(self, now_ns: int, bcn: BcnFeedback) -> RateChange | None:
        """Act on one BCN; returns the new state (also kept in ``history``), or None."""
        return self._record(self._rp.on_bcn(now_ns, bcn))

    def on_timer(self, now_ns: int) -> RateChange | None:
        """Take the drift steps due by ``now_ns``; the new state (kept), or None if none was."""
        return self._record(self._rp.on_timer(now_ns))

    def note_sent(self, now_ns: int, sent_bytes: int) -> None:
        """The source sent ``sent_bytes`` at ``now_ns`` (for a limiter starting at the current
        rate: count them as the limiter paces them)."""
        self._rp.note_sent(now_ns, sent_bytes)

    def _record(self, change: RateChange | None) -> RateChange | None:
        if change is not None:
            self.history.append(change)
        return change


class RateTarget(Protocol):
    """What the RP regulates: a sender (or HTB class) whose rate and tag can be set."""

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Limit to ``rate_bps``; None removes the limiter."""

    def set_rlt(self, cpid: int | None) -> None:
        """Tag the flow's frames with RLT(cpid); None stops tagging."""


@runtime_checkable
class BackoffTarget(Protocol):
    """A target a BCN(0,0) can stop (the RP's ``severe = "stop"``)."""

    def back_off_until(self, resume_ns: int) -> None:
        """Send nothing before ``resume_ns`` (BCN(0,0)); a later call replaces an earlier one."""


@runtime_checkable
class MeteredTarget(Protocol):
    """A target that reports what it sends (the RP's ``initial_rate = "current"``)."""

    def add_sent_observer(self, observer: Callable[[int, int], None]) -> None:
        """Call ``observer(now_ns, frame_bytes)`` for every frame sent from now on."""


class HtbClassTarget:
    """Applies the RP's rate to one HTB leaf class (rate = ceil = regulated rate).

    tc cannot insert the RLT into frames, so the tag is only recorded here: a CP
    that gates positive BCNs on the tag will not send them to this host, and the
    class recovers only through BCNs the CP sends regardless (its ``positive_to = "any"``)
    or the RP's drift. Nor can an HTB class be stopped for a BCN(0,0) back-off or report
    its own sending rate: an RP with ``severe = "stop"`` or ``initial_rate = "current"``
    needs ``sender.RegulatedSender``.
    """

    def __init__(
        self, dev: str, minor: int, unlimited_rate_bps: int, unlimited_ceil_bps: int,
        netns: str | None = None,
    ) -> None:
        """Remember the class's own rate/ceil, restored when the limiter is removed."""
        self.dev, self.minor, self.netns = dev, minor, netns
        self.unlimited = (unlimited_rate_bps, unlimited_ceil_bps)
        self.rlt_cpid: int | None = None

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Change the class live via tc."""
        if rate_bps is None:
            rate, ceil = self.unlimited
        else:
            rate = ceil = rate_bps
        tc.change_htb_rate(self.dev, self.minor, rate, ceil_bps=ceil, netns=self.netns)

    def set_rlt(self, cpid: int | None) -> None:
        """Record the tag (see the class docstring: frames stay untagged)."""
        self.rlt_cpid = cpid


def target_error(config: RpConfig, target: object) -> str | None:
    """Why ``target`` cannot carry what ``config``'s RP asks of it, or None."""
    features = config.features
    if features.get("severe") == "stop" and not isinstance(target, BackoffTarget):
        return (f"severe = \"stop\" (BCN(0,0)) needs a target that can be stopped "
                f"(back_off_until); {type(target).__name__} cannot")
    if features.get("initial_rate") == "current" and not isinstance(target, MeteredTarget):
        return (f"initial_rate = \"current\" needs a target that reports what it sends "
                f"(add_sent_observer); {type(target).__name__} does not")
    return None


class BcnAgent:
    """Sniffs a host interface for BCN frames and applies the RP's decisions to a target.

    Besides the BCNs, a thread calls the RP's drift timer when it is due; a BCN(0,0)
    stops the target (``back_off_until``) before it restarts at the RP's restart rate;
    and for a limiter starting from the current rate the agent feeds the RP what the
    target sends. ``clock_ns`` must be the clock of the frames' arrival times (the
    listener's kernel timestamps are CLOCK_REALTIME, ``time.time_ns``).
    """

    def __init__(
        self, dev: str, rp: ReactionPoint, target: RateTarget, netns: str | None = None,
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        """Prepare the agent; start() (or a ``with`` block) opens the interface and listens.

        Raises ValueError if the RP's features ask for something ``target`` cannot do.
        """
        error = target_error(rp.config, target)
        if error is not None:
            raise ValueError(error)
        self.rp = rp
        self.target = target
        self.dev, self.netns = dev, netns
        self._clock_ns = clock_ns
        # The listener, the timer thread and the sender (note_sent) all reach the RP.
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._listener: FrameListener | None = None
        self._timer: threading.Thread | None = None
        self.timer_error: BaseException | None = None
        if "initial_rate" in rp.config.features and isinstance(target, MeteredTarget):
            target.add_sent_observer(self.note_sent)

    def on_frame(self, frame: bytes, rx_ns: int) -> None:
        """Apply one received frame (anything but BCN is ignored)."""
        bcn = parse_bcn(frame)
        if bcn is None:
            return
        with self._lock:
            change = self.rp.on_bcn(rx_ns, bcn)
        if change is not None:
            self._apply(change)
            self._wake.set()  # the drift timer may have been armed or moved

    def on_timer(self, now_ns: int) -> RateChange | None:
        """Take the drift steps due by ``now_ns`` and apply the result (None: none was due)."""
        with self._lock:
            change = self.rp.on_timer(now_ns)
        if change is not None:
            self._apply(change)
        return change

    def note_sent(self, now_ns: int, sent_bytes: int) -> None:
        """The target sent ``sent_bytes`` at ``now_ns`` (fed to the RP's rate meter)."""
        with self._lock:
            self.rp.note_sent(now_ns, sent_bytes)

    def timer_wait_s(self) -> float:
        """Runs the drift steps due now; how long the timer thread may then sleep, s."""
        now = self._clock_ns()
        with self._lock:
            due = self.rp.next_timer_ns
        if due is not None and due <= now:
            self.on_timer(now)
            with self._lock:
                due = self.rp.next_timer_ns
        if due is None:
            return _MAX_TIMER_WAIT_S
        return min(max(due - now, 0) / 1e9, _MAX_TIMER_WAIT_S)

    def _apply(self, change: RateChange) -> None:
        self.target.set_rate_bps(round(change.rate_bps) if change.limited else None)
        self.target.set_rlt(change.rlt_cpid)
        if change.hold_until_ns is not None:
            # target_error made sure a target that can get a BCN(0,0) can be stopped.
            assert isinstance(self.target, BackoffTarget)
            self.target.back_off_until(change.hold_until_ns)

    def _run_timer(self) -> None:
        try:
            while not self._stop.is_set():
                wait_s = self.timer_wait_s()
                self._wake.wait(wait_s)
                self._wake.clear()
        except BaseException as error:  # re-raised by stop()
            self.timer_error = error

    def start(self) -> BcnAgent:
        """Start listening, and the drift timer's thread if the RP has a drift."""
        self._stop.clear()
        self._listener = FrameListener(self.dev, self.on_frame, self.netns,
                                       ethertype=layers.ETHERTYPE_BCN).start()
        if "drift_interval_ns" in self.rp.config.features:
            self._timer = threading.Thread(target=self._run_timer, name=f"bcn-timer-{self.dev}",
                                           daemon=True)
            self._timer.start()
        return self

    def stop(self) -> None:
        """Stop listening and the timer (re-raises an error the frame handler or timer hit)."""
        self._stop.set()
        self._wake.set()
        if self._timer is not None:
            self._timer.join()
            self._timer = None
        if self._listener is not None:
            listener, self._listener = self._listener, None
            listener.stop()
        if self.timer_error is not None:
            error, self.timer_error = self.timer_error, None
            raise error

    def __enter__(self) -> BcnAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
