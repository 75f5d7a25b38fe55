"""RFC 2544 section 26 procedures: throughput, latency, back-to-back, frame loss rate.

Loads are fractions of one source port's line rate; with N sources the device sees N
times the load of one port (N-into-one, as in the ToR study's two ports at 50 %).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bufferlab.traffic.generate import line_rate_bps
from bufferlab.traffic.records import latency_stats
from bufferlab.traffic.rfc2544.tester import Tester, TrialResult

# Trials whose sources strayed too far from their schedule are run again at most this often.
_PACING_REPEATS = 3


def _passes(trial: TrialResult, loss_tolerance: float) -> bool:
    return trial.loss_ratio <= loss_tolerance


def _paced_trial(tester: Tester, frame_size: int, load: float, trial_s: float, wait_s: float,
                 max_late_s: float | None) -> tuple[TrialResult, int]:
    """A rate trial, repeated while a source ran more than ``max_late_s`` behind schedule
    (its catch-up burst is not the constant load the trial stands for); returns the trial
    and how many runs it took."""
    runs = 0
    while True:
        runs += 1
        t = tester.trial(frame_size, load=load, duration_s=trial_s, wait_s=wait_s)
        if max_late_s is None or t.max_late_ns <= max_late_s * 1e9 or runs > _PACING_REPEATS:
            return t, runs


@dataclass(frozen=True)
class ThroughputResult:
    """Highest load per port without loss (RFC 2544 26.1) at one frame size."""

    frame_size: int
    ports: int
    load: float
    port_fps: float
    total_fps: float
    total_rate_bps: float
    max_port_fps: float
    trials: int
    trial_s: float
    resolution: float
    repeated_trials: int = 0

    def row(self) -> dict:
        """The RFC's reporting form, one row (units in column names)."""
        return {
            "frame_size_bytes": self.frame_size,
            "ports": self.ports,
            "load_per_port_pct": round(100 * self.load, 4),
            "throughput_per_port_fps": round(self.port_fps, 1),
            "throughput_total_fps": round(self.total_fps, 1),
            "throughput_total_line_bps": round(self.total_rate_bps),
            "theoretical_max_per_port_fps": round(self.max_port_fps, 1),
            "resolution_pct": 100 * self.resolution,
            "trial_s": self.trial_s,
            "trials": self.trials,
            "repeated_trials_late_source": self.repeated_trials,
        }


def throughput(
    tester: Tester,
    frame_size: int,
    trial_s: float = 60.0,
    resolution: float = 0.001,
    min_load: float = 0.0,
    max_load: float = 1.0,
    loss_tolerance: float = 0.0,
    wait_s: float = 2.0,
    max_late_s: float | None = None,
    confirm_losses: int = 0,
) -> ThroughputResult:
    """Binary search for the highest per-port load with no loss, to within ``resolution``
    (a fraction of line rate); the first trial is at ``max_load``. With ``max_late_s``, a
    trial in which a source fell further behind its schedule is run again (up to 3 times):
    a late source's catch-up burst can overflow a queue the steady load would not. With
    ``confirm_losses`` = k, a load counts as lossy only if k more trials at it lose too: on
    a shared host one stall can drop frames at any load, and a single such trial would
    otherwise send the search below the real throughput for good."""
    if not 0 <= min_load < max_load:
        raise ValueError(f"need 0 <= min_load < max_load, got {min_load}, {max_load}")
    if not resolution > 0:
        raise ValueError(f"resolution must be positive, got {resolution}")
    if confirm_losses < 0:
        raise ValueError(f"confirm_losses must be 0 or more, got {confirm_losses}")
    trials = 0
    runs = 0

    def passes(load: float) -> bool:
        """Trials at ``load`` until one loses no more than allowed, at most 1 + confirm_losses."""
        nonlocal trials, runs
        for _ in range(1 + confirm_losses):
            t, n = _paced_trial(tester, frame_size, load, trial_s, wait_s, max_late_s)
            trials += 1
            runs += n
            if _passes(t, loss_tolerance):
                return True
        return False

    if passes(max_load):
        best = max_load
    else:
        good, bad = min_load, max_load
        while bad - good > resolution:
            mid = (good + bad) / 2
            if passes(mid):
                good = mid
            else:
                bad = mid
        best = good
    port_fps = best * tester.max_fps(frame_size)
    n = len(tester.sources)
    return ThroughputResult(
        frame_size=frame_size, ports=n, load=best, port_fps=port_fps, total_fps=n * port_fps,
        total_rate_bps=n * line_rate_bps(port_fps, frame_size),
        max_port_fps=tester.max_fps(frame_size), trials=trials, trial_s=trial_s,
        resolution=resolution, repeated_trials=runs - trials,
    )


@dataclass(frozen=True)
class LatencyResult:
    """Latency at one load and frame size over repeated trials (RFC 2544 26.2)."""

    frame_size: int
    ports: int
    load: float
    trials: int
    trial_s: float
    tagged_avg_ns: float | None
    avg_ns: float
    min_ns: int
    max_ns: int
    p50_ns: int
    p99_ns: int
    lost_frames: int
    kernel_tx_fraction: float

    def row(self) -> dict:
        """The RFC's reporting form, one row (units in column names)."""
        return {
            "frame_size_bytes": self.frame_size,
            "ports": self.ports,
            "load_per_port_pct": round(100 * self.load, 4),
            "latency_tagged_avg_ns": None if self.tagged_avg_ns is None
            else round(self.tagged_avg_ns),
            "latency_avg_ns": round(self.avg_ns),
            "latency_min_ns": self.min_ns,
            "latency_max_ns": self.max_ns,
            "latency_p50_ns": self.p50_ns,
            "latency_p99_ns": self.p99_ns,
            "lost_frames": self.lost_frames,
            "kernel_tx_stamped_pct": round(100 * self.kernel_tx_fraction, 2),
            "trials": self.trials,
            "trial_s": self.trial_s,
        }


def latency(
    tester: Tester,
    frame_size: int,
    load: float,
    trial_s: float = 120.0,
    trials: int = 20,
    wait_s: float = 2.0,
) -> LatencyResult:
    """Latency at ``load`` per port: RFC 2544's tagged frame (the one sent half-way through
    each trial, from port 0) averaged over ``trials``, plus statistics of every frame.

    Latency = kernel RX time at the sink - kernel TX time at the source (the sender's
    header time where the kernel gave no TX stamp): both on the machine's one clock."""
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    tagged = []
    all_latencies = []
    lost = 0
    kernel = 0
    received = 0
    for _ in range(trials):
        t = tester.trial(frame_size, load=load, duration_s=trial_s, wait_s=wait_s,
                         tx_timestamps=True)
        lost += t.lost_frames
        lat = t.latencies_ns()
        all_latencies.append(lat)
        kernel += int(t.frames["tx_kernel"].sum())
        received += len(t.frames)
        port0 = t.ports[0]
        mid = port0.sent_frames // 2
        hit = (t.frames["flow"] == port0.flow) & (t.frames["seq"] == mid)
        if hit.any():
            tagged.append(float(lat[hit][0]))
    stats = latency_stats(np.concatenate(all_latencies))
    if stats is None:
        raise RuntimeError(f"no frame of {frame_size} bytes reached the sink at load {load}")
    return LatencyResult(
        frame_size=frame_size, ports=len(tester.sources), load=load, trials=trials,
        trial_s=trial_s, tagged_avg_ns=float(np.mean(tagged)) if tagged else None,
        avg_ns=stats.avg_ns, min_ns=stats.min_ns, max_ns=stats.max_ns, p50_ns=stats.p50_ns,
        p99_ns=stats.p99_ns,
        lost_frames=lost, kernel_tx_fraction=kernel / received if received else 0.0,
    )


@dataclass(frozen=True)
class BackToBackResult:
    """Longest loss-free burst per port (RFC 2544 26.4), one value per repetition."""

    frame_size: int
    ports: int
    bursts: list[int]
    max_burst: int
    trial_s: float

    @property
    def avg_frames(self) -> float:
        """Average longest burst per port over the repetitions, frames."""
        return float(np.mean(self.bursts))

    def row(self) -> dict:
        """The RFC's reporting form, one row (units in column names)."""
        return {
            "frame_size_bytes": self.frame_size,
            "ports": self.ports,
            "burst_avg_frames": round(self.avg_frames, 2),
            "burst_min_frames": min(self.bursts),
            "burst_max_frames": max(self.bursts),
            "burst_total_avg_frames": round(self.ports * self.avg_frames, 2),
            "search_limit_frames": self.max_burst,
            "repetitions": len(self.bursts),
            "trial_s": self.trial_s,
        }


def back_to_back(
    tester: Tester,
    frame_size: int,
    max_burst: int,
    repetitions: int = 50,
    trial_s: float = 2.0,
) -> BackToBackResult:
    """Per repetition, binary search for the longest burst (frames per port, all ports at
    once, from idle) with no loss; a trial lasts ``trial_s`` from the burst."""
    if max_burst < 1 or repetitions < 1:
        raise ValueError(f"need max_burst >= 1 and repetitions >= 1, got {max_burst}, "
                         f"{repetitions}")
    bursts = []
    for _ in range(repetitions):
        good, bad = 0, max_burst + 1
        probe = max_burst
        while bad - good > 1:
            if tester.trial(frame_size, burst_frames=probe, wait_s=trial_s).lost_frames == 0:
                good = probe
            else:
                bad = probe
            probe = (good + bad) // 2
        bursts.append(good)
    return BackToBackResult(frame_size, len(tester.sources), bursts, max_burst, trial_s)


@dataclass(frozen=True)
class FrameLossPoint:
    """Loss at one offered load (RFC 2544 26.3)."""

    frame_size: int
    ports: int
    load: float
    offered_fps: float
    sent_frames: int
    received_frames: int
    trial_s: float

    @property
    def loss_pct(self) -> float:
        """(sent - received) * 100 / sent."""
        return 100 * (self.sent_frames - self.received_frames) / self.sent_frames \
            if self.sent_frames else 0.0

    def row(self) -> dict:
        """The RFC's reporting form, one row (units in column names)."""
        return {
            "frame_size_bytes": self.frame_size,
            "ports": self.ports,
            "load_per_port_pct": round(100 * self.load, 4),
            "offered_total_fps": round(self.offered_fps, 1),
            "sent_frames": self.sent_frames,
            "received_frames": self.received_frames,
            "frame_loss_pct": round(self.loss_pct, 4),
            "trial_s": self.trial_s,
        }


def frame_loss(
    tester: Tester,
    frame_size: int,
    trial_s: float = 60.0,
    step: float = 0.1,
    start_load: float = 1.0,
    wait_s: float = 2.0,
) -> list[FrameLossPoint]:
    """Loss at ``start_load``, then ``step`` lower each trial, until two consecutive trials
    lose nothing (or the load reaches zero)."""
    if not 0 < step <= start_load:
        raise ValueError(f"need 0 < step <= start_load, got {step}, {start_load}")
    points = []
    clean = 0
    k = 0
    while clean < 2:
        load = start_load - k * step
        if load <= 1e-9:
            break
        t = tester.trial(frame_size, load=load, duration_s=trial_s, wait_s=wait_s)
        n = len(tester.sources)
        points.append(FrameLossPoint(frame_size, n, load, n * load * tester.max_fps(frame_size),
                                     t.sent_frames, t.received_frames, trial_s))
        clean = clean + 1 if t.lost_frames == 0 else 0
        k += 1
    return points
