"""Parameters of the QBSS study (seed 002): the classes, the runs, the seed's figures, presets.

The seed ran everything at its own rates (a 10 Mbit/s bottleneck for the shares, 100 Mbit/s
for the ping study) with about 30 s between changes and 100 s of ping; those are the
defaults here too. Only the durations shrink for quick runs (`QUICK`, `--phase-s`,
`--ping-s`): TCP reaches its share within a second at these rates, so shorter phases still
show the shares and the transitions (README "Scaling").
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class TrafficClass:
    """One class: the TOS byte the hosts set (`iperf3 -S`, `ping -Q`), its DSCP, its queue."""

    name: str
    label: str
    tos: int
    queue: int

    @property
    def dscp(self) -> int:
        """DiffServ code point: the TOS byte without its two ECN bits."""
        return self.tos >> 2


QBSS = TrafficClass("qbss", "QBSS", tos=32, queue=0)
BE = TrafficClass("be", "BE", tos=0, queue=1)
PRIORITY = TrafficClass("priority", "priority", tos=40, queue=2)
#: In queue order: QBSS's queue 0, best effort's 1, priority's 2.
CLASSES = (QBSS, BE, PRIORITY)


def class_by_name(name: str) -> TrafficClass:
    """The class called ``name`` (qbss, be, priority)."""
    for c in CLASSES:
        if c.name == name:
            return c
    raise ValueError(f"unknown class {name!r} (known: {', '.join(c.name for c in CLASSES)})")


@dataclass(frozen=True)
class PhaseRun:
    """One run of the seed's schedule: the scheduler's weights (% of the port, per queue),
    the TCP window (None: Linux's default autotuning) and the number of BE streams."""

    name: str
    weights_pct: tuple[int, int, int]
    window_bytes: int | None
    be_streams: int
    note: str = ""

    @property
    def title(self) -> str:
        """The run in words, e.g. `QBSS 1 % / BE 29 % / priority 70 %, 8 KB window, 1 BE stream`."""
        weights = " / ".join(f"{c.label} {w} %" for c, w in zip(CLASSES, self.weights_pct,
                                                                  strict=True))
        window = (f"{self.window_bytes // 1024} KB window" if self.window_bytes
                  else "default window")
        streams = f"{self.be_streams} BE stream{'s' if self.be_streams > 1 else ''}"
        return f"{weights}, {window}, {streams}"


#: The seed's first setting, QBSS 1 % and priority 70 %; best effort gets the rest.
FIRST_WEIGHTS = (1, 29, 70)
#: The setting the seed's text gives for its third measurement: QBSS 30 %, priority 1 %.
SECOND_WEIGHTS = (30, 69, 1)
#: The SLAC routers' `bandwidth percent` 1 / 30 / 69 for qbss / hi-priority / default
#: (congestion.md §6), which the third measurement's figures fit.
ROUTER_WEIGHTS = (1, 69, 30)
#: bbcp's window in the seed.
BBCP_WINDOW_BYTES = 8 * 1024

SEED_RUNS = (
    PhaseRun("w8k_1be", FIRST_WEIGHTS, BBCP_WINDOW_BYTES, 1),
    PhaseRun("default_1be", FIRST_WEIGHTS, None, 1),
    PhaseRun("w8k_10be", FIRST_WEIGHTS, BBCP_WINDOW_BYTES, 10),
    PhaseRun("default_10be", FIRST_WEIGHTS, None, 10),
    PhaseRun("w8k_10be_q30p1", SECOND_WEIGHTS, BBCP_WINDOW_BYTES, 10,
             "the seed's text: QBSS 30 %, priority 1 %"),
    PhaseRun("w8k_10be_q1p30", ROUTER_WEIGHTS, BBCP_WINDOW_BYTES, 10,
             "the routers' 1 / 30 / 69 % (congestion.md §6), which the seed's figures fit"),
)

#: What the seed reports, in % of the 10 Mbit/s bottleneck, per run, phase (0-4) and class;
#: phases 3 and 4 repeat 1 and 0 ("as the priority and later the BE copies are stopped the
#: reverse happens"), and the 10-stream runs repeat the 1-stream one ("almost identical").
_FIRST_FIGURES = {0: {"qbss": "> 90"}, 1: {"qbss": "≈ 5", "be": "≈ 87"},
                  2: {"qbss": "≈ 1", "be": "≈ 19", "priority": "≈ 70"}}
_THIRD_FIGURES = {1: {"qbss": "≈ 1.6 (20 KB/s)"},
                  2: {"qbss": "≈ 0.8 (10 KB/s)", "be": "≈ 66", "priority": "≈ 30"}}


def _mirrored(figures: dict[int, dict[str, str]]) -> dict[int, dict[str, str]]:
    return {**figures, **{4 - p: v for p, v in figures.items() if p < 2}}


SEED_FIGURES_PCT: dict[str, dict[int, dict[str, str]]] = {
    "w8k_1be": _mirrored(_FIRST_FIGURES),
    "w8k_10be": _mirrored(_FIRST_FIGURES),
    "w8k_10be_q30p1": _mirrored(_THIRD_FIGURES),
    "w8k_10be_q1p30": _mirrored(_THIRD_FIGURES),
}
#: The seed's iperf throughput in the ping study (its RTT table is not in the seed's text).
SEED_PING_IPERF_MBIT_PER_S = 93.0

#: The class of the ping study's bulk flow, trial by trial (None: no bulk flow, the idle
#: reference every other trial is compared with).
PING_BULK = (None, "be", "qbss", "priority")


@dataclass(frozen=True)
class QbssConfig:
    """One run of the study: rates, durations, runs, the ping study's flows and probes.

    ``congestion`` is the TCP congestion control of every copy: CUBIC, Linux's default and
    loss-based like the seed's 2001 TCP stacks, whatever this machine's default is (BBR
    paces a flow at the rate it last measured, so a scavenger that was held at 1 % takes
    longer to take the link back)."""

    bottleneck_bps: int = 10_000_000
    ping_bottleneck_bps: int = 100_000_000
    phase_s: float = 30.0
    ping_s: float = 100.0
    ping_interval_s: float = 1.0
    ping_lead_s: float = 2.0
    ping_window_bytes: int = 128 * 1024
    ping_weights_pct: tuple[int, int, int] = FIRST_WEIGHTS
    ping_bulk: tuple[str | None, ...] = PING_BULK
    probe_rate_per_s: float = 10.0
    queue_cap_frames: int = 64
    congestion: str = "cubic"
    runs: tuple[PhaseRun, ...] = SEED_RUNS

    def __post_init__(self) -> None:
        """Checks every value; the error names the key and the reason."""
        def fail(key: str, why: str) -> None:
            raise ValueError(f"qbss config: {key}: {why}")

        for key in ("bottleneck_bps", "ping_bottleneck_bps"):
            if getattr(self, key) <= 0:
                fail(key, f"{getattr(self, key)} bit/s must be positive")
        if self.phase_s != int(self.phase_s):
            fail("phase_s", f"{self.phase_s} s: whole seconds (iperf3 runs whole seconds, and the "
                            "1-s intervals start at the changes)")
        if self.phase_s < 4:
            fail("phase_s", f"{self.phase_s} s is too short: a phase needs 2 s to settle and "
                            "1 s to stop, and 1 s of steady state between (at least 4 s)")
        if self.ping_s <= 0 or self.ping_interval_s <= 0 or self.ping_lead_s < 0:
            fail("ping_s/ping_interval_s/ping_lead_s", "must be positive (lead: non-negative)")
        if self.ping_s < self.ping_interval_s:
            fail("ping_s", f"{self.ping_s} s is shorter than one ping interval")
        if self.ping_interval_s < 0.2:
            fail("ping_interval_s", "ping spaces its packets by at least 0.2 s as root")
        if self.probe_rate_per_s <= 0:
            fail("probe_rate_per_s", "must be positive")
        if not self.congestion.isidentifier():
            fail("congestion", f"{self.congestion!r} is not a congestion control's name")
        if not 1 <= self.queue_cap_frames <= 10_000:
            fail("queue_cap_frames", f"{self.queue_cap_frames} is outside 1..10000")
        if not self.runs and not self.ping_bulk:
            fail("runs/ping_bulk", "nothing to run")
        if len({r.name for r in self.runs}) != len(self.runs):
            fail("runs", "run names must differ")
        for r in self.runs:
            _check_weights(fail, f"runs.{r.name}.weights_pct", r.weights_pct)
            if r.be_streams < 1:
                fail(f"runs.{r.name}.be_streams", "at least one stream")
            if r.window_bytes is not None and r.window_bytes < 1024:
                fail(f"runs.{r.name}.window_bytes", "at least 1024 bytes (or None)")
        _check_weights(fail, "ping_weights_pct", self.ping_weights_pct)
        for bulk in self.ping_bulk:
            if bulk is not None:
                try:
                    class_by_name(bulk)
                except ValueError as err:
                    fail("ping_bulk", str(err))
        if self.ping_bulk and self.ping_bulk[0] is not None:
            fail("ping_bulk", "starts with None: the idle RTTs are the reference")

    @property
    def ping_count(self) -> int:
        """Pings per class in one ping trial."""
        return max(1, round(self.ping_s / self.ping_interval_s))

    @property
    def probe_count(self) -> int:
        """Probes per class in one ping trial."""
        return max(1, round(self.ping_s * self.probe_rate_per_s))

    def with_overrides(self, **values: Any) -> QbssConfig:
        """A copy with the given (non-None) values replaced, checked again."""
        known = {f.name for f in fields(self)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"qbss config: unknown keys {sorted(unknown)}")
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def _check_weights(fail: Any, key: str, weights: tuple[int, ...]) -> None:
    if len(weights) != len(CLASSES):
        fail(key, f"one weight per class ({len(CLASSES)}), got {len(weights)}")
    if any(not 1 <= w <= 100 for w in weights) or sum(weights) > 100:
        fail(key, f"{weights}: whole percents 1..100 adding up to at most 100")


#: The seed's timing: 30 s between changes, 100 s of ping per trial (~23 min here).
FULL = QbssConfig()

#: Shorter phases and pings for a first look (~7 min here).
QUICK = QbssConfig(phase_s=10.0, ping_s=20.0)
