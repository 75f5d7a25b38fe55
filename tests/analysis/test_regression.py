"""Linear and two-regressor regression against hand-computed fits."""

import math

import numpy as np
import pytest

from bufferlab.analysis.regression import linear_fit, multiple_fit


def test_linear_fit_hand_example():
    # x̄ = 3, ȳ = 4, Sxx = 10, Sxy = 6 → slope 0.6, intercept 2.2; SSE 2.4, SST 6 → R² 0.6.
    fit = linear_fit([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
    assert fit.n == 5
    assert fit.slope == pytest.approx(0.6)
    assert fit.intercept == pytest.approx(2.2)
    assert fit.r_squared == pytest.approx(0.6)
    # s² = SSE/(n − 2) = 0.8; se(slope) = √(s²/Sxx); se(b) = √(s²(1/n + x̄²/Sxx)).
    assert fit.slope_stderr == pytest.approx(math.sqrt(0.08))
    assert fit.intercept_stderr == pytest.approx(math.sqrt(0.88))
    assert fit.predict(10) == pytest.approx(8.2)
    assert fit.equation() == "y = 0.6x + 2.2, R² = 0.6000"


def test_linear_fit_reproduces_an_exact_line_like_the_tor_seed():
    sizes = np.array([64, 128, 256, 512, 1024, 1280, 1518])
    fit = linear_fit(sizes, 0.008 * sizes + 1.5)  # 8 ns/byte at 1 GbE, in µs
    assert fit.slope == pytest.approx(0.008)
    assert fit.intercept == pytest.approx(1.5)
    assert fit.r_squared == pytest.approx(1.0)
    assert fit.slope_stderr == pytest.approx(0.0, abs=1e-12)
    assert linear_fit([1, 2, 3], [3, 2, 1]).equation() == "y = -1x + 4, R² = 1.0000"


def test_linear_fit_rejects_degenerate_input():
    with pytest.raises(ValueError, match="at least 3"):
        linear_fit([1, 2], [1, 2])
    with pytest.raises(ValueError, match="x are equal"):
        linear_fit([2, 2, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="differ in length"):
        linear_fit([1, 2, 3], [1, 2])


def test_multiple_fit_hand_example():
    # 2×2 factorial design: b1 = ((3−1)+(7−4))/2, b2 = ((4−1)+(7−3))/2, b0 = ȳ − b1/2 − b2/2.
    fit = multiple_fit([0, 1, 0, 1], [0, 0, 1, 1], [1, 3, 4, 7])
    assert (fit.intercept, fit.b1, fit.b2) == pytest.approx((0.75, 2.5, 3.5))
    # residuals ±0.25 → SSE 0.25; SST 18.75.
    assert fit.r_squared == pytest.approx(1 - 0.25 / 18.75)
    assert fit.adjusted_r_squared == pytest.approx(1 - (0.25 / 18.75) * 3 / 1)
    # s² = 0.25/(4 − 3); (XᵀX)⁻¹ diagonal = (3/4, 1, 1).
    assert fit.intercept_stderr == pytest.approx(math.sqrt(0.25 * 0.75))
    assert fit.b1_stderr == pytest.approx(0.5)
    assert fit.b2_stderr == pytest.approx(0.5)
    assert fit.predict(1, 1) == pytest.approx(6.75)


def test_multiple_fit_exact_plane_and_collinear_regressors():
    x1 = np.array([64, 512, 1518, 64, 512, 1518, 256])
    x2 = np.array([10, 10, 10, 50, 50, 100, 30])
    fit = multiple_fit(x1, x2, 1.0 + 0.008 * x1 + 0.16 * x2)
    assert (fit.intercept, fit.b1, fit.b2) == pytest.approx((1.0, 0.008, 0.16))
    assert fit.r_squared == pytest.approx(1.0)
    with pytest.raises(ValueError, match="collinear"):
        multiple_fit([1, 2, 3, 4], [2, 4, 6, 8], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="at least 4"):
        multiple_fit([1, 2, 3], [1, 0, 1], [1, 2, 3])
