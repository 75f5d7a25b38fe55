"""A scenario's ``tcp_flows``: TCP flows between hosts of the topology (bufferlab.sim.TcpFlow).

Each entry names the flow, its ``sender`` and ``receiver`` hosts and a ``profile``; every
other key overrides one setting of the profile (units in the names). A mistake is a
ScenarioError keyed ``tcp_flows[i].key``.
"""

from __future__ import annotations

from typing import Any

from bufferlab.sim.tcp import TcpFlow

#: Keys a TCP flow takes and whether each is an integer (bytes, ns, segments, bit/s),
#: a boolean or text.
INT_KEYS = {"bytes", "start_ns", "dscp", "mss_bytes", "initial_window_segments", "pacing_bps",
            "receive_window_bytes", "rto_min_ns"}
BOOL_KEYS = {"sack", "rack_tlp", "ecn", "delayed_ack", "hystart", "prr", "gso"}
TEXT_KEYS = {"name", "sender", "receiver", "profile", "algorithm"}
TCP_FLOW_KEYS = INT_KEYS | BOOL_KEYS | TEXT_KEYS


def parse_tcp_flows(raw: Any, hosts: set[str], error: type[ValueError]) -> list[TcpFlow]:
    """The checked ``tcp_flows`` list; ``error(key, reason)`` is raised for a mistake."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise error("tcp_flows", "must be a list")
    flows = []
    for i, entry in enumerate(raw):
        key = f"tcp_flows[{i}]"
        if not isinstance(entry, dict):
            raise error(key, "must be an object")
        unknown = sorted(set(entry) - TCP_FLOW_KEYS)
        if unknown:
            raise error(f"{key}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(TCP_FLOW_KEYS))})")
        for required in ("name", "sender", "receiver"):
            if not isinstance(entry.get(required), str):
                raise error(f"{key}.{required}", "required (a name)")
        for end in ("sender", "receiver"):
            if entry[end] not in hosts:
                raise error(f"{key}.{end}", f"no host {entry[end]!r} in the topology")
        for k, v in entry.items():
            if k in INT_KEYS and v is not None and (not isinstance(v, int) or isinstance(v, bool)
                                                    or v < 0):
                raise error(f"{key}.{k}", f"must be a whole number ≥ 0, not {v!r}")
            if k in BOOL_KEYS and v is not None and not isinstance(v, bool):
                raise error(f"{key}.{k}", f"must be true or false, not {v!r}")
            if k in TEXT_KEYS and not isinstance(v, str) and not (k == "algorithm" and v is None):
                raise error(f"{key}.{k}", f"must be text, not {v!r}")
        try:
            flows.append(TcpFlow(**entry))
        except ValueError as problem:
            raise error(key, str(problem)) from None
    names = [f.name for f in flows]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise error("tcp_flows", f"two TCP flows are named {duplicate!r}")
    return flows
