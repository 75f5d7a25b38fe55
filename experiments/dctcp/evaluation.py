"""Figures from cell results: one row per cell (units in the column names), the queries'
completion times summarised (analysis.stats)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bufferlab.experiments.dctcp.backend import INCAST, CellResult

Row = dict[str, Any]


def cell_row(result: CellResult) -> Row:
    """A cell as one row: throughput against capacity, the queue against K, drops and
    marks, and for incast cells the queries' completion times and timeouts."""
    cell, c = result.cell, result.cell.config
    qcts = [q.qct_ns for q in result.queries if q.qct_ns is not None]
    row: Row = {
        "algorithm": cell.algorithm,
        "kind": cell.kind,
        "senders": cell.senders,
        "bottleneck_bps": result.bottleneck_bps,
        "utilisation": result.bottleneck_bps / c.frame_capacity_bps,
        "long_goodput_bps": result.long_goodput_bps,
        "k_bytes": c.k_bytes,
        "queue_mean_bytes": result.queue.mean,
        "queue_p50_bytes": result.queue.p50,
        "queue_p95_bytes": result.queue.p95,
        "queue_p99_bytes": result.queue.p99,
        "queue_max_sampled_bytes": result.queue.max,
        "queue_mean_over_k": result.queue.mean / c.k_bytes,
        "max_queue_bytes": result.max_queue_bytes,
        "buffer_bytes": c.pool_bytes,
        "drops_frames": result.drops_frames,
        "ecn_marked_frames": result.marked_frames,
        "long_timeouts": result.long_timeouts,
        "queries": len(result.queries),
        "queries_unfinished": sum(q.qct_ns is None for q in result.queries),
        "queries_with_timeouts": sum(q.timeouts > 0 for q in result.queries),
        "response_timeouts": sum(q.timeouts for q in result.queries),
        "response_retransmits": sum(q.retransmits for q in result.queries),
        "qct_median_us": float(np.median(qcts)) / 1e3 if qcts else "",
        "qct_p99_us": float(np.percentile(qcts, 99)) / 1e3 if qcts else "",
        "qct_max_us": max(qcts) / 1e3 if qcts else "",
        "wall_s": round(result.wall_s, 3),
    }
    if cell.kind != INCAST:
        for key in ("queries", "queries_unfinished", "queries_with_timeouts",
                    "response_timeouts", "response_retransmits"):
            row[key] = ""
    return row


def find(rows: list[Row], algorithm: str, kind: str, senders: int = 0) -> Row | None:
    """The row of one cell, None if it did not run."""
    return next((r for r in rows if (r["algorithm"], r["kind"], r["senders"])
                 == (algorithm, kind, senders)), None)
