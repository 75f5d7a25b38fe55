"""The p4lang tutorials' per-switch runtime file (`sN-runtime.json`): pipeline, entries, PRE.

    {"target": "bmv2" (or "tofino", "tofino2" for a TNA program's JSON),
     "p4info": "build/x.p4.p4info.txtpb", "bmv2_json": "build/x.json",
     "table_entries": [{"table", "match", "action_name", "action_params", "priority",
                        "default_action"}],
     "multicast_group_entries": [{"multicast_group_id", "replicas": [{"egress_port", "instance"}]}],
     "clone_session_entries": [{"clone_session_id", "replicas": [...],
                                "packet_length_bytes", "class_of_service"}]}

Each problem is a `RuntimeFileError` naming the key (`table_entries[3].match`) and why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.p4info import P4InfoIndex, UnknownName, load_p4info
from bufferlab.controller.values import BadValue


class RuntimeFileError(ValueError):
    """A runtime file that cannot be applied: the key and the reason."""


@dataclass
class RuntimeConfig:
    """A runtime file, resolved: pipeline files and the updates to write, in file order."""

    p4info: p4info_pb2.P4Info
    bmv2_json: Path | None
    defaults: list[p4runtime_pb2.Entity] = field(default_factory=list)
    inserts: list[p4runtime_pb2.Entity] = field(default_factory=list)


ENTRY_KEYS = {"table", "match", "action_name", "action_params", "priority", "default_action"}
TOP_KEYS = {"target", "p4info", "bmv2_json", "table_entries", "multicast_group_entries",
            "clone_session_entries"}
#: Targets a runtime file may name: BMv2, or Tofino (bufferlab's engine runs the TNA JSON
#: document `bufferlab-p4c --arch tna` writes, which `bmv2_json` then names).
TARGETS = ("bmv2", "tofino", "tofino2")


def _replicas(raw: Any, key: str) -> list[tuple[int, int]]:
    if not isinstance(raw, list):
        raise RuntimeFileError(f"{key}: must be a list of {{egress_port, instance}}")
    replicas = []
    for i, replica in enumerate(raw):
        if not isinstance(replica, dict) or "egress_port" not in replica:
            raise RuntimeFileError(f"{key}[{i}]: needs egress_port (and instance)")
        port, instance = replica["egress_port"], replica.get("instance", 0)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                   for v in (port, instance)):
            raise RuntimeFileError(f"{key}[{i}]: egress_port and instance are non-negative integers")
        replicas.append((port, instance))
    return replicas


def _table_entry(index: P4InfoIndex, raw: Any, key: str) -> tuple[bool, p4runtime_pb2.Entity]:
    if not isinstance(raw, dict):
        raise RuntimeFileError(f"{key}: must be an object")
    unknown = set(raw) - ENTRY_KEYS
    if unknown:
        raise RuntimeFileError(f"{key}.{sorted(unknown)[0]}: unknown key")
    if "table" not in raw:
        raise RuntimeFileError(f"{key}.table: required")
    default = bool(raw.get("default_action", False))
    try:
        message = entities.table_entry(
            index,
            raw["table"],
            match=raw.get("match") or {},
            action_name=raw.get("action_name"),
            params=raw.get("action_params") or {},
            priority=raw.get("priority"),
            default_action=default,
            what=key,
        )
    except (BadValue, UnknownName) as err:
        text = str(err)
        raise RuntimeFileError(text if text.startswith(key) else f"{key}: {text}") from None
    return default, entity(message)


def parse_runtime(data: Any, base_dir: Path, p4info: p4info_pb2.P4Info | None = None) -> RuntimeConfig:
    """Check a runtime file's content; `p4info` overrides the file's own `p4info` key."""
    if not isinstance(data, dict):
        raise RuntimeFileError("(top level): must be an object")
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise RuntimeFileError(f"{sorted(unknown)[0]}: unknown key")
    if data.get("target", "bmv2") not in TARGETS:
        raise RuntimeFileError(
            f"target: {data['target']!r} is not one of {', '.join(repr(t) for t in TARGETS)}")
    if p4info is None:
        if "p4info" not in data:
            raise RuntimeFileError("p4info: required (the P4Info text file of the program)")
        try:
            p4info = load_p4info(base_dir / data["p4info"])
        except OSError as err:
            raise RuntimeFileError(f"p4info: cannot read {data['p4info']}: {err.strerror}") from None
    bmv2_json = base_dir / data["bmv2_json"] if "bmv2_json" in data else None
    config = RuntimeConfig(p4info=p4info, bmv2_json=bmv2_json)
    index = P4InfoIndex(p4info)
    for i, raw in enumerate(data.get("table_entries", [])):
        default, message = _table_entry(index, raw, f"table_entries[{i}]")
        (config.defaults if default else config.inserts).append(message)
    for i, raw in enumerate(data.get("multicast_group_entries", [])):
        key = f"multicast_group_entries[{i}]"
        if not isinstance(raw, dict) or "multicast_group_id" not in raw:
            raise RuntimeFileError(f"{key}.multicast_group_id: required")
        try:
            group = entities.multicast_group(raw["multicast_group_id"],
                                             _replicas(raw.get("replicas", []), f"{key}.replicas"))
        except BadValue as err:
            raise RuntimeFileError(f"{key}: {err}") from None
        config.inserts.append(entity(group))
    for i, raw in enumerate(data.get("clone_session_entries", [])):
        key = f"clone_session_entries[{i}]"
        if not isinstance(raw, dict) or "clone_session_id" not in raw:
            raise RuntimeFileError(f"{key}.clone_session_id: required")
        try:
            session = entities.clone_session(
                raw["clone_session_id"], _replicas(raw.get("replicas", []), f"{key}.replicas"),
                class_of_service=raw.get("class_of_service", 0),
                packet_length_bytes=raw.get("packet_length_bytes", 0),
            )
        except BadValue as err:
            raise RuntimeFileError(f"{key}: {err}") from None
        config.inserts.append(entity(session))
    return config


def load_runtime(path: str | Path, p4info: p4info_pb2.P4Info | None = None) -> RuntimeConfig:
    """Read and check a runtime file; its relative paths are relative to the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as err:
        raise RuntimeFileError(f"{path}: cannot read: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise RuntimeFileError(f"{path}: not JSON: {err.msg} at line {err.lineno}") from None
    return parse_runtime(data, path.parent, p4info)


def program_switch(connection: SwitchConnection, config: RuntimeConfig,
                   bmv2_json: bytes | None = None) -> None:
    """Install the pipeline (when a JSON is known), then default actions, then entries."""
    if bmv2_json is None and config.bmv2_json is not None:
        bmv2_json = config.bmv2_json.read_bytes()
    if bmv2_json is not None:
        connection.set_pipeline(config.p4info, bmv2_json)
    if config.defaults:
        connection.modify(*config.defaults)
    if config.inserts:
        connection.insert(*config.inserts)
