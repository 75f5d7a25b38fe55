"""Figures of one run, in the seeds' terms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bufferlab.analysis.fairness import deviation_summary, jain_index
from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.scenario import ScenarioRun
from bufferlab.sim import Results

NS_PER_S = 1_000_000_000
BIN_NS = 1_000_000
#: Seed 001's edge switches (B1, B2): their port 3 is the uplink, ports 1 and 2 the hosts.
EDGES = ("s2", "s3")


def _sum_between(results: Results, names: list[str], window: tuple[int, int]) -> int:
    return int(sum(results.between(n, *window) for n in names))


def link_rate_bps(results: Results, link: str, window: tuple[int, int], bin_ns: int = BIN_NS
                  ) -> np.ndarray:
    """A link's throughput in each ``bin_ns`` bin of ``window``, bit/s."""
    series = results.series[f"link/{link}/bytes"]
    times = results.times_ns
    edges = np.arange(window[0], window[1] + 1, bin_ns)
    at = np.searchsorted(times, edges)
    if at[-1] >= times.size or np.any(times[at] != edges):
        raise ValueError(f"bins of {bin_ns} ns over {window} do not fall on sample times")
    return np.diff(series[at]) * 8 * NS_PER_S / bin_ns


def switch_drops(run: ScenarioRun) -> int:
    """Frames dropped in switches: P4 admission (`port_drops`) and traffic managers."""
    admission = sum(cells.get("port_drops_frames", 0) for ports in run.ports.values()
                    for cells in ports.values())
    tm = sum(c["dropped_by_tm_frames"] for c in run.results.switches.values())
    return admission + tm


@dataclass(frozen=True)
class Run003:
    """Seed 003's figures of a run."""

    transmitted: int
    received: int
    dropped_at_rlq: int
    switch_drops: int
    egress_min_bps: float
    egress_mean_bps: float
    peak_queue_bytes: float = 0.0


def evaluate_003(run: ScenarioRun) -> Run003:
    """Counts in 5–95 ms, switch drops, the egress link's lowest 1-ms throughput and the
    congested queue's peak."""
    r = run.results
    sources = list(r.sources)
    window = st.WINDOW_003_NS
    egress = link_rate_bps(r, "s1-p5>ep4", (st.EGRESS_FROM_NS, window[1]))
    return Run003(
        transmitted=_sum_between(r, [f"source/{s}/offered_frames" for s in sources], window),
        received=_sum_between(r, [f"flow/{s}/received_frames" for s in sources], window),
        dropped_at_rlq=_sum_between(r, [f"source/{s}/dropped_frames" for s in sources], window),
        switch_drops=switch_drops(run),
        egress_min_bps=float(egress.min()),
        egress_mean_bps=float(egress.mean()),
        peak_queue_bytes=float(run.ports["s1"][5]["max_queue_bytes"]),
    )


@dataclass(frozen=True)
class Run001:
    """Seed 001's figures of a run: fairness over the four-source phase, drops, PAUSE."""

    rates_bps: dict[str, float]
    deviation_max: float
    deviation_min: float
    deviation_mean: float
    fairness_index: float
    switch_drops: int
    host_drops: int
    congested_link_bps: float
    edge_max_queue_bytes: dict[str, float]
    edge_pause_frames: dict[str, int]
    core_peak_queue_bytes: float = 0.0


def evaluate_001(run: ScenarioRun) -> Run001:
    """Per-source throughput at S5 over 5–85 ms against the fair share, Jain's index,
    drops, the congested link's throughput, per edge switch its uplink queue's peak and
    the PAUSE frames it sent its hosts, and the congested (core) queue's peak."""
    r = run.results
    window = st.WINDOW_001_NS
    seconds = (window[1] - window[0]) / NS_PER_S
    rates = {s: r.between(f"flow/{s}/received_bytes", *window) * 8 / seconds for s in r.sources}
    deviation = deviation_summary(rates.values(), st.FAIR_SHARE_BPS)
    congested = link_rate_bps(r, "s1-p3>h5", window, window[1] - window[0])
    return Run001(
        rates_bps=rates,
        deviation_max=deviation.max,
        deviation_min=deviation.min,
        deviation_mean=deviation.mean,
        fairness_index=jain_index(rates.values()),
        switch_drops=switch_drops(run),
        host_drops=sum(s["dropped_frames"] for s in r.sources.values()),
        congested_link_bps=float(congested[0]),
        edge_max_queue_bytes={e: float(run.ports[e][3]["max_queue_bytes"]) for e in EDGES},
        edge_pause_frames={e: sum(run.ports[e][p].get("pause_frames", 0) for p in (1, 2))
                           for e in EDGES},
        core_peak_queue_bytes=float(run.ports["s1"][3]["max_queue_bytes"]),
    )
