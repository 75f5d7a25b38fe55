"""Per-frame records of received generator traffic, their CSV form and their summaries.

One record per received frame carrying a bufferlab data header:

=============  ======================================================================
column         meaning
=============  ======================================================================
flow           flow id from the data header
seq            sequence number from the data header
size_bytes     Ethernet frame size *including* the 4-byte FCS (RFC 2544 convention)
dscp           DSCP of the IPv4 header as received (the frame's class)
tx_ns          send time, CLOCK_REALTIME ns: the sender's kernel software TX timestamp
               when ``tx_kernel`` is 1, else the data header's user-space stamp
tx_kernel      1 if ``tx_ns`` is a kernel TX timestamp
rx_ns          receive time, CLOCK_REALTIME ns: the kernel's software RX timestamp when
               ``rx_kernel`` is 1, else the time the receiver read the frame (the
               kernel stamps nothing for a moment after the first timestamping
               socket of the machine opens)
rx_kernel      1 if ``rx_ns`` is a kernel RX timestamp
latency_ns     rx_ns - tx_ns
=============  ======================================================================

Rates are line bit/s: each frame counts ``size_bytes + 20`` bytes (preamble/SFD and
inter-frame gap), the convention of RFC 2544 and of the generator.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# Bytes a frame occupies on the wire beyond its size incl. FCS: preamble/SFD 8 + gap 12.
WIRE_GAP_BYTES = 20

# Layout of the packed records the Rust receiver returns (little-endian, 32 bytes each).
RX_WIRE_DTYPE = np.dtype(
    {
        "names": ["tx_ns", "rx_ns", "seq", "flow", "size_bytes", "tos", "rx_kernel"],
        "formats": ["<u8", "<u8", "<u4", "<u2", "<u2", "u1", "u1"],
        "offsets": [0, 8, 16, 20, 22, 24, 25],
        "itemsize": 32,
    }
)
# Layout of the packed kernel TX timestamps the Rust sender returns (16 bytes each).
TX_STAMP_WIRE_DTYPE = np.dtype(
    {"names": ["kernel_tx_ns", "seq"], "formats": ["<u8", "<u4"], "offsets": [0, 8],
     "itemsize": 16}
)

FRAME_DTYPE = np.dtype(
    [
        ("flow", "u2"),
        ("seq", "u4"),
        ("size_bytes", "u2"),
        ("dscp", "u1"),
        ("tx_ns", "u8"),
        ("tx_kernel", "u1"),
        ("rx_ns", "u8"),
        ("rx_kernel", "u1"),
    ]
)
TX_STAMP_DTYPE = np.dtype([("flow", "u2"), ("seq", "u4"), ("kernel_tx_ns", "u8")])

CSV_COLUMNS = ["flow", "seq", "size_bytes", "dscp", "tx_ns", "tx_kernel", "rx_ns", "rx_kernel",
               "latency_ns"]
TX_STAMP_CSV_COLUMNS = ["flow", "seq", "kernel_tx_ns"]


def frames_from_receiver(raw: bytes) -> np.ndarray:
    """Turn the Rust receiver's packed records into a FRAME_DTYPE array (arrival order)."""
    wire = np.frombuffer(raw, dtype=RX_WIRE_DTYPE)
    out = np.empty(len(wire), dtype=FRAME_DTYPE)
    out["flow"] = wire["flow"]
    out["seq"] = wire["seq"]
    out["size_bytes"] = wire["size_bytes"]
    out["dscp"] = wire["tos"] >> 2
    out["tx_ns"] = wire["tx_ns"]
    out["tx_kernel"] = 0
    out["rx_ns"] = wire["rx_ns"]
    out["rx_kernel"] = wire["rx_kernel"]
    return out


def tx_stamps_from_sender(raw: bytes, flow: int) -> np.ndarray:
    """Turn the Rust sender's packed kernel TX timestamps of one flow into TX_STAMP_DTYPE."""
    wire = np.frombuffer(raw, dtype=TX_STAMP_WIRE_DTYPE)
    out = np.empty(len(wire), dtype=TX_STAMP_DTYPE)
    out["flow"] = flow
    out["seq"] = wire["seq"]
    out["kernel_tx_ns"] = wire["kernel_tx_ns"]
    return out


def latency_ns(frames: np.ndarray) -> np.ndarray:
    """Per-frame latency rx_ns - tx_ns in ns (signed, so clock trouble shows as negatives)."""
    return frames["rx_ns"].astype(np.int64) - frames["tx_ns"].astype(np.int64)


def _key(flow: np.ndarray, seq: np.ndarray) -> np.ndarray:
    return (flow.astype(np.uint64) << np.uint64(32)) | seq.astype(np.uint64)


def apply_tx_stamps(frames: np.ndarray, stamps: np.ndarray) -> int:
    """Replace tx_ns by the kernel TX timestamp where one exists for (flow, seq); return how many."""
    if len(frames) == 0 or len(stamps) == 0:
        return 0
    stamp_keys = _key(stamps["flow"], stamps["seq"])
    order = np.argsort(stamp_keys, kind="stable")
    sorted_keys = stamp_keys[order]
    frame_keys = _key(frames["flow"], frames["seq"])
    pos = np.searchsorted(sorted_keys, frame_keys)
    pos_clipped = np.minimum(pos, len(sorted_keys) - 1)
    hit = sorted_keys[pos_clipped] == frame_keys
    frames["tx_ns"][hit] = stamps["kernel_tx_ns"][order[pos_clipped[hit]]]
    frames["tx_kernel"][hit] = 1
    return int(hit.sum())


def write_frames_csv(frames: np.ndarray, path: str | Path) -> None:
    """Write per-frame records with the CSV_COLUMNS header."""
    lat = latency_ns(frames)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for rec, latency in zip(frames.tolist(), lat.tolist(), strict=True):
            w.writerow([*rec, latency])


def read_frames_csv(path: str | Path) -> np.ndarray:
    """Read per-frame records written by write_frames_csv."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != CSV_COLUMNS:
            raise ValueError(f"{path}: header {header} is not {CSV_COLUMNS}")
        rows = [tuple(int(v) for v in row[:-1]) for row in reader]
    return np.array(rows, dtype=FRAME_DTYPE)


def write_tx_stamps_csv(stamps: np.ndarray, path: str | Path) -> None:
    """Write kernel TX timestamps (flow, seq, kernel_tx_ns)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(TX_STAMP_CSV_COLUMNS)
        w.writerows(stamps.tolist())


def read_tx_stamps_csv(path: str | Path) -> np.ndarray:
    """Read kernel TX timestamps written by write_tx_stamps_csv."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != TX_STAMP_CSV_COLUMNS:
            raise ValueError(f"{path}: header {header} is not {TX_STAMP_CSV_COLUMNS}")
        rows = [tuple(int(v) for v in row) for row in reader]
    return np.array(rows, dtype=TX_STAMP_DTYPE)


@dataclass(frozen=True)
class IntervalThroughput:
    """Frames received in one interval [start_ns, start_ns + interval) and their line rate."""

    start_ns: int
    frames: int
    rate_bps: float


@dataclass(frozen=True)
class LatencyStats:
    """Latency distribution in ns (percentiles by nearest rank: observed values, not interpolations)."""

    min_ns: int
    avg_ns: float
    max_ns: int
    p50_ns: int
    p99_ns: int
    p999_ns: int


@dataclass(frozen=True)
class FlowSummary:
    """Loss, order and latency of one flow (or of all flows together, flow = None)."""

    flow: int | None
    sent_frames: int
    received_frames: int
    unique_frames: int
    duplicate_frames: int
    lost_frames: int
    loss_ratio: float
    reordered_frames: int
    latency: LatencyStats | None
    throughput: list[IntervalThroughput] = field(default_factory=list)


def nearest_rank(ordered: np.ndarray, num: int, den: int) -> int:
    """The num/den quantile of sorted values by nearest rank, in exact integer arithmetic."""
    rank = max(1, -(-len(ordered) * num // den))
    return int(ordered[rank - 1])


def latency_stats(latencies_ns: np.ndarray) -> LatencyStats | None:
    """Min/avg/max/p50/p99/p99.9 of latencies in ns; None when there are none."""
    if len(latencies_ns) == 0:
        return None
    ordered = np.sort(latencies_ns)
    p50, p99, p999 = (nearest_rank(ordered, num, den) for num, den in ((1, 2), (99, 100),
                                                                       (999, 1000)))
    return LatencyStats(
        min_ns=int(latencies_ns.min()),
        avg_ns=float(latencies_ns.mean()),
        max_ns=int(latencies_ns.max()),
        p50_ns=int(p50),
        p99_ns=int(p99),
        p999_ns=int(p999),
    )


def reordered_count(seqs: np.ndarray) -> int:
    """Frames that arrived after a frame with a higher sequence number (RFC 4737 sense)."""
    if len(seqs) < 2:
        return 0
    seen_max = np.maximum.accumulate(seqs.astype(np.int64))
    return int((seqs[1:].astype(np.int64) < seen_max[:-1]).sum())


def interval_throughput(frames: np.ndarray, interval_ns: int, start_ns: int | None = None
                        ) -> list[IntervalThroughput]:
    """Frames and line bit/s per interval of rx time, from start_ns (default: first arrival)."""
    if interval_ns <= 0:
        raise ValueError(f"interval_ns must be positive, got {interval_ns}")
    if len(frames) == 0:
        return []
    rx = frames["rx_ns"].astype(np.int64)
    origin = int(rx.min()) if start_ns is None else start_ns
    index = (rx - origin) // interval_ns
    index = index[index >= 0]
    bits = (frames["size_bytes"].astype(np.int64) + WIRE_GAP_BYTES) * 8
    bits = bits[(rx - origin) >= 0]
    n = int(index.max()) + 1 if len(index) else 0
    counts = np.bincount(index, minlength=n)
    bit_sums = np.bincount(index, weights=bits, minlength=n)
    return [
        IntervalThroughput(origin + i * interval_ns, int(counts[i]),
                           float(bit_sums[i]) * 1e9 / interval_ns)
        for i in range(n)
    ]


def _summarize(flow: int | None, frames: np.ndarray, sent: int | None,
               interval_ns: int | None) -> FlowSummary:
    unique = len(np.unique(frames["seq"])) if flow is not None else len(
        np.unique(_key(frames["flow"], frames["seq"])))
    if sent is None:
        # Without the sender's count, the span of sequence numbers seen stands in for it
        # (frames lost after the last one received are then invisible).
        sent = int(frames["seq"].max()) - int(frames["seq"].min()) + 1 if len(frames) else 0
    lost = max(sent - unique, 0)
    if flow is None:
        reordered = 0
        for f in np.unique(frames["flow"]):
            reordered += reordered_count(frames["seq"][frames["flow"] == f])
    else:
        reordered = reordered_count(frames["seq"])
    return FlowSummary(
        flow=flow,
        sent_frames=sent,
        received_frames=len(frames),
        unique_frames=unique,
        duplicate_frames=len(frames) - unique,
        lost_frames=lost,
        loss_ratio=lost / sent if sent else 0.0,
        reordered_frames=reordered,
        latency=latency_stats(latency_ns(frames)),
        throughput=interval_throughput(frames, interval_ns) if interval_ns else [],
    )


def summarize(
    frames: np.ndarray,
    sent_frames: Mapping[int, int] | None = None,
    interval_ns: int | None = None,
) -> tuple[FlowSummary, dict[int, FlowSummary]]:
    """Summaries of all frames together and per flow.

    ``sent_frames`` maps flow -> frames the sender reports sent; flows it names but that
    never arrived are summarised as fully lost.
    """
    sent_frames = dict(sent_frames or {})
    flows = sorted(set(np.unique(frames["flow"]).tolist()) | set(sent_frames))
    per_flow = {}
    for f in flows:
        sel = frames[frames["flow"] == f]
        per_flow[f] = _summarize(f, sel, sent_frames.get(f), interval_ns)
    total_sent = sum(s.sent_frames for s in per_flow.values())
    total = _summarize(None, frames, total_sent, interval_ns)
    return total, per_flow
