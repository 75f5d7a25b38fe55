"""The config keys the v1model program implements in P4, as Tofino TM settings.

On the TNA port (`p4src/tna/buffer_switch.p4`) the shared buffer, the thresholds, the
queue caps and PAUSE/PFC are the traffic manager's, so one config drives both programs:
`tm_plan` turns those keys into the `tofino_tm` section they stand for (BF Runtime's
`tf1.tm.*` tables, p4src/README.md "Tables on each target"), lays the config's explicit
`tofino_tm` section over it field by field, and renders the runtime CLI's `tm_*` lines.

    pool_bytes                 -> pool.cfg EG_APP_POOL_0 size_cells (rounded down)
    threshold "P%"             -> queue.buffer pool_max_cells = P % of the pool (rounded up)
    alpha                      -> queue.buffer dynamic_baf, the BAF nearest alpha
    queue_caps_bytes           -> queue.buffer pool_max_cells (with a static share: the lower)
    pause (802.3x)             -> port.flowcontrol mode_tx=PAUSE, pause_quanta;
                                  port.buffer ig_limit_cells (XOFF), ig_hysteresis_cells
                                  (XOFF - XON), skid_limit_cells
    pause (pfc)                -> port.flowcontrol mode_tx=PFC, pause_quanta; ppg.cfg per
                                  iCoS (= queue): guaranteed_cells (XOFF), hysteresis_cells,
                                  pfc_enable, pfc_skid_max_cells

Cells: a pool is memory, and no pool holds a part of a cell, so its size rounds down; a
limit of B bytes rounds up to the cells that hold B bytes (the TM stores a frame in whole
cells, so ⌈B/cell⌉ is the least space B bytes of frames need); the XON level rounds down,
so XON never comes while more than `xon_bytes` are held.

Where the config asks for what Tofino does another way, the plan carries a warning
naming the key and the reason (`TmPlan.warnings`); what cannot be expressed at all is a
`ConfigError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from bufferlab.controller.config import NO_CAP, Config, ConfigError, Pause, PortConfig
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.controller.tofino_tm import SECTION, tm_commands_from

#: The burst-absorption factors Tofino's TM offers, by BF Runtime name.
BAF_STEPS = ((Fraction(3, 200), "1.5%"), (Fraction(3, 100), "3%"), (Fraction(6, 100), "6%"),
             (Fraction(11, 100), "11%"), (Fraction(20, 100), "20%"), (Fraction(33, 100), "33%"),
             (Fraction(50, 100), "50%"), (Fraction(66, 100), "66%"), (Fraction(80, 100), "80%"))
#: The egress application pool every mapped queue grows in.
EGRESS_POOL = "EG_APP_POOL_0"
#: Architectures (P4Info `pkg_info.arch`) whose buffer is Tofino's TM.
TOFINO_ARCHS = ("tna", "t2na")
#: Cell size when the program does not say: Tofino 1's, or Tofino 2's for T2NA.
CELL_BYTES = {"tna": 80, "t2na": 176}


@dataclass(frozen=True)
class TmPlan:
    """A config's TM settings for a TNA program: the runtime CLI lines, in order, and what
    the mapping changed or left out (each `key.path: reason`)."""

    commands: list[str]
    warnings: list[str] = field(default_factory=list)
    cell_bytes: int = 80


def program_arch(index: P4InfoIndex) -> str:
    """The program's architecture as its P4Info names it (v1model when unnamed)."""
    return index.p4info.pkg_info.arch or "v1model"


def on_tofino(index: P4InfoIndex) -> bool:
    """Whether the program is a TNA/T2NA one, whose buffer is the TM's."""
    return program_arch(index) in TOFINO_ARCHS


def cell_bytes_of(index: P4InfoIndex | None, device_config: bytes | str | None = None) -> int:
    """The TM cell size of the program: the TNA JSON's `target_info.cell_bytes` when the
    device config is one, else by architecture (176 B for T2NA, else Tofino 1's 80 B)."""
    if device_config:
        try:
            document = json.loads(device_config)
        except ValueError:
            document = None
        cell = document.get("target_info", {}).get("cell_bytes") if isinstance(document, dict) else None
        if isinstance(cell, int) and cell > 0:
            return cell
    arch = program_arch(index) if index is not None else "tna"
    return CELL_BYTES.get(arch, CELL_BYTES["tna"])


def cells_up(size_bytes: int, cell_bytes: int) -> int:
    """Cells that hold ``size_bytes`` (a limit: rounded up)."""
    return -(-size_bytes // cell_bytes)


def nearest_baf(alpha: Fraction) -> tuple[str, bool]:
    """The BAF nearest ``alpha`` (by absolute difference, ties to the smaller) and whether
    it is exact."""
    value, name = min(BAF_STEPS, key=lambda step: (abs(step[0] - alpha), step[0]))
    return name, value == alpha


def _queue_buffer(port: PortConfig, queue: int, pool_bytes: int, cell: int,
                  where: str, warnings: list[str]) -> dict[str, Any]:
    """One queue's `queue.buffer` fields from its port's threshold and its cap (a static
    limit is at most the pool's cells: 100 % is the whole pool)."""
    cap = port.queue_caps_bytes[queue]
    threshold = port.threshold
    if threshold.dynamic:
        alpha = Fraction(threshold.alpha_num, 1 << threshold.alpha_shift)
        baf, exact = nearest_baf(alpha)
        if not exact:
            warnings.append(f"{where}.alpha: {alpha} is not a Tofino burst-absorption factor; "
                            f"the nearest, {baf}, is used")
        if cap != NO_CAP:
            warnings.append(f"{where}.queue_caps_bytes.{queue}: not applied: with a dynamic "
                            "threshold a Tofino queue's limit is the larger of its static limit "
                            "and the BAF's, so no cap can sit beside it")
        limit = 0
    else:
        baf = "DISABLE"
        limit = min(cells_up(pool_bytes * threshold.percent // 100, cell), pool_bytes // cell)
        if cap != NO_CAP:
            limit = min(limit, cells_up(cap, cell))
    return {"pool_id": EGRESS_POOL, "guaranteed_cells": 0, "pool_max_cells": limit,
            "dynamic_baf": baf, "hysteresis_cells": 0}


def _pause_sources(config: Config, errors: list[str], warnings: list[str]
                   ) -> dict[int, tuple[Pause, str]]:
    """Per ingress port, the PAUSE/PFC settings it takes: Tofino counts a frame against the
    port it came in on, so an egress port's XOFF becomes a limit on every other port that
    may feed it; a port fed by several paused ports takes the lowest XOFF."""
    chosen: dict[int, tuple[Pause, str]] = {}
    for egress in sorted(config.ports):
        pause = config.ports[egress].pause
        if pause.mode == "off":
            continue
        where = f"ports.{egress}.pause"
        for ingress in sorted(config.ports):
            if ingress == egress:
                continue
            held = chosen.get(ingress)
            if held is None:
                chosen[ingress] = (pause, where)
                continue
            other, other_where = held
            if other.mode != pause.mode:
                errors.append(f"{where}.mode: {pause.mode} where {other_where}.mode is "
                              f"{other.mode}: on Tofino both become port {ingress}'s flow "
                              "control, which is one mode")
            elif other != pause:
                lower = where if pause.xoff_bytes < other.xoff_bytes else other_where
                warnings.append(f"{where}: port {ingress} feeds {other_where} too, with other "
                                "settings; Tofino gives a port one ingress limit: the lower "
                                f"XOFF's ({lower})")
                if lower == where:
                    chosen[ingress] = (pause, where)
    return chosen


def _flow_control(pause: Pause, queues: int, pool_cells: int, cell: int) -> dict[str, Any]:
    """One ingress port's `port.flowcontrol` with its `port.buffer` or `ppg.cfg`."""
    xoff_cells = cells_up(pause.xoff_bytes, cell)
    hysteresis = xoff_cells - pause.xon_bytes // cell
    tables: dict[str, Any] = {"port.flowcontrol": {
        "mode_tx": "PAUSE" if pause.mode == "802.3x" else "PFC", "pause_quanta": pause.quanta}}
    # The v1model program has no headroom of its own: after XOFF the pool and the thresholds
    # still decide, so the skid is the whole pool.
    if pause.mode == "802.3x":
        tables["port.buffer"] = {"ig_limit_cells": xoff_cells, "ig_hysteresis_cells": hysteresis,
                                 "skid_limit_cells": pool_cells}
    else:
        tables["ppg.cfg"] = {str(q): {"guaranteed_cells": xoff_cells, "hysteresis_cells": hysteresis,
                                      "pool_id": "NONE", "pfc_enable": True,
                                      "pfc_skid_max_cells": pool_cells}
                             for q in range(queues)}
    return tables


def mapped_section(config: Config, cell_bytes: int) -> tuple[dict[str, Any], list[str]]:
    """The `tofino_tm` section the config's buffer, threshold, cap and PAUSE keys stand for,
    and the warnings; raises ConfigError for what Tofino cannot express."""
    warnings: list[str] = []
    errors: list[str] = []
    pool_cells = config.pool_bytes // cell_bytes
    if pool_cells == 0:
        raise ConfigError([f"pool_bytes: {config.pool_bytes} is less than one {cell_bytes}-byte "
                           "TM cell"])
    ports: dict[str, dict[str, Any]] = {}
    for number in sorted(config.ports):
        port = config.ports[number]
        where = f"ports.{number}"
        if config.priority_queues > 1 and (port.threshold.dynamic or port.threshold.percent != 100):
            warnings.append(f"{where}.threshold: a port's share in the v1model program, each "
                            f"queue's on Tofino: its {config.priority_queues} queues may hold "
                            "up to that share each")
        ports[str(number)] = {"queue.buffer": {
            str(q): _queue_buffer(port, q, config.pool_bytes, cell_bytes, where, warnings)
            for q in range(config.priority_queues)}}
    sources = _pause_sources(config, errors, warnings)
    if errors:
        raise ConfigError(list(dict.fromkeys(errors)))
    for ingress, (pause, _where) in sorted(sources.items()):
        tables = _flow_control(pause, config.priority_queues, pool_cells, cell_bytes)
        ports[str(ingress)] = {**tables, **ports[str(ingress)]}
    for number in sorted(config.ports):
        pause = config.ports[number].pause
        if pause.mode != "off":
            warnings.append(f"ports.{number}.pause.refresh_us: no Tofino equivalent: the TM "
                            "sends XOFF again every half pause time while it holds")
    warnings += _bcn_warnings(config)
    # A port's warning is noted once, not once per queue.
    return ({"pool.cfg": {EGRESS_POOL: {"size_cells": pool_cells}}, "ports": ports},
            list(dict.fromkeys(warnings)))


def _bcn_warnings(config: Config) -> list[str]:
    """BCN keys the TNA port computes another way (p4src/README.md, `bcn_config` row)."""
    out = []
    for number in sorted(config.ports):
        bcn = config.ports[number].bcn
        if not bcn.enable:
            continue
        where = f"ports.{number}.bcn"
        if bcn.w & (bcn.w - 1):
            out.append(f"{where}.w: {bcn.w} is not a power of two; the TNA port multiplies "
                       f"Qdelta by shifting, by {1 << (bcn.w.bit_length() - 1)}")
        if bcn.jitter_bytes & (bcn.jitter_bytes - 1):
            half = 1 << (bcn.jitter_bytes.bit_length() - 1)
            out.append(f"{where}.jitter_bytes: {bcn.jitter_bytes} is not a power of two; the "
                       f"TNA port draws the byte budget over S ± {half}")
    return out


def _overlay(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base`` key by key, nested objects merged."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _overlay(out[key], value)
        else:
            out[key] = value
    return out


def tm_plan(config: Config, cell_bytes: int) -> TmPlan:
    """The TM settings of ``config`` on a TNA program with ``cell_bytes`` cells: the mapped
    keys with the explicit `tofino_tm` section laid over them, as runtime CLI lines."""
    section, warnings = mapped_section(config, cell_bytes)
    section = _overlay(section, config.tofino_tm or {})
    return TmPlan(tm_commands_from({SECTION: section}), warnings, cell_bytes)
