"""Linear regression: one regressor (slope, intercept, R², standard errors) and two regressors."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps


@dataclass(frozen=True)
class LinearFit:
    """y ≈ slope·x + intercept by ordinary least squares."""

    n: int
    slope: float
    intercept: float
    r_squared: float
    slope_stderr: float
    intercept_stderr: float

    def predict(self, x: float | np.ndarray) -> float | np.ndarray:
        """The fitted value at ``x``."""
        return self.slope * x + self.intercept

    def equation(self, digits: int = 4) -> str:
        """The fit as a spreadsheet trendline label: ``y = 5.2844x + 12.722, R² = 0.9992``."""
        sign = "+" if self.intercept >= 0 else "−"
        return (f"y = {self.slope:.{digits}g}x {sign} {abs(self.intercept):.{digits}g}, "
                f"R² = {self.r_squared:.{digits}f}")


def _arrays(*columns: Iterable[float]) -> list[np.ndarray]:
    arrays = [np.asarray(list(c), dtype=float) for c in columns]
    if len({a.size for a in arrays}) != 1:
        raise ValueError(f"columns differ in length: {[a.size for a in arrays]}")
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("values must be finite numbers")
    return arrays


def linear_fit(x: Iterable[float], y: Iterable[float]) -> LinearFit:
    """Least-squares line through (x, y); needs 3 points and 2 distinct x for the errors."""
    xs, ys = _arrays(x, y)
    if xs.size < 3:
        raise ValueError(f"a line with standard errors needs at least 3 points, got {xs.size}")
    if np.ptp(xs) == 0:
        raise ValueError("all x are equal: the slope is undefined")
    res = sps.linregress(xs, ys)
    return LinearFit(
        n=int(xs.size),
        slope=float(res.slope),
        intercept=float(res.intercept),
        r_squared=float(res.rvalue**2),
        slope_stderr=float(res.stderr),
        intercept_stderr=float(res.intercept_stderr),
    )


@dataclass(frozen=True)
class MultipleFit:
    """y ≈ intercept + b1·x1 + b2·x2 by ordinary least squares."""

    n: int
    intercept: float
    b1: float
    b2: float
    r_squared: float
    adjusted_r_squared: float
    intercept_stderr: float
    b1_stderr: float
    b2_stderr: float

    def predict(self, x1: float | np.ndarray, x2: float | np.ndarray) -> float | np.ndarray:
        """The fitted value at (x1, x2)."""
        return self.intercept + self.b1 * x1 + self.b2 * x2


def multiple_fit(x1: Iterable[float], x2: Iterable[float], y: Iterable[float]) -> MultipleFit:
    """Least-squares plane through (x1, x2, y); needs 4 points and independent regressors."""
    a1, a2, ys = _arrays(x1, x2, y)
    n = ys.size
    if n < 4:
        raise ValueError(f"two regressors with standard errors need at least 4 points, got {n}")
    design = np.column_stack([np.ones(n), a1, a2])
    if np.linalg.matrix_rank(design) < 3:
        raise ValueError("the regressors are collinear (or one is constant): no unique fit")
    coef, _, _, _ = np.linalg.lstsq(design, ys, rcond=None)
    residuals = ys - design @ coef
    sse = float(residuals @ residuals)
    sst = float(((ys - ys.mean()) ** 2).sum())
    r2 = 1.0 - sse / sst if sst > 0 else 1.0
    covariance = sse / (n - 3) * np.linalg.inv(design.T @ design)
    se = np.sqrt(np.diag(covariance))
    return MultipleFit(
        n=int(n),
        intercept=float(coef[0]),
        b1=float(coef[1]),
        b2=float(coef[2]),
        r_squared=r2,
        adjusted_r_squared=1.0 - (1.0 - r2) * (n - 1) / (n - 3),
        intercept_stderr=float(se[0]),
        b1_stderr=float(se[1]),
        b2_stderr=float(se[2]),
    )
