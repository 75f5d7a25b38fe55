"""The ToR switch as the controller configures it: `experiments/configs/seed000_tor_static.json`
with the run's pool, tester ports and port C's threshold.

Both backends program the switch from this config, the virtual one through an in-process
P4Runtime server, the live one over bufferlab-switch's, so a cell's entries are the same.
"""

from __future__ import annotations

from pathlib import Path

from bufferlab.controller.config import Config, parse_config
from bufferlab.experiments.common.buffer_engine import host_mac
from bufferlab.experiments.tor_switch.config import TorConfig

SWITCH_ID = 1
SEED000_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "seed000_tor_static.json"


def switch_config(config: TorConfig, threshold_pct: int) -> Config:
    """Hosts A, B, C on their ports (an `l2` entry each), the run's pool, and port C's static
    share of it at ``threshold_pct`` %; A and B keep the switch-wide 100 %."""
    ports = (config.port_a, config.port_b, config.port_c)
    return parse_config({
        "switch_id": SWITCH_ID,
        "pool_bytes": config.pool_bytes,
        "ports": {str(p): ({"threshold": f"{threshold_pct}%"} if p == config.port_c else {})
                  for p in ports},
        "forwarding": {"l2": [{"mac": host_mac(SWITCH_ID, p), "port": p} for p in ports]},
    })
