"""Fairness: Jain's index and normalised deviation from a target rate (congestion.md §5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


def jain_index(rates: Iterable[float], fair_shares: Iterable[float] | None = None) -> float:
    """J = (Σx)² / (n·Σx²) with x_i = r_i / fair share_i (or r_i); 1 means equal shares."""
    x = np.asarray(list(rates), dtype=float)
    if x.size == 0:
        raise ValueError("no rates")
    if fair_shares is not None:
        shares = np.asarray(list(fair_shares), dtype=float)
        if shares.size != x.size or np.any(shares <= 0):
            raise ValueError("fair_shares must be positive, one per rate")
        x = x / shares
    if np.any(x < 0):
        raise ValueError("rates must not be negative")
    total_sq = float((x**2).sum())
    if total_sq == 0:
        raise ValueError("all rates are zero: fairness is undefined")
    return float(x.sum() ** 2 / (x.size * total_sq))


def normalised_deviation(rates: Iterable[float], target: float) -> np.ndarray:
    """δ = (r − r*) / r* for each rate (signed)."""
    if target <= 0:
        raise ValueError(f"target must be positive, got {target}")
    return (np.asarray(list(rates), dtype=float) - target) / target


@dataclass(frozen=True)
class DeviationSummary:
    """|δ| statistics over all samples (flows × intervals), as the BCN seed's table reports."""

    max: float
    min: float
    mean: float
    rms: float


def deviation_summary(rates: Iterable[float], target: float) -> DeviationSummary:
    """Max, min, mean and RMS of |δ| over ``rates``."""
    delta = np.abs(normalised_deviation(rates, target))
    if delta.size == 0:
        raise ValueError("no rates")
    return DeviationSummary(
        max=float(delta.max()),
        min=float(delta.min()),
        mean=float(delta.mean()),
        rms=float(np.sqrt((delta**2).mean())),
    )


@dataclass(frozen=True)
class RunFairness:
    """One row of the BCN seed's table: per-flow mean rates, |δ| over flows, and Jain's index."""

    mean_rate_bps: dict[int, float]
    deviation: DeviationSummary
    jain: float


def run_fairness(rates_bps: dict[int, np.ndarray], target_bps: float) -> RunFairness:
    """Fairness of a run from per-flow rate series (e.g. ``ThroughputSeries.rates_bps`` over
    the congested window): each flow's mean rate against the target, and J over them."""
    if not rates_bps:
        raise ValueError("no flows")
    means = {flow: float(np.mean(series)) for flow, series in rates_bps.items()}
    return RunFairness(
        mean_rate_bps=means,
        deviation=deviation_summary(means.values(), target_bps),
        jain=jain_index(means.values()),
    )
