"""A cell as a scenario file (`experiments/scenario`'s format), the one description both
backends read.

```
 snd 10.0.S.1 ─ p1 [sS] p2 ─ rcv 10.0.S.2      bottleneck: sS's port 2, rate R
 udp 10.0.S.3 ─ p3                             (the P4 admission caps its queue)
```

`snd`'s link runs at `nic_factor` × R (its NIC: the queue forms in the switch), `rcv`'s
and `udp`'s at R; a quarter of the RTT on `snd`'s and on `rcv`'s link, each way (the
simulator's meaning of a link's delay; `live_net` folds it onto the switch's side).
The TCP flows are `linux-today` bulk flows starting after the lead; the background is a
constant source that sends each tick's frames back to back at R (`on_ns` holds exactly
that many frames, `off_ns` the rest of the tick).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bufferlab.experiments.tcp_validation.config import (
    FRAME_BYTES,
    FRAME_WIRE_BYTES,
    MSS_BYTES,
    MTU_BYTES,
    PROFILE,
    Cell,
    ValidationConfig,
)

NS_PER_S = 1_000_000_000
SENDER, RECEIVER, UDP_SENDER = "snd", "rcv", "udp"
#: Host -> its switch port.
PORTS = {SENDER: 1, RECEIVER: 2, UDP_SENDER: 3}
BOTTLENECK_PORT = PORTS[RECEIVER]
#: The switch's index: its name, device id, address plan and root-namespace interface
#: names (s61-eth1 ...), chosen apart from the other studies' (s16, s18, s41-s44).
SWITCH_INDEX = 61
#: The program's pool: larger than any buffer under test, so only the queue's cap binds.
POOL_BYTES = 16_000_000
#: The traffic manager's pool (both worlds: twice the program's, as the lab's engines).
TM_POOL_BYTES = 2 * POOL_BYTES
BACKGROUND = "background"
BACKGROUND_UDP_PORT = 5001
WIRE_OVERHEAD_BYTES = FRAME_WIRE_BYTES - FRAME_BYTES


def switch_name(index: int = SWITCH_INDEX) -> str:
    """`s61`: the cell's switch."""
    return f"s{index}"


def host_mac(host: str, index: int = SWITCH_INDEX) -> str:
    """The tutorials' plan: 08:00:00:00:<switch>:<port> (hex)."""
    return f"08:00:00:00:{index:02x}:{PORTS[host]:02x}"


def host_ip(host: str, index: int = SWITCH_INDEX) -> str:
    """10.0.<switch>.<port>."""
    return f"10.0.{index}.{PORTS[host]}"


def switch_config(cell: Cell, index: int = SWITCH_INDEX) -> dict[str, Any]:
    """The controller's config (`bufferlab-ctl apply` form): L2 to each host's port, the
    pool, and the bottleneck queue's cap."""
    ports: dict[str, Any] = {str(p): {} for p in PORTS.values()}
    ports[str(BOTTLENECK_PORT)] = {"queue_caps_bytes": {"0": cell.buffer_bytes}}
    return {"switch_id": index, "pool_bytes": POOL_BYTES, "ports": ports,
            "forwarding": {"l2": [{"mac": host_mac(h, index), "port": p}
                                  for h, p in PORTS.items()]}}


def background_source(cell: Cell, config: ValidationConfig) -> dict[str, Any]:
    """The bursty UDP background: each tick's frames back to back at R."""
    tick_ns = round(config.background_timer_ms * 1_000_000)
    frame_ns = FRAME_WIRE_BYTES * 8 * NS_PER_S / cell.rate_bps
    mean_bps = config.background_share * cell.rate_bps
    frames = max(1, round(mean_bps * tick_ns / NS_PER_S / (8 * FRAME_WIRE_BYTES)))
    on_ns = math.ceil(frames * frame_ns)
    if on_ns >= tick_ns:
        raise ValueError(f"background: {frames} frames a tick take {on_ns} ns at "
                         f"{cell.rate_bps} bit/s, more than the {tick_ns}-ns tick")
    return {"name": BACKGROUND, "host": UDP_SENDER, "destination": RECEIVER,
            "pattern": "constant", "rate_bps": cell.rate_bps, "sizes_bytes": FRAME_BYTES,
            "on_ns": on_ns, "off_ns": tick_ns - on_ns,
            "udp_ports": [BACKGROUND_UDP_PORT, BACKGROUND_UDP_PORT]}


def cell_scenario(cell: Cell, config: ValidationConfig,
                  index: int = SWITCH_INDEX) -> dict[str, Any]:
    """The cell as a scenario (parsed JSON); its switch's config is the file
    `<switch>.json` beside it (`write_cell`)."""
    sw = switch_name(index)
    quarter = cell.rtt_ns // 4
    rates = {SENDER: config.nic_factor * cell.rate_bps, RECEIVER: cell.rate_bps,
             UDP_SENDER: cell.rate_bps}
    delays = {SENDER: quarter, RECEIVER: quarter, UDP_SENDER: 0}
    links = [{"a": h, "b": f"{sw}-p{p}", "rate_bps": rates[h], "delay_ns": delays[h],
              "wire_overhead_bytes": WIRE_OVERHEAD_BYTES, "mtu_bytes": MTU_BYTES}
             for h, p in PORTS.items()]
    lead_ns = config.lead_s * NS_PER_S
    flows = [{"name": f"tcp{i + 1}", "sender": SENDER, "receiver": RECEIVER,
              "profile": PROFILE, "mss_bytes": MSS_BYTES, "start_ns": lead_ns}
             for i in range(config.flows)]
    return {
        "comment": (f"TCP validation cell {cell.name}: {config.flows} {PROFILE} bulk "
                    f"flow(s) {SENDER} -> {RECEIVER} through {sw}, bottleneck port "
                    f"{BOTTLENECK_PORT} at {cell.rate_bps:,} bit/s, RTT "
                    f"{cell.rtt_ns / 1e6:g} ms, buffer {cell.buffer_bdp:g} x BDP = "
                    f"{cell.buffer_bytes:,} bytes"
                    + (", bursty UDP background" if cell.background else "")),
        "topology": {
            "hosts": {h: {"ip": f"{host_ip(h, index)}/24", "mac": host_mac(h, index)}
                      for h in PORTS},
            "switches": {sw: {"pool_bytes": TM_POOL_BYTES}},
            "links": links,
        },
        "switches": {sw: {"config": f"{sw}.json"}},
        "sources": [background_source(cell, config)] if cell.background else [],
        "tcp_flows": flows,
        "duration_ns": config.duration_s * NS_PER_S,
        "seed": config.seed,
    }


def write_cell(cell: Cell, config: ValidationConfig, directory: Path,
               index: int = SWITCH_INDEX) -> Path:
    """Writes the cell's scenario (`scenario.json`) and its switch's config into
    ``directory``; returns the scenario's path."""
    directory.mkdir(parents=True, exist_ok=True)
    sw = switch_name(index)
    (directory / f"{sw}.json").write_text(json.dumps(switch_config(cell, index), indent=1))
    path = directory / "scenario.json"
    path.write_text(json.dumps(cell_scenario(cell, config, index), indent=1))
    return path
