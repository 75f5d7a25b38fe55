"""The seeds' figures from one run's series."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bufferlab.analysis.plots import plot_time_series
from bufferlab.experiments.bcn import studies as st
from bufferlab.sim import Results

NS_PER_MS = 1e6
# Rates are averaged over this many samples (100 µs each) so that one 1500-byte frame
# more or less does not dominate the curve.
SMOOTH_SAMPLES = 5


def _ms(results: Results) -> np.ndarray:
    return results.times_ns / NS_PER_MS


def _rate(results: Results, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A cumulative byte series as Gbit/s over SMOOTH_SAMPLES samples."""
    values = results.series[name][::SMOOTH_SAMPLES]
    times = results.times_ns[::SMOOTH_SAMPLES]
    rate = np.diff(values) * 8 / np.diff(times)
    return times[1:] / NS_PER_MS, rate


def rate_while_sending(results: Results, source: str) -> tuple[str, np.ndarray]:
    """The source's regulated rate, Gbit/s, up to the sample after its last frame left
    (a source that has stopped and emptied its queue keeps a limiter that regulates nothing:
    its rate, drifting or not, is not shown), and its legend name (when it stopped, if it
    did before the run's end)."""
    rate = results.series[f"source/{source}/rate_bps"] / 1e9
    sent = results.series[f"source/{source}/sent_bytes"]
    changes = np.flatnonzero(np.diff(sent))
    last = int(changes[-1]) + 1 if changes.size else 0
    if last >= len(sent) - 1:
        return source, rate
    shown = rate.copy()
    shown[last + 1:] = np.nan
    return f"{source} (last frame {results.times_ns[last] / NS_PER_MS:.1f} ms)", shown


def regulator_rates(results: Results, path: Path, title: str,
                    fair_share_bps: float | None = None) -> Path:
    """Regulated (target) rate of each source against time while it sends, with the fair
    share if given."""
    t = _ms(results)
    series = dict(rate_while_sending(results, s) for s in results.sources)
    return plot_time_series(
        path, {name: (t, rate) for name, rate in series.items()},
        "time (ms)", "regulated rate (Gbit/s)", title,
        reference_lines={"fair share": fair_share_bps / 1e9} if fair_share_bps else None,
        step=True)


def queue(results: Results, series: str, path: Path, title: str,
          lines: dict[str, float] | None = None,
          y_range_kb: tuple[float, float] | None = None) -> Path:
    """A switch port's queue against time (only ``y_range_kb`` of it, if given)."""
    return plot_time_series(path, {"queue": (_ms(results), results.series[series] / 1e3)},
                            "time (ms)", "queue (KB)", title, reference_lines=lines,
                            y_range=y_range_kb)


def rlq(results: Results, path: Path, title: str) -> Path:
    """Each source's rate-limiter queue against time."""
    t = _ms(results)
    return plot_time_series(
        path, {s: (t, results.series[f"source/{s}/rlq_bytes"] / 1e3) for s in results.sources},
        "time (ms)", "rate-limiter queue (KB)", title)


def accepted(results: Results, path: Path, title: str) -> Path:
    """Each source's rate onto its link (the seed's "accepted load")."""
    return plot_time_series(
        path, {s: _rate(results, f"source/{s}/sent_bytes") for s in results.sources},
        "time (ms)", "accepted load (Gbit/s)", title)


def links(results: Results, names: dict[str, str], path: Path, title: str) -> Path:
    """Throughput of named link directions against time."""
    return plot_time_series(
        path, {label: _rate(results, f"link/{link}/bytes") for label, link in names.items()},
        "time (ms)", "throughput (Gbit/s)", title,
        reference_lines={"10 Gbit/s": st.LINK_BPS / 1e9})
