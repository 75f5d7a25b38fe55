"""Figures from trials: one row per trial in the seed's table form, with the seed's row
beside it, the buffer against the BDP and the throughput against the background's share."""

from __future__ import annotations

from typing import Any

from bufferlab.experiments.esnet_buffer.backend import Trial
from bufferlab.experiments.esnet_buffer.config import (
    FRAME_BYTES,
    FRAME_WIRE_BYTES,
    SEED_BUFFER,
    SEED_HOLD,
    SEED_HOLD_PACED,
    SEED_PACED,
    UDP_FRAME_BYTES,
    SeedRow,
    bdp_bytes,
)

Row = dict[str, Any]


def share_bps(link_bps: int, background_bps: int) -> int:
    """What the background leaves TCP of the link, bit/s."""
    return link_bps - background_bps


def paced_wire_bps(paced_bps: int) -> float:
    """A paced rate as the link counts it: HTB counts a frame's 9014 Linux bytes, the link
    also its 24 bytes of preamble, gap and FCS."""
    return paced_bps * FRAME_WIRE_BYTES / FRAME_BYTES


def burst_s(burst_frames: int, link_bps: int) -> float:
    """How long one burst of the background holds the link, s (0 unshaped)."""
    return 8 * burst_frames * UDP_FRAME_BYTES / link_bps if link_bps else 0.0


def pacing_limit_bps(share: int, held_bytes: int, burst: float) -> float:
    """The fastest pacing that loses nothing: the share the background leaves, or less when
    the background comes in bursts. A burst holds the link for ``burst`` s, and meanwhile
    every paced frame queues; ``held_bytes`` of buffer absorb a rate of held × 8 / burst."""
    if burst <= 0:
        return float(share)
    return min(float(share), 8 * held_bytes / burst)


def seed_row(table: str, background_bps: int, setting: int) -> SeedRow | None:
    """The seed's row for a trial's table and setting, None where the seed has none."""
    rows: tuple[SeedRow, ...] = ()
    if table.startswith("buffer_") and background_bps == 2_000_000_000:
        rows = SEED_BUFFER
    elif table.startswith("paced_"):
        rows = SEED_PACED.get(background_bps, ())
    elif table == "hold":
        rows = SEED_HOLD
    elif table == "hold_paced":
        rows = SEED_HOLD_PACED
    return next((r for r in rows if r.setting == setting), None)


def trial_row(trial: Trial, k: float) -> Row:
    """A trial as one row of its table; units in the column names."""
    s = trial.spec
    background_seed = round(s.background_bps / k)
    seed = seed_row(s.table, background_seed, s.seed_setting)
    held = s.buffer_bytes if s.buffer_bytes is not None else (s.hold_packets or 0) * FRAME_BYTES
    throughput = trial.iperf.received_bps if trial.iperf else 0.0
    share = share_bps(s.link_bps, s.background_bps)
    burst = burst_s(s.background_burst_frames, s.link_bps)
    limit = pacing_limit_bps(share, held, burst)
    return {
        "table": s.table,
        "seed_setting": s.seed_setting,
        "seed_background_bps": background_seed,
        "congestion": s.congestion,
        "live_buffer_bytes": s.buffer_bytes if s.buffer_bytes is not None else "",
        "live_hold_packets": s.hold_packets if s.hold_packets is not None else "",
        "buffer_over_bdp": held / bdp_bytes(s.link_bps),
        "live_send_bps": s.send_bps,
        "live_background_bps": s.background_bps,
        "live_share_bps": share,
        "background_burst_frames": s.background_burst_frames,
        "background_burst_s": burst,
        "pacing_limit_bps": limit,
        "paced_wire_over_limit": paced_wire_bps(s.send_bps) / limit if limit else 0.0,
        "admission_drops_frames": trial.accounting.admission_drops,
        "tcp_retransmits_segments": trial.iperf.retransmits if trial.iperf else 0,
        "tcp_timeouts": "" if trial.tcp_timeouts is None else trial.tcp_timeouts,
        "tcp_throughput_bps": throughput,
        "tcp_throughput_seed_scale_bps": throughput / k,
        "tcp_throughput_over_share": throughput / share,
        "udp_sent_frames": trial.udp_sent_frames,
        "udp_received_frames": trial.udp_received_frames,
        "seed_drops_packets": "" if seed is None else _range(seed.drops),
        "seed_tcp_throughput_bps": "" if seed is None else seed.throughput_bps,
        "valid": trial.accounting.valid,
        "accounting": trial.accounting.describe(),
        "reruns": len(trial.reruns),
    }


def _range(drops: tuple[int, int]) -> str:
    low, high = drops
    return str(low) if low == high else f"{low}-{high}"


def tables(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows grouped by table, in run order."""
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r["table"], []).append(r)
    return out
