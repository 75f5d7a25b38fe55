"""A TNA JSON document (compiler/README.md "TNA JSON") as the control plane sees it.

The engine runs each pipe's ingress and egress as separate BMv2-form documents; a
controller names their objects as bf-p4c's P4Info does, with the pipe first
(`pipe.Ingress.ipv4_lpm`). `control_plane_view` merges the gresses into one BMv2-form
document under those names, so tools written for BMv2 JSON (the P4Runtime server's
index, the runtime CLI) read a TNA program unchanged. Actions, learn lists and
calculations keep their names, as P4Info gives actions no pipe.
"""

from __future__ import annotations

from typing import Any

#: Top-level sections whose objects (and the tables they bind to) carry the pipe's name.
PIPE_NAMED = ("counter_arrays", "meter_arrays", "register_arrays", "parse_vsets")
#: Top-level sections merged as they are.
SHARED = ("actions", "learn_lists", "calculations")


def is_tna(document: dict[str, Any]) -> bool:
    """Whether a parsed JSON document is a TNA/T2NA program (it has `pipes`)."""
    return "pipes" in document


def control_plane_view(document: dict[str, Any]) -> dict[str, Any]:
    """Every gress's objects in one BMv2-form document, named as the control plane names
    them; raises ValueError for a document whose `pipes` is not a list of objects."""
    pipes = document.get("pipes")
    if not isinstance(pipes, list) or not all(isinstance(p, dict) for p in pipes):
        raise ValueError("TNA document: 'pipes' is not a list of objects")
    view: dict[str, Any] = {section: [] for section in (*PIPE_NAMED, *SHARED)}
    view["pipelines"] = []
    for pipe in pipes:
        prefix = f"{pipe.get('name', '')}."
        for gress in ("ingress", "egress"):
            part = pipe.get(gress) or {}
            for section in SHARED:
                view[section] += part.get(section, [])
            for section in PIPE_NAMED:
                view[section] += [_named(prefix, o, "name", "binding") for o in part.get(section, [])]
            for pipeline in part.get("pipelines", []):
                view["pipelines"].append({
                    **pipeline,
                    "tables": [_named(prefix, t, "name", "action_profile", "act_prof_name", "direct_meters")
                               for t in pipeline.get("tables", [])],
                    "action_profiles": [_named(prefix, a, "name")
                                        for a in pipeline.get("action_profiles", [])],
                })
    return view


def _named(prefix: str, obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    """`obj` with the names under `keys` (those it has) given the pipe's prefix."""
    return {**obj, **{k: prefix + obj[k] for k in keys if isinstance(obj.get(k), str)}}
