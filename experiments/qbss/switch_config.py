"""The QBSS switch as the controller configures it: `experiments/configs/seed002_qbss.json`
(DSCP 8 → queue 0, best effort → 1, DSCP 10 → 2; sender on port 1, receiver on port 2)
with the run's scheduler weights and per-class queue caps on the bottleneck port.

The controller writes the class map and the caps over P4Runtime and turns the weights into
the traffic manager's DRR quanta through the switch's runtime CLI
(`bufferlab.controller.scheduler`).
"""

from __future__ import annotations

import json
from pathlib import Path

from bufferlab.controller.config import Config, parse_config
from bufferlab.experiments.common.wire import FCS_BYTES, MAX_FRAME_BYTES

SEED002_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "seed002_qbss.json"
SWITCH_ID = 1
SENDER_PORT = 1
BOTTLENECK_PORT = 2
#: A full-size frame as the switch counts it (Ethernet header, 1500 bytes of IP, no FCS).
FULL_FRAME_BYTES = MAX_FRAME_BYTES - FCS_BYTES


def switch_config(weights_pct: tuple[int, ...], queue_cap_frames: int) -> Config:
    """seed002_qbss.json with the bottleneck port's scheduler weights (% of the port, by
    queue) and each class's queue capped at ``queue_cap_frames`` full-size frames."""
    raw = json.loads(SEED002_CONFIG.read_text())
    port = raw["ports"][str(BOTTLENECK_PORT)]
    queues = range(raw["priority_queues"])
    port["queue_caps_bytes"] = {str(q): queue_cap_frames * FULL_FRAME_BYTES for q in queues}
    port["scheduler"] = {str(q): f"{w}%" for q, w in zip(queues, weights_pct, strict=True)}
    return parse_config(raw, SEED002_CONFIG.parent)
