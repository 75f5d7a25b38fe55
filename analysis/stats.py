"""Univariate statistics of a sample."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

DEFAULT_PERCENTILES = (1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0)


@dataclass(frozen=True)
class Univariate:
    """n, extremes, mean, median, sample standard deviation and percentiles of one sample.

    Percentiles interpolate linearly between order statistics (numpy's default,
    Hyndman–Fan type 7); stdev uses n − 1 (0 for a single value).
    """

    n: int
    min: float
    max: float
    mean: float
    median: float
    stdev: float
    percentiles: dict[float, float] = field(default_factory=dict)

    def row(self, percentiles: Sequence[float] = ()) -> list[float]:
        """The statistics in table order: n, min, mean, median, max, stdev, then percentiles."""
        return [self.n, self.min, self.mean, self.median, self.max, self.stdev,
                *(self.percentiles[p] for p in percentiles)]


def describe(values: Iterable[float], percentiles: Sequence[float] = DEFAULT_PERCENTILES
             ) -> Univariate:
    """Univariate statistics of ``values``; an empty sample is an error."""
    # An array or a sequence converts as a whole; only a bare iterator goes through a list
    # (a list of a large array would make a Python float per element).
    data = np.asarray(values if isinstance(values, np.ndarray | Sequence) else list(values),
                      dtype=float)
    if data.size == 0:
        raise ValueError("no values to describe")
    if not np.all(np.isfinite(data)):
        raise ValueError("values must be finite numbers")
    for p in percentiles:
        if not 0 <= p <= 100:
            raise ValueError(f"percentile {p} outside 0..100")
    # The median and every percentile from one partition of the sample.
    ranks = [50.0, *(float(p) for p in percentiles)]
    at = np.percentile(data, ranks)
    return Univariate(
        n=int(data.size),
        min=float(data.min()),
        max=float(data.max()),
        mean=float(data.mean()),
        median=float(at[0]),
        stdev=float(data.std(ddof=1)) if data.size > 1 else 0.0,
        percentiles={p: float(v) for p, v in zip(ranks[1:], at[1:], strict=True)},
    )
