"""What a simulation produced: time series sampled at a fixed interval, and counters.

Series names carry their unit (`source/S1/offered_bytes` is cumulative bytes,
`source/S1/rate_bps` the regulated rate, `switch/s1/port/5/queue_bytes` the bytes queued
at that instant). `rate_bps(name)` turns a cumulative byte series into bit/s per
interval; `between(name, t0, t1)` is what a cumulative series grew by in a window.
`write_csv` writes every table with units in the column names.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class Results:
    """Counters and series of one run."""

    times_ns: np.ndarray
    series: dict[str, np.ndarray]
    sources: dict[str, dict[str, Any]]
    flows: dict[str, dict[str, Any]]
    hosts: dict[str, dict[str, Any]]
    links: list[dict[str, Any]]
    switches: dict[str, dict[str, int]]
    run: dict[str, int]
    tcp: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_native(cls, times_ns: list[int], series: Mapping[str, list[float]],
                    **tables: Any) -> Results:
        """Results from the native simulator's lists and dicts."""
        return cls(times_ns=np.asarray(times_ns, dtype=np.int64),
                   series={k: np.asarray(v, dtype=float) for k, v in series.items()},
                   **{k: (dict(v) if isinstance(v, Mapping) else list(v))
                      for k, v in tables.items()})

    @property
    def interval_ns(self) -> int:
        """The sampling interval, ns (0 when fewer than two samples)."""
        return int(self.times_ns[1] - self.times_ns[0]) if self.times_ns.size > 1 else 0

    def _index(self, t_ns: int) -> int:
        i = int(np.searchsorted(self.times_ns, t_ns))
        if i >= self.times_ns.size or self.times_ns[i] != t_ns:
            raise ValueError(f"{t_ns} ns is not a sample time (interval {self.interval_ns} ns)")
        return i

    def between(self, name: str, t0_ns: int, t1_ns: int) -> float:
        """How much cumulative series ``name`` grew from ``t0_ns`` to ``t1_ns`` (sample times)."""
        values = self.series[name]
        return float(values[self._index(t1_ns)] - values[self._index(t0_ns)])

    def rate_bps(self, name: str) -> np.ndarray:
        """A cumulative byte series as bit/s over each interval (one value fewer than samples)."""
        values = self.series[name]
        return np.diff(values) * 8 * NS_PER_S / self.interval_ns

    def names(self, prefix: str, suffix: str = "") -> list[str]:
        """Series names that start with ``prefix`` and end with ``suffix``."""
        return [n for n in self.series if n.startswith(prefix) and n.endswith(suffix)]

    def write_csv(self, directory: str | Path) -> list[Path]:
        """Writes series.csv, sources.csv, flows.csv, hosts.csv, links.csv, switches.csv,
        run.csv and, with TCP flows, tcp.csv into ``directory``; returns their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        rows = [{"time_ns": int(t), **{k: _cell(v[i]) for k, v in self.series.items()}}
                for i, t in enumerate(self.times_ns)]
        paths.append(_write(out / "series.csv", ["time_ns", *self.series], rows))
        for name, table, key in (("sources", self.sources, "source"),
                                 ("flows", self.flows, "source"),
                                 ("hosts", self.hosts, "host"),
                                 ("switches", self.switches, "switch")):
            rows = [{key: k, **_with_units(v)} for k, v in table.items()]
            paths.append(_write(out / f"{name}.csv", _header(rows, key), rows))
        rows = [{"from": link["from"], "to": link["to"], "rate_bps": link["rate_bps"],
                 **{f"{kind}_frames": n for kind, n in link["frames"].items()},
                 **{f"{kind}_bytes": n for kind, n in link["bytes"].items()}}
                for link in self.links]
        paths.append(_write(out / "links.csv", _header(rows, "from"), rows))
        paths.append(_write(out / "run.csv", list(_with_units(self.run)),
                            [_with_units(self.run)]))
        if self.tcp:
            rows = [{"flow": k, **v} for k, v in self.tcp.items()]
            paths.append(_write(out / "tcp.csv", _header(rows, "flow"), rows))
        return paths


#: Counter names whose unit is not in the name already.
_UNITS = {"held": "held_times", "flow": "flow_id", "tag": "tag_cpid", "gaps": "gaps_frames",
          "reordered": "reordered_frames", "end_ns": "end_ns", "events": "events",
          "frame_hops": "frame_hops", "seed": "seed", "host": "host"}


def _with_units(row: Mapping[str, Any]) -> dict[str, Any]:
    return {_UNITS.get(k, k): v for k, v in row.items()}


def _header(rows: list[dict[str, Any]], key: str) -> list[str]:
    names = [key]
    for row in rows:
        names.extend(k for k in row if k not in names)
    return names


def _cell(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _write(path: Path, header: list[str], rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path
