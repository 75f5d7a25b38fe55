"""Runtime CLI commands that configure the traffic manager in Tofino's terms: each
command is a BF Runtime `tf1.tm.*` table, its key given first and its data fields
as `name=value`, named as BF Runtime names them (switch/README.md "Tofino's traffic
manager" maps them to the engine's settings)::

    tm_pool_cfg EG_APP_POOL_0 size_cells=20000
    tm_queue_buffer 2 0 guaranteed_cells=20 pool_id=EG_APP_POOL_0 pool_max_cells=1000 dynamic_baf=50%
    tm_port_flowcontrol 1 mode_tx=PFC
    tm_ppg_cfg 1 3 guaranteed_cells=26 hysteresis_cells=13 pfc_enable=true pfc_skid_max_cells=100
    tm_pipe_cfg 0 mirror_drop_enable=true mirror_drop_dev_port=3 mirror_drop_queue_nr=0
"""

from __future__ import annotations

from typing import Any

from bufferlab.switch.engine import Engine
from bufferlab.switch.runtime_cli.commands import (
    INT,
    NAME,
    SPECS,
    Arg,
    CommandError,
    Spec,
    _convert,
)


def _int(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise CommandError(f"{what}: '{text}' is not an integer") from None


def _bool(text: str, what: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise CommandError(f"{what}: '{text}' is not true or false")


def _ints(text: str, what: str) -> list[int]:
    return [_int(t, what) for t in text.split(",")]


def _mac(text: str, what: str) -> list[int]:
    parts = text.split(":")
    if len(parts) != 6:
        raise CommandError(f"{what}: '{text}' is not a MAC address aa:bb:cc:dd:ee:ff")
    return [_int(f"0x{p}", what) for p in parts]


def _text(text: str, _what: str) -> str:
    return text


# Data fields of each table: name -> how its value is read.
_FIELDS: dict[str, dict[str, Any]] = {
    "tm_pool_cfg": {"size_cells": _int},
    "tm_queue_buffer": {
        "guaranteed_cells": _int, "hysteresis_cells": _int, "pool_id": _text,
        "pool_max_cells": _int, "dynamic_baf": _text,
    },
    "tm_queue_cfg": {"pfc_cos": _int},
    "tm_port_flowcontrol": {"mode_tx": _text, "cos_to_icos": _ints, "pause_quanta": _int, "src_mac": _mac},
    "tm_port_buffer": {"ig_limit_cells": _int, "ig_hysteresis_cells": _int, "skid_limit_cells": _int},
    "tm_ppg_cfg": {
        "guaranteed_cells": _int, "hysteresis_cells": _int, "pool_id": _text, "pool_max_cells": _int,
        "dynamic_baf": _text, "pfc_enable": _bool, "pfc_skid_max_cells": _int,
    },
    "tm_pipe_cfg": {"mirror_drop_enable": _bool, "mirror_drop_dev_port": _int, "mirror_drop_queue_nr": _int},
}


def _parse_fields(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    """The key arguments of `spec`, then `field=value` pairs of its table."""
    keys = list(spec.args)
    if len(tokens) < len(keys):
        raise CommandError(f"Insufficient number of args, expected at least {len(keys)} but got {len(tokens)}",
                           spec.usage)
    out: dict[str, Any] = {a.name: _convert(a, t, spec) for a, t in zip(keys, tokens[: len(keys)], strict=True)}
    fields = _FIELDS[spec.name]
    data: dict[str, Any] = {}
    for token in tokens[len(keys):]:
        name, sep, value = token.partition("=")
        if not sep or name not in fields:
            raise CommandError(f"'{token}': the fields of {spec.name} are {', '.join(f'{f}=' for f in fields)}",
                               spec.usage)
        data[name] = fields[name](value, name)
    out["fields"] = data
    return out


def _spec(name: str, help_text: str, keys: tuple[Arg, ...]) -> Spec:
    fields = " ".join(f"[{f}=...]" for f in _FIELDS[name])
    usage = " ".join(f"<{a.name}>" for a in keys) + " " + fields
    return Spec(name, help_text, keys, usage_text=usage, parse=_parse_fields)


TM_SPECS = (
    _spec("tm_pool_cfg", "Size an application pool (EG_APP_POOL_0..3, IG_APP_POOL_0..3) in cells",
          (Arg("pool", NAME),)),
    _spec("tm_queue_buffer", "A queue's guaranteed cells, egress application pool (or NONE), static limit "
          "in the pool, burst-absorption factor (1.5%..80%, DISABLE) and hysteresis, cells",
          (Arg("dev_port", INT), Arg("queue", INT))),
    _spec("tm_queue_cfg", "The PFC class (0..7) a queue honours", (Arg("dev_port", INT), Arg("queue", INT))),
    _spec("tm_port_flowcontrol", "What the TM asks a port's MAC to send over its limits: NONE, PAUSE or PFC; "
          "the iCoS of each PFC class; the XOFF's pause quanta and source MAC", (Arg("dev_port", INT),)),
    _spec("tm_port_buffer", "A port's ingress limit, hysteresis and skid (cells) for PAUSE or drops",
          (Arg("dev_port", INT),)),
    _spec("tm_ppg_cfg", "The priority group of a port's iCoS: guaranteed cells, ingress application pool, "
          "limits, BAF, hysteresis; lossless (PFC) with its skid", (Arg("dev_port", INT), Arg("icos", INT))),
    _spec("tm_pipe_cfg", "Where a pipe's frames dropped by the TM with deflect_on_drop go (port, queue)",
          (Arg("pipe", INT),)),
    Spec("tm_show", "Show the TM's cell size, queues per port and application pools (size, used, peak; cells)"),
    Spec("tm_counter_eg_port", "Show ports' buffer use now and at peak (cells; 0 without cells), their TM drops "
         "(packets) and the frames and frame bytes queued", (Arg("dev_port", INT, variadic=True),),
         usage_text="<dev_port> ..."),
    Spec("tm_counter_queue", "Show a port's queues (all, or those given): use now and at peak (cells; 0 without "
         "cells), TM drops (packets), frames and frame bytes queued", (Arg("dev_port", INT),
                                                                       Arg("queue", INT, variadic=True)),
         usage_text="<dev_port> [<queue> ...]"),
)

SPECS.update({s.name: s for s in TM_SPECS})


class TofinoTmCommands:
    """The executor's handlers of the `tm_*` commands."""

    engine: Engine

    def _do_tm_pool_cfg(self, a: dict[str, Any], out: list[str]) -> None:
        size = a["fields"].get("size_cells")
        if size is None:
            raise CommandError("size_cells= is required", SPECS["tm_pool_cfg"].usage)
        self.engine.tm_pool_cfg(a["pool"], size)
        out.append(f"{a['pool']}: {size} cells")

    def _do_tm_queue_buffer(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.tm_queue_buffer(a["dev_port"], a["queue"], **a["fields"])
        out.append(f"port {a['dev_port']} queue {a['queue']}: {_fields_str(a['fields'])}")

    def _do_tm_queue_cfg(self, a: dict[str, Any], out: list[str]) -> None:
        if "pfc_cos" not in a["fields"]:
            raise CommandError("pfc_cos= is required", SPECS["tm_queue_cfg"].usage)
        self.engine.tm_queue_cfg(a["dev_port"], a["queue"], a["fields"]["pfc_cos"])
        out.append(f"port {a['dev_port']} queue {a['queue']}: {_fields_str(a['fields'])}")

    def _do_tm_port_flowcontrol(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.tm_port_flowcontrol(a["dev_port"], **a["fields"])
        out.append(f"port {a['dev_port']}: {_fields_str(a['fields'])}")

    def _do_tm_port_buffer(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.tm_port_buffer(a["dev_port"], **a["fields"])
        out.append(f"port {a['dev_port']}: {_fields_str(a['fields'])}")

    def _do_tm_ppg_cfg(self, a: dict[str, Any], out: list[str]) -> None:
        self.engine.tm_ppg_cfg(a["dev_port"], a["icos"], **a["fields"])
        out.append(f"port {a['dev_port']} icos {a['icos']}: {_fields_str(a['fields'])}")

    def _do_tm_pipe_cfg(self, a: dict[str, Any], out: list[str]) -> None:
        fields = a["fields"]
        if "mirror_drop_enable" not in fields:
            raise CommandError("mirror_drop_enable= is required", SPECS["tm_pipe_cfg"].usage)
        self.engine.tm_pipe_cfg(a["pipe"], **fields)
        out.append(f"pipe {a['pipe']}: {_fields_str(fields)}")

    def _do_tm_show(self, a: dict[str, Any], out: list[str]) -> None:
        info = self.engine.tm_info()
        cell = info["cell_bytes"]
        out.append(f"cell size: {cell} bytes" if cell else "cell size: none (the buffer counts bytes)")
        out.append(f"queues per port: {info['queues_per_port']}")
        for prefix, key in (("EG", "app_pool"), ("IG", "ig_app_pool")):
            for n in range(4):
                out.append(f"{prefix}_APP_POOL_{n}: size {info[f'{key}_size_cells'][n]} cells, "
                           f"used {info[f'{key}_used_cells'][n]}, peak {info[f'{key}_max_used_cells'][n]}")
        stats = self.engine.stats()
        out.append(f"PAUSE/PFC frames asked of the MACs: XOFF {stats['xoff_sent']}, XON {stats['xon_sent']}")

    def _do_tm_counter_eg_port(self, a: dict[str, Any], out: list[str]) -> None:
        # BF Runtime's tf1.tm.counter.eg_port (usage_cells, watermark_cells, drop_count_packets),
        # with the frames and their bytes, which the engine also knows.
        if not a["dev_port"]:
            raise CommandError("give at least one dev_port", SPECS["tm_counter_eg_port"].usage)
        for port in a["dev_port"]:
            s = self.engine.port_stats(port)
            queues = [self.engine.queue_stats(port, q) for q in range(self.engine.port_config(port)["num_queues"])]
            out.append(f"port {port}: usage_cells={s['occupancy_cells']} watermark_cells={s['max_occupancy_cells']} "
                       f"drop_count_packets={sum(q['dropped_pkts'] for q in queues)} "
                       f"frames={sum(q['depth_pkts'] for q in queues)} frame_bytes={s['occupancy_bytes']}")

    def _do_tm_counter_queue(self, a: dict[str, Any], out: list[str]) -> None:
        # BF Runtime's tf1.tm.counter.queue, keyed by (dev_port, queue) as the tm_* settings are.
        port = a["dev_port"]
        count = self.engine.port_config(port)["num_queues"]
        for q in a["queue"] or range(count):
            if not 0 <= q < count:
                raise CommandError(f"port {port} has queues 0..{count - 1}, not {q}", SPECS["tm_counter_queue"].usage)
            s = self.engine.queue_stats(port, q)
            out.append(f"port {port} queue {q}: usage_cells={s['depth_cells']} watermark_cells={s['max_depth_cells']} "
                       f"drop_count_packets={s['dropped_pkts']} frames={s['depth_pkts']} "
                       f"frame_bytes={s['depth_bytes']}")


def _fields_str(fields: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items()) or "unchanged"
