"""PNG figures in the style of the seeds' figures (Agg backend, no display needed).

Every axis label must name its unit in parentheses, e.g. ``time (ms)``,
``throughput (Gbit/s)``, ``Jain's fairness index (unitless)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)
import numpy as np  # noqa: E402

from bufferlab.analysis.regression import LinearFit, linear_fit  # noqa: E402

_UNIT = re.compile(r"\(([^()]+)\)\s*$")
FIGURE_SIZE_IN = (7.0, 4.2)
DPI = 120


def axis_unit(label: str) -> str:
    """The unit named at the end of an axis label; raises if the label names none."""
    m = _UNIT.search(label)
    if not m:
        raise ValueError(f"axis label {label!r} names no unit: end it with '(unit)'")
    return m.group(1)


def _new_axes(xlabel: str, ylabel: str, title: str | None) -> tuple[plt.Figure, plt.Axes]:
    axis_unit(xlabel)
    axis_unit(ylabel)
    fig, ax = plt.subplots(figsize=FIGURE_SIZE_IN, dpi=DPI)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: plt.Figure, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out


def plot_time_series(
    path: str | Path,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    reference_lines: Mapping[str, float] | None = None,
    log_y: bool = False,
    step: bool = False,
    y_range: tuple[float, float] | None = None,
) -> Path:
    """Lines of y against time, one per named series, with optional horizontal references
    (e.g. the target rate or a threshold); ``step`` draws sample-and-hold signals;
    ``y_range`` (low, high) shows only that band of y (a close-up of part of a signal)."""
    if y_range is not None and not y_range[0] < y_range[1]:
        raise ValueError(f"y_range {y_range}: need low < high")
    fig, ax = _new_axes(xlabel, ylabel, title)
    for name, (x, y) in series.items():
        if step:
            ax.step(x, y, where="post", label=name)
        else:
            ax.plot(x, y, label=name)
    for name, value in (reference_lines or {}).items():
        ax.axhline(value, linestyle="--", color="grey", linewidth=1)
        # On a light box above the lines, so a series running along the reference does not
        # hide its name.
        ax.annotate(name, (0.01, value), xycoords=("axes fraction", "data"),
                    textcoords="offset points", xytext=(0, 3), fontsize=8, color="dimgrey",
                    zorder=5, bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none",
                                    "pad": 1})
    if log_y:
        ax.set_yscale("log")
    if y_range is not None:
        ax.set_ylim(*y_range)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return _save(fig, path)


def plot_fits(
    path: str | Path,
    groups: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    title: str | None = None,
) -> dict[str, LinearFit]:
    """Scatter each group with its least-squares line and equation (``y = ax + b, R² = …``),
    as the ToR seed plots delay against packet size; returns the fits."""
    fig, ax = _new_axes(xlabel, ylabel, title)
    fits = {}
    for name, (x, y) in groups.items():
        fit = linear_fit(x, y)
        fits[name] = fit
        xs = np.asarray(x, dtype=float)
        points = ax.scatter(xs, y, s=14)
        line_x = np.array([xs.min(), xs.max()])
        ax.plot(line_x, fit.predict(line_x), color=points.get_facecolor()[0],
                label=f"{name}: {fit.equation()}")
    ax.legend(fontsize=8)
    _save(fig, path)
    return fits


def plot_bars(
    path: str | Path,
    labels: Sequence[str],
    values: Sequence[float],
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    reference: float | None = None,
) -> Path:
    """One bar per label (e.g. Jain's index per run), with an optional reference line."""
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    fig, ax = _new_axes(xlabel, ylabel, title)
    ax.bar(list(labels), list(values))
    if reference is not None:
        ax.axhline(reference, linestyle="--", color="grey", linewidth=1)
    ax.tick_params(axis="x", labelrotation=45)
    return _save(fig, path)


def plot_sweep(
    path: str | Path,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    vertical_lines: Mapping[str, float] | None = None,
    log_x: bool = False,
) -> Path:
    """A measured quantity against a swept setting: one line with markers per series, and
    vertical marks at named settings (e.g. the BDP rule's buffer)."""
    fig, ax = _new_axes(xlabel, ylabel, title)
    for name, (x, y) in series.items():
        ax.plot(x, y, marker="o", label=name)
    for name, value in (vertical_lines or {}).items():
        ax.axvline(value, linestyle="--", color="grey", linewidth=1)
        ax.annotate(name, (value, 0.98), xycoords=("data", "axes fraction"),
                    textcoords="offset points", xytext=(3, -10), fontsize=8, color="grey")
    if log_x:
        ax.set_xscale("log")
    if series:
        ax.legend(fontsize=8)
    return _save(fig, path)
