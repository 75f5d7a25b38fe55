"""The scenario file: parsed and checked, every problem a `ScenarioError` naming the key.

    {
      "topology": "topology.json",           # a path (relative to this file) or the object
      "switches": {"s1": {"config": "s1-buffer.json", "latency_ns": 1000}},
      "sources": [{"name": "EP0", "host": "h1", "destination": "h5",
                   "pattern": "bernoulli", "load": 0.5, "sizes_bytes": 1500,
                   "start_ns": 5000000, "stop_ns": 95000000,
                   "rlq_bytes": 150000, "when_full": "drop",
                   "reaction": {"model": "bcn", "gi": 0.53, "gd_per_page": 0.00026}}],
      "record": {"interval_ns": 100000},
      "duration_ns": 200000000,
      "seed": 1
    }

A switch's `config` is a controller config (`bufferlab.controller.config`) for
`p4src/buffer_switch.p4`, or for another `program` (a `.p4` path) with the same tables;
`runtime_json` (the tutorials' `sN-runtime.json`) programs any other P4 program instead.
A source's `reaction` is null, `{"model": "bcn", …}` with the reaction point's
parameters, or `{"model": "python", "class": "package.module:Class", "args": {…}}`.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from bufferlab.controller.config import Config, ConfigError, load_config
from bufferlab.experiments.scenario.tcp_flows import parse_tcp_flows
from bufferlab.mininet.topology import Topology, TopologyError, load_topology, parse_topology
from bufferlab.sim.network import BcnReaction, Source
from bufferlab.sim.tcp import TcpFlow
from bufferlab.traffic import _hosts

SOURCE_KEYS = {
    "name", "host", "destination", "pattern", "rate_bps", "load", "sizes_bytes", "on_ns",
    "off_ns", "exponential", "start_ns", "stop_ns", "dscp", "priority", "udp_ports",
    "rlq_bytes", "when_full", "reaction", "response_ns",
}
BCN_KEYS = {"model"} | {f.name for f in fields(BcnReaction)}
#: The BCN reaction point's options that are words, and those that are whole numbers.
BCN_CHOICES = {"severe", "positive_from", "initial_rate"}
#: The line rate the BCN options are checked against before a host gives the real one.
CHECK_LINE_RATE_BPS = 1e15
BCN_INTS = {"fb_max_pages", "drift_interval_ns", "backoff_max_ns", "fb_bits", "fb_range_pages",
            "rate_window_ns"}


class ScenarioError(ValueError):
    """A scenario that cannot be used: `key` says where, the message says why."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


@dataclass(frozen=True)
class SwitchSpec:
    """How one switch is programmed and modelled."""

    name: str
    config: Config | None = None
    runtime_json: Path | None = None
    program: Path | None = None
    latency_ns: int = 0


@dataclass
class Scenario:
    """A checked scenario."""

    topology: Topology
    switches: dict[str, SwitchSpec]
    sources: list[Source]
    duration_ns: int
    record_interval_ns: int = 0
    seed: int = 0
    base_dir: Path = Path(".")
    name: str = "scenario"
    tcp_flows: list[TcpFlow] = field(default_factory=list)


def _int(value: Any, key: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScenarioError(key, f"must be an integer >= {minimum}, not {value!r}")
    return value


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(key, f"must be a number, not {value!r}")
    return float(value)


def _object(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(key, "must be an object")
    return value


def _keys(raw: dict[str, Any], allowed: set[str], key: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ScenarioError(f"{key}.{unknown[0]}", f"unknown key (expected one of {sorted(allowed)})")


def _path(base: Path, value: Any, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ScenarioError(key, "must be a path")
    path = (base / value).resolve()
    if not path.exists():
        raise ScenarioError(key, f"{path} does not exist")
    return path


def _switch(name: str, raw: Any, base: Path) -> SwitchSpec:
    key = f"switches.{name}"
    raw = _object(raw, key)
    _keys(raw, {"config", "runtime_json", "program", "latency_ns"}, key)
    if ("config" in raw) == ("runtime_json" in raw):
        raise ScenarioError(key, "give exactly one of config (buffer_switch.p4's controller "
                                 "config) and runtime_json (the tutorials' form)")
    config = runtime = None
    if "config" in raw:
        path = _path(base, raw["config"], f"{key}.config")
        try:
            config = load_config(path)
        except ConfigError as error:
            raise ScenarioError(f"{key}.config", str(error)) from None
    else:
        runtime = _path(base, raw["runtime_json"], f"{key}.runtime_json")
    program = _path(base, raw["program"], f"{key}.program") if "program" in raw else None
    if runtime is not None and program is None:
        raise ScenarioError(f"{key}.program", "a switch programmed by runtime_json names its "
                                              "program (.p4)")
    return SwitchSpec(name, config, runtime, program,
                      _int(raw.get("latency_ns", 0), f"{key}.latency_ns"))


def _sizes(value: Any, key: str) -> tuple[tuple[int, int], ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return ((value, 1),)
    if not isinstance(value, list) or not value:
        raise ScenarioError(key, "must be a size in bytes or a list of [bytes, weight]")
    pairs = []
    for i, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ScenarioError(f"{key}[{i}]", "must be [bytes, weight]")
        pairs.append((_int(pair[0], f"{key}[{i}][0]", 60), _int(pair[1], f"{key}[{i}][1]", 1)))
    return tuple(pairs)


def python_model(spec: dict[str, Any], key: str) -> Any:
    """Imports and instantiates a Python reaction model `package.module:Class(**args)`."""
    _keys(spec, {"model", "class", "args"}, key)
    target = spec.get("class")
    if not isinstance(target, str) or ":" not in target:
        raise ScenarioError(f"{key}.class", "must be 'package.module:Class'")
    module_name, _, class_name = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ScenarioError(f"{key}.class", f"cannot import {target}: {error}") from None
    args = _object(spec.get("args", {}), f"{key}.args")
    try:
        return cls(**args)
    except TypeError as error:
        raise ScenarioError(f"{key}.args", str(error)) from None


def _reaction(raw: Any, key: str) -> Any:
    if raw is None:
        return None
    raw = _object(raw, key)
    model = raw.get("model")
    if model == "bcn":
        return _bcn(raw, key)
    if model == "python":
        return python_model(raw, key)
    raise ScenarioError(f"{key}.model", f"{model!r}: use 'bcn' or 'python'")


def _bcn(raw: dict[str, Any], key: str) -> BcnReaction:
    _keys(raw, BCN_KEYS, key)
    values: dict[str, Any] = {}
    for k, v in raw.items():
        if k in BCN_CHOICES:
            if not isinstance(v, str):
                raise ScenarioError(f"{key}.{k}", f"{v!r}: need a string")
            values[k] = v
        elif k in BCN_INTS:
            values[k] = _int(v, f"{key}.{k}", 1)
        elif k != "model":
            values[k] = _number(v, f"{key}.{k}")
    reaction = BcnReaction(**values)
    # The reaction point checks its own values; the host's link gives the line rate when
    # the source is added, so here it is any rate above every other one.
    gains = {k: v for k, v in asdict(reaction).items()
             if k in ("gi", "gd_per_page", "ru_bps", "fb_max_pages")}
    try:
        _hosts.RpConfig(CHECK_LINE_RATE_BPS, reaction.min_rate_bps, **gains,
                        **reaction.features())
    except ValueError as error:
        raise ScenarioError(key, str(error)) from None
    return reaction


def _source(i: int, raw: Any, hosts: set[str]) -> Source:
    key = f"sources[{i}]"
    raw = _object(raw, key)
    _keys(raw, SOURCE_KEYS, key)
    for required in ("name", "host", "destination"):
        if not isinstance(raw.get(required), str):
            raise ScenarioError(f"{key}.{required}", "required (a name)")
    for end in ("host", "destination"):
        if raw[end] not in hosts:
            raise ScenarioError(f"{key}.{end}", f"no host {raw[end]!r} in the topology")
    pattern = raw.get("pattern", "constant")
    if pattern not in ("constant", "bernoulli"):
        raise ScenarioError(f"{key}.pattern", f"{pattern!r}: use 'constant' or 'bernoulli'")
    if pattern == "constant" and "rate_bps" not in raw:
        raise ScenarioError(f"{key}.rate_bps", "a constant source needs its rate")
    if pattern == "bernoulli" and "load" not in raw:
        raise ScenarioError(f"{key}.load", "a bernoulli source needs its load (0..1)")
    when_full = raw.get("when_full", "drop")
    if when_full not in ("drop", "backpressure"):
        raise ScenarioError(f"{key}.when_full", f"{when_full!r}: use 'drop' or 'backpressure'")
    optional_ints = {k: _int(raw[k], f"{key}.{k}") for k in ("on_ns", "off_ns", "stop_ns")
                     if k in raw}
    ports = raw.get("udp_ports", [5000, 5000])
    if not (isinstance(ports, list) and len(ports) == 2):
        raise ScenarioError(f"{key}.udp_ports", "must be [source, destination]")
    return Source(
        name=raw["name"], host=raw["host"], destination=raw["destination"], pattern=pattern,
        rate_bps=_int(raw["rate_bps"], f"{key}.rate_bps", 1) if "rate_bps" in raw else None,
        load=_number(raw["load"], f"{key}.load") if "load" in raw else None,
        sizes=_sizes(raw.get("sizes_bytes", 1500), f"{key}.sizes_bytes"),
        exponential=bool(raw.get("exponential", False)),
        start_ns=_int(raw.get("start_ns", 0), f"{key}.start_ns"),
        dscp=_int(raw.get("dscp", 0), f"{key}.dscp"),
        priority=_int(raw.get("priority", 0), f"{key}.priority"),
        udp_ports=(_int(ports[0], f"{key}.udp_ports[0]"), _int(ports[1], f"{key}.udp_ports[1]")),
        rlq_bytes=_int(raw.get("rlq_bytes", 150_000), f"{key}.rlq_bytes", 1),
        when_full=when_full, reaction=_reaction(raw.get("reaction"), f"{key}.reaction"),
        response_ns=_int(raw.get("response_ns", 0), f"{key}.response_ns"), **optional_ints)


def parse_scenario(data: Any, base_dir: Path = Path("."), name: str = "scenario") -> Scenario:
    """Checks a scenario given as parsed JSON; paths in it are relative to ``base_dir``."""
    data = _object(data, "(top level)")
    _keys(data, {"topology", "switches", "sources", "tcp_flows", "record", "duration_ns", "seed",
                 "comment"},
          "(top level)")
    for required in ("topology", "switches", "sources", "duration_ns"):
        if required not in data:
            raise ScenarioError(required, "required")
    try:
        if isinstance(data["topology"], str):
            topology = load_topology(_path(base_dir, data["topology"], "topology"))
        else:
            topology = parse_topology(data["topology"])
            topology.base_dir = base_dir
    except TopologyError as error:
        raise ScenarioError(f"topology.{error.key}", error.reason) from None
    switches_raw = _object(data["switches"], "switches")
    missing = sorted(set(topology.switches) - set(switches_raw))
    if missing:
        raise ScenarioError("switches", f"no entry for {missing} of the topology")
    extra = sorted(set(switches_raw) - set(topology.switches))
    if extra:
        raise ScenarioError(f"switches.{extra[0]}", "not a switch of the topology")
    switches = {n: _switch(n, raw, base_dir) for n, raw in switches_raw.items()}
    raw_sources = data["sources"]
    if not isinstance(raw_sources, list):
        raise ScenarioError("sources", "must be a list")
    sources = [_source(i, raw, set(topology.hosts)) for i, raw in enumerate(raw_sources)]
    names = [s.name for s in sources]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ScenarioError("sources", f"two sources are named {duplicate!r}")
    record = _object(data.get("record", {}), "record")
    _keys(record, {"interval_ns"}, "record")
    return Scenario(
        topology=topology, switches=switches, sources=sources,
        duration_ns=_int(data["duration_ns"], "duration_ns", 1),
        record_interval_ns=_int(record.get("interval_ns", 0), "record.interval_ns"),
        seed=_int(data.get("seed", 0), "seed"), base_dir=base_dir, name=name,
        tcp_flows=parse_tcp_flows(data.get("tcp_flows"), set(topology.hosts), ScenarioError))


def load_scenario(path: str | Path) -> Scenario:
    """Reads and checks a scenario file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise ScenarioError(str(path), f"cannot read: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ScenarioError(str(path), f"not JSON: {error.msg} at line {error.lineno}") from None
    return parse_scenario(data, path.parent, path.stem)
