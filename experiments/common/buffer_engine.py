"""p4src/buffer_switch.p4 on the in-process engine, programmed from parameters.

Writes what p4src/README.md asks of a controller (switch parameters, forwarding, the
all-ports multicast group and the clone sessions) straight into an `Engine`, so a
virtual-time experiment needs no P4Runtime server. Live runs use `bufferlab-ctl` instead.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "buffer_switch.p4"
FLOOD_GROUP = 1
PORT_SESSION_BASE = 1
ALL_PORTS_SESSION = 1000
# The traffic manager's own pool is made this much larger than the P4 pool so that only the
# program's admission drops frames (a frame the manager dropped after admission would never
# leave the occupancy registers, p4src/README.md).
TM_POOL_FACTOR = 2
ETHERNET_WIRE_OVERHEAD_BYTES = 24


@functools.cache
def compiled_program(path: Path = PROGRAM) -> str:
    """BMv2 JSON text of a P4 program compiled by bufferlab-p4c (once per process)."""
    document, _p4info = compile_p4(path)
    return json.dumps(document)


def host_mac(switch_id: int, port: int) -> str:
    """The tutorials' MAC of the host on ``port`` of switch ``switch_id``: 08:00:00:00:<sw>:<host>."""
    return f"08:00:00:00:{switch_id:02x}:{port:02x}"


@dataclass(frozen=True)
class BufferSwitchSetup:
    """What a controller would write into buffer_switch.p4, plus the engine's port model.

    ``hosts`` maps a port to its host's MAC (an ``l2_forward`` entry each);
    ``threshold_pct`` gives ports a static share of the pool (percent 1–100);
    ``rate_bps`` shapes ports (bit/s on the wire, ``wire_overhead_bytes`` per frame besides
    the frame: preamble 8 + gap 12 + FCS 4, which Linux frames exclude); ports not listed
    keep the engine's defaults (unlimited rate, 100 % share).
    """

    pool_bytes: int
    hosts: Mapping[int, str]
    threshold_pct: Mapping[int, int] = field(default_factory=dict)
    rate_bps: Mapping[int, int] = field(default_factory=dict)
    switch_id: int = 1
    wire_overhead_bytes: int = ETHERNET_WIRE_OVERHEAD_BYTES

    def __post_init__(self) -> None:
        if not 1 <= self.pool_bytes <= 0xFFFFFFFF:
            raise ValueError(f"pool_bytes: {self.pool_bytes} is outside 1..4294967295 bytes")
        for port, pct in self.threshold_pct.items():
            if not 1 <= pct <= 100:
                raise ValueError(f"threshold_pct[{port}]: {pct} is outside 1..100 %")
        for port, rate in self.rate_bps.items():
            if rate <= 0:
                raise ValueError(f"rate_bps[{port}]: {rate} bit/s must be positive")


def programmed_engine(setup: BufferSwitchSetup, seed: int = 0,
                      program_json: str | None = None) -> Engine:
    """A fresh engine running buffer_switch.p4 (or ``program_json``) set up as ``setup`` says."""
    engine = Engine(program_json or compiled_program(), seed=seed,
                    pool_bytes=TM_POOL_FACTOR * setup.pool_bytes)
    ports = sorted(set(setup.hosts) | set(setup.threshold_pct) | set(setup.rate_bps))
    engine.mc_group_set(FLOOD_GROUP, [(p, 0) for p in ports])
    for port in ports:
        engine.clone_session_set(PORT_SESSION_BASE + port, port=port)
    engine.clone_session_set(ALL_PORTS_SESSION, mcast_grp=FLOOD_GROUP)
    engine.table_set_default("switch_config", "set_switch", {
        "switch_id": setup.switch_id, "pool_bytes": setup.pool_bytes,
        "port_session_base": PORT_SESSION_BASE, "all_ports_session": ALL_PORTS_SESSION})
    engine.table_set_default("l2_forward", "flood", {"group": FLOOD_GROUP})
    for port, mac in setup.hosts.items():
        engine.table_add("l2_forward", {"dst_addr": mac}, "l2_to_port", {"port": port})
    for port, pct in setup.threshold_pct.items():
        engine.table_add("buffer_threshold", {"port": port}, "static_threshold", {"percent": pct})
    for port, rate in setup.rate_bps.items():
        engine.configure_port(port, rate_bps=rate, wire_overhead_bytes=setup.wire_overhead_bytes)
    return engine


def tm_drops(engine: Engine) -> int:
    """Frames the engine's traffic manager dropped (0 when the P4 admission did all dropping)."""
    return int(engine.stats()["dropped_by_tm"])
