"""Live against virtual, cell by cell: goodput within a tolerance of the live mean, drops
within a band of it, and the band itself from the live trials' run-to-run spread.

Only valid live trials count (`RunResult.valid`); a cell without one is INVALID, never
PASS or FAIL. The drop band is relative (live mean × (1 ± band)) widened by a floor of
frames, so a cell whose live trials drop almost nothing is not judged on a few frames.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from bufferlab.experiments.tcp_validation.config import DEFAULT_DROP_BAND, Cell
from bufferlab.experiments.tcp_validation.measure import RunResult

#: Verdicts of a cell.
PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"


@dataclass(frozen=True)
class CellRuns:
    """A cell's runs: its name, every live trial (valid or not), the virtual run, and the
    grid cell (None for a scenario file given by the user)."""

    name: str
    live: tuple[RunResult, ...]
    virtual: RunResult
    cell: Cell | None = None

    @property
    def valid_live(self) -> tuple[RunResult, ...]:
        """The live trials that count."""
        return tuple(r for r in self.live if r.valid)


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else math.nan


def pooled_cv(groups: Sequence[Sequence[float]], floor: float = 0.0) -> float | None:
    """The pooled coefficient of variation of groups of repeated measurements: √(Σ (n−1)·
    s²/m² / Σ (n−1)) over groups of two or more whose mean is above ``floor``; None when
    no group qualifies."""
    weighted = dof = 0.0
    for values in groups:
        m = _mean(values)
        if len(values) < 2 or not m > floor:
            continue
        weighted += (len(values) - 1) * statistics.variance(values) / (m * m)
        dof += len(values) - 1
    return math.sqrt(weighted / dof) if dof else None


@dataclass(frozen=True)
class Bands:
    """What a cell is judged against: goodput tolerance, the drop band (relative) and its
    floor (frames), and where the band came from."""

    goodput_tolerance: float
    drop_band: float
    drop_floor_frames: int
    source: str


def drop_band(runs: Sequence[CellRuns], given: float | None, floor: int,
              goodput_tolerance: float, spread_factor: float = 2.0) -> Bands:
    """The bands: ``given`` if set, else ``spread_factor`` × the pooled CV of the valid live
    trials' drops (cells above ``floor`` with two or more), else DEFAULT_DROP_BAND."""
    if given is not None:
        return Bands(goodput_tolerance, given, floor, "given (--drop-band)")
    cv = pooled_cv([[r.admission_drops for r in c.valid_live] for c in runs], floor)
    if cv is None:
        return Bands(goodput_tolerance, DEFAULT_DROP_BAND, floor,
                     "default (no cell had two valid live trials above the floor)")
    return Bands(goodput_tolerance, spread_factor * cv, floor,
                 f"{spread_factor:g} × the pooled CV of live drops ({cv:.3f})")


@dataclass(frozen=True)
class Comparison:
    """One cell judged: live means and spreads, the virtual run, ratios, verdicts."""

    name: str
    cell: Cell | None
    live_trials: int
    valid_trials: int
    live_goodput_bps: float
    live_goodput_sd_bps: float
    virtual_goodput_bps: float
    live_drops: float
    live_drops_sd: float
    live_drops_range: tuple[int, int] | None
    virtual_drops: int
    goodput_verdict: str
    drops_verdict: str
    drop_limits: tuple[float, float]

    @property
    def goodput_ratio(self) -> float:
        """Virtual / live goodput."""
        return self.virtual_goodput_bps / self.live_goodput_bps if self.live_goodput_bps else math.nan

    @property
    def drops_ratio(self) -> float:
        """Virtual / live drops (NaN when live dropped nothing)."""
        return self.virtual_drops / self.live_drops if self.live_drops else math.nan

    @property
    def verdict(self) -> str:
        """INVALID without a valid live trial (or a virtual run that lost frames outside
        admission), PASS when goodput and drops both pass, else FAIL."""
        if INVALID in (self.goodput_verdict, self.drops_verdict):
            return INVALID
        return PASS if self.goodput_verdict == self.drops_verdict == PASS else FAIL


def compare(runs: CellRuns, bands: Bands) -> Comparison:
    """Judges one cell against ``bands``."""
    valid = runs.valid_live
    goodputs = [r.goodput_bps for r in valid]
    drops = [r.admission_drops for r in valid]
    live_g, live_d = _mean(goodputs), _mean(drops)
    v = runs.virtual
    margin = bands.drop_band * live_d + bands.drop_floor_frames if valid else math.nan
    limits = (max(0.0, live_d - margin), live_d + margin)
    if not valid or not v.valid:
        g_verdict = d_verdict = INVALID
    else:
        g_ok = abs(v.goodput_bps - live_g) <= bands.goodput_tolerance * live_g
        d_ok = limits[0] <= v.admission_drops <= limits[1]
        g_verdict, d_verdict = (PASS if g_ok else FAIL), (PASS if d_ok else FAIL)
    return Comparison(runs.name, runs.cell, len(runs.live), len(valid), live_g, _sd(goodputs),
                      v.goodput_bps, live_d, _sd(drops),
                      (min(drops), max(drops)) if drops else None, v.admission_drops,
                      g_verdict, d_verdict, limits)
