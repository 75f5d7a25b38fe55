"""Parameters of the ToR study (seed 000), with the short default grid and the seed's full grid.

The seed's switch had a ~3.2 MB buffer (6,398 frames of 512 bytes at 100 %) and ran each
load for a tester's trial length. Virtual time costs per frame, not per second, so the
defaults scale the pool down (and the trial with it) until a run takes minutes: the
behaviour depends on the threshold in bytes relative to the frame size and on the time the
excess load needs to fill it, and both scale together (README "Scaling").
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from bufferlab.experiments.common.wire import MAX_FRAME_BYTES, MIN_FRAME_BYTES, load_fraction

SEED_FRAME_SIZES_BYTES = (64, 128, 256, 512, 1024, 1280, 1518)
SEED_THRESHOLDS_PCT = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
SEED_LOADS_PCT = (49.8, 49.9, 50.0, 50.1, 50.2)
SEED_BURST_FRAME_SIZES_BYTES = (512, 1024)
SEED_BURST_THRESHOLDS_PCT = (50, 100)
# The seed's buffer-size results, frames absorbed: {(frame bytes, threshold %): frames}.
SEED_BURST_FRAMES = {(512, 50): 3116, (1024, 50): 1502, (512, 100): 6398, (1024, 100): 3116}
# The seed's buffer as its 100 % result implies: 6,398 frames of 512 bytes.
SEED_POOL_BYTES = 6398 * 512


@dataclass(frozen=True)
class TorConfig:
    """One run of the study: tester and switch model, the grid, and the trial."""

    port_rate_bps: int = 1_000_000_000
    pool_bytes: int = 65_536
    trial_ms: float = 400.0
    latency_from: float = 0.5
    frame_sizes_bytes: tuple[int, ...] = (64, 256, 512, 1024, 1518)
    thresholds_pct: tuple[int, ...] = (10, 20, 50, 100)
    loads_pct: tuple[float, ...] = (49.8, 50.0, 50.2)
    burst_frame_sizes_bytes: tuple[int, ...] = SEED_BURST_FRAME_SIZES_BYTES
    burst_thresholds_pct: tuple[int, ...] = SEED_BURST_THRESHOLDS_PCT
    seed: int = 0
    port_a: int = 1
    port_b: int = 2
    port_c: int = 3

    def __post_init__(self) -> None:
        """Checks every value; the error names the key and the reason."""
        def fail(key: str, why: str) -> None:
            raise ValueError(f"tor_switch config: {key}: {why}")

        if self.port_rate_bps <= 0:
            fail("port_rate_bps", f"{self.port_rate_bps} bit/s must be positive")
        if not 1 <= self.pool_bytes <= 0xFFFFFFFF:
            fail("pool_bytes", f"{self.pool_bytes} bytes is outside 1..4294967295")
        if self.trial_ms <= 0:
            fail("trial_ms", f"{self.trial_ms} ms must be positive")
        if not 0 <= self.latency_from < 1:
            fail("latency_from", f"{self.latency_from} must be a fraction of the trial in [0, 1)")
        for key in ("frame_sizes_bytes", "burst_frame_sizes_bytes"):
            sizes = getattr(self, key)
            if not sizes:
                fail(key, "needs at least one frame size")
            bad = [s for s in sizes if not MIN_FRAME_BYTES <= s <= MAX_FRAME_BYTES]
            if bad:
                fail(key, f"{bad} bytes outside Ethernet's {MIN_FRAME_BYTES}..{MAX_FRAME_BYTES}")
        for key in ("thresholds_pct", "burst_thresholds_pct"):
            values = getattr(self, key)
            if not values:
                fail(key, "needs at least one threshold")
            bad = [t for t in values if not 1 <= t <= 100]
            if bad:
                fail(key, f"{bad} % outside 1..100 % of the pool")
        if not self.loads_pct:
            fail("loads_pct", "needs at least one load")
        for load in self.loads_pct:
            try:
                load_fraction(load)
            except ValueError as err:
                fail("loads_pct", str(err))
        if len({self.port_a, self.port_b, self.port_c}) != 3:
            fail("port_a/port_b/port_c", "the three tester ports must differ")
        smallest = min(self.thresholds_pct + self.burst_thresholds_pct) * self.pool_bytes / 100
        largest = max(self.frame_sizes_bytes + self.burst_frame_sizes_bytes)
        if smallest < largest:
            fail("pool_bytes", f"the smallest threshold holds {smallest:.0f} bytes, less than one "
                               f"{largest}-byte frame: every such frame would be dropped")

    @property
    def trial_ns(self) -> int:
        """Trial length in (virtual) ns."""
        return round(self.trial_ms * 1_000_000)

    @property
    def latency_from_ns(self) -> int:
        """Frames whose last bit enters at or after this time of a trial count for latency, ns."""
        return round(self.latency_from * self.trial_ns)

    def with_overrides(self, **values: Any) -> TorConfig:
        """A copy with the given (non-None) values replaced, checked again."""
        known = {f.name for f in fields(self)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"tor_switch config: unknown keys {sorted(unknown)}")
        return replace(self, **{k: v for k, v in values.items() if v is not None})


#: The short default grid: a few minutes on a 2-core machine.
SHORT = TorConfig()

#: A reduced grid for running the study on two programs in one go (`make run-tofino`): the
#: short grid's pool and trial (so the burst counts are large enough for their ratios), three
#: frame sizes and thresholds (the fewest the linearity checks take), one load below and
#: one above 50 %.
REDUCED = TorConfig(frame_sizes_bytes=(64, 512, 1518), thresholds_pct=(20, 60, 100),
                    loads_pct=(49.8, 50.2))

#: The seed's whole grid, on a pool large enough that 1 % holds a 1518-byte frame.
FULL = TorConfig(
    pool_bytes=153_600,
    trial_ms=2000.0,
    frame_sizes_bytes=SEED_FRAME_SIZES_BYTES,
    thresholds_pct=SEED_THRESHOLDS_PCT,
    loads_pct=SEED_LOADS_PCT,
)

#: The live backend's grid (README "Live backend"): a real switch process and host stacks
#: handle a few thousand frames/s reliably on a shared machine, so the line rate is 2 Mbit/s;
#: the pool is scaled so a congesting load fills it in under a second of wall-clock time,
#: and the loads straddle 50 % per port widely enough that host timing cannot blur them.
LIVE = TorConfig(
    port_rate_bps=2_000_000,
    pool_bytes=16_384,
    trial_ms=2000.0,
    frame_sizes_bytes=(64, 512, 1518),
    thresholds_pct=(20, 50, 100),
    loads_pct=(45.0, 55.0),
)
