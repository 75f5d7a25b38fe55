"""A config's `tofino_tm` section as the switch's runtime CLI lines.

On Tofino the traffic manager is configured through BF Runtime's `tf1.tm.*` tables,
not P4Runtime; bufferlab-switch takes the same settings, by the same names, as its
runtime CLI's `tm_*` commands. The section names each table as BF Runtime does
(without `tf1.tm.`), keyed as the table is, with its data fields by name::

    "tofino_tm": {
      "pool.cfg": {"EG_APP_POOL_0": {"size_cells": 20000}},
      "pipe.cfg": {"0": {"mirror_drop_enable": true, "mirror_drop_dev_port": 3}},
      "ports": {"1": {"port.flowcontrol": {"mode_tx": "PFC"},
                      "ppg.cfg": {"3": {"guaranteed_cells": 26, "pfc_enable": true}},
                      "queue.buffer": {"0": {"pool_id": "EG_APP_POOL_0", "dynamic_baf": "50%"}}}}
    }

`bufferlab-ctl tm CONFIG | bufferlab-switch-cli --thrift-port 9090` applies it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bufferlab.controller.config import ConfigError

SECTION = "tofino_tm"
BAFS = ("1.5%", "3%", "6%", "11%", "20%", "33%", "50%", "66%", "80%", "DISABLE")
EG_POOLS = tuple(f"EG_APP_POOL_{n}" for n in range(4))
IG_POOLS = tuple(f"IG_APP_POOL_{n}" for n in range(4))

# Field kinds: "cells" (0..2^32-1), "bool", a tuple of allowed strings, or a special name.
_CELLS, _BOOL = "cells", "bool"
TABLES: dict[str, dict[str, Any]] = {
    "pool.cfg": {"size_cells": _CELLS},
    "pipe.cfg": {"mirror_drop_enable": _BOOL, "mirror_drop_dev_port": "port", "mirror_drop_queue_nr": "queue"},
    "port.flowcontrol": {"mode_tx": ("NONE", "PAUSE", "PFC"), "cos_to_icos": "icos8", "pause_quanta": "quanta",
                         "src_mac": "mac"},
    "port.buffer": {"ig_limit_cells": _CELLS, "ig_hysteresis_cells": _CELLS, "skid_limit_cells": _CELLS},
    "ppg.cfg": {"guaranteed_cells": _CELLS, "hysteresis_cells": _CELLS, "pool_id": (*IG_POOLS, "NONE"),
                "pool_max_cells": _CELLS, "dynamic_baf": BAFS, "pfc_enable": _BOOL, "pfc_skid_max_cells": _CELLS},
    "queue.buffer": {"guaranteed_cells": _CELLS, "hysteresis_cells": _CELLS, "pool_id": (*EG_POOLS, "NONE"),
                     "pool_max_cells": _CELLS, "dynamic_baf": BAFS},
    "queue.cfg": {"pfc_cos": "class"},
}
# Per-port tables and what their entries are keyed by (None: the port alone).
PORT_TABLES = {"port.flowcontrol": None, "port.buffer": None, "ppg.cfg": "icos", "queue.buffer": "queue",
               "queue.cfg": "queue"}


def _value(kind: Any, v: Any, where: str, errors: list[str]) -> str | None:
    """The CLI text of value `v` of a field of `kind`, or None after noting why it is refused."""
    ranges = {_CELLS: 2**32 - 1, "port": 511, "queue": 127, "quanta": 0xFFFF, "class": 7}
    if isinstance(kind, tuple):
        if v in kind:
            return str(v)
        errors.append(f"{where}: {v!r} is not one of {', '.join(kind)}")
    elif kind == _BOOL:
        if isinstance(v, bool):
            return "true" if v else "false"
        errors.append(f"{where}: {v!r} is not true or false")
    elif kind in ranges:
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= ranges[kind]:
            return str(v)
        errors.append(f"{where}: {v!r} is not an integer 0..{ranges[kind]}")
    elif kind == "icos8":
        if isinstance(v, list) and len(v) == 8 and all(isinstance(x, int) and 0 <= x <= 7 for x in v):
            return ",".join(map(str, v))
        errors.append(f"{where}: {v!r} is not 8 iCoS (0..7), one per PFC class")
    elif kind == "mac":
        parts = v.split(":") if isinstance(v, str) else []
        if len(parts) == 6 and all(len(p) == 2 and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts):
            return v
        errors.append(f"{where}: {v!r} is not a MAC address aa:bb:cc:dd:ee:ff")
    return None


def _fields(table: str, data: Any, where: str, errors: list[str]) -> str:
    """`name=value ...` of one table entry's data fields."""
    if not isinstance(data, dict):
        errors.append(f"{where}: must be an object of {table} fields")
        return ""
    out = []
    for name, v in data.items():
        kind = TABLES[table].get(name)
        if kind is None:
            errors.append(f"{where}.{name}: not a field of {table} ({', '.join(TABLES[table])})")
            continue
        text = _value(kind, v, f"{where}.{name}", errors)
        if text is not None:
            out.append(f"{name}={text}")
    return " ".join(out)


def _index(key: str, top: int, where: str, errors: list[str]) -> int | None:
    if key.isdigit() and int(key) <= top:
        return int(key)
    errors.append(f"{where}: {key!r} is not 0..{top}")
    return None


def tm_commands_from(raw: dict) -> list[str]:
    """The runtime CLI lines of a parsed config's `tofino_tm` section (none without one)."""
    section = raw.get(SECTION)
    if section is None:
        return []
    errors: list[str] = []
    lines: list[str] = []
    if not isinstance(section, dict):
        raise ConfigError([f"{SECTION}: must be an object"])
    for key in section:
        if key not in ("pool.cfg", "pipe.cfg", "ports"):
            errors.append(f"{SECTION}.{key}: not a table (pool.cfg, pipe.cfg, ports)")
    for pool, data in section.get("pool.cfg", {}).items():
        where = f"{SECTION}.pool.cfg.{pool}"
        if pool not in EG_POOLS + IG_POOLS:
            errors.append(f"{where}: not a pool ({', '.join(EG_POOLS + IG_POOLS)})")
            continue
        lines.append(f"tm_pool_cfg {pool} {_fields('pool.cfg', data, where, errors)}".rstrip())
    for pipe, data in section.get("pipe.cfg", {}).items():
        where = f"{SECTION}.pipe.cfg.{pipe}"
        if _index(pipe, 3, where, errors) is not None:
            lines.append(f"tm_pipe_cfg {pipe} {_fields('pipe.cfg', data, where, errors)}".rstrip())
    for port, tables in section.get("ports", {}).items():
        where = f"{SECTION}.ports.{port}"
        if _index(port, 511, where, errors) is None or not isinstance(tables, dict):
            continue
        for table, body in tables.items():
            tw = f"{where}.{table}"
            if table not in PORT_TABLES:
                errors.append(f"{tw}: not a port table ({', '.join(PORT_TABLES)})")
                continue
            command = "tm_" + table.replace(".", "_")
            keyed = PORT_TABLES[table]
            if keyed is None:
                lines.append(f"{command} {port} {_fields(table, body, tw, errors)}".rstrip())
                continue
            for k, data in (body.items() if isinstance(body, dict) else ()):
                if _index(k, 7 if keyed == "icos" else 127, f"{tw}.{k}", errors) is not None:
                    lines.append(f"{command} {port} {k} {_fields(table, data, f'{tw}.{k}', errors)}".rstrip())
    if errors:
        raise ConfigError(errors)
    return lines


def tm_commands(path: str | Path) -> list[str]:
    """The runtime CLI lines of config file `path`'s `tofino_tm` section."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text())
    except OSError as err:
        raise ConfigError([f"{path}: cannot read: {err.strerror}"]) from None
    except json.JSONDecodeError as err:
        raise ConfigError([f"{path}: not JSON: {err.msg} at line {err.lineno} column {err.colno}"]) from None
    return tm_commands_from(raw)
