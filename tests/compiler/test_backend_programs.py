"""Acceptance: every test program and every p4src program compiles to self-consistent outputs."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler import compile
from bufferlab.compiler.jsonwriter import dumps

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "tests" / "p4").glob("*.p4")) + sorted((ROOT / "p4src").glob("*.p4"))
TOP_LEVEL = [
    "header_types", "headers", "header_stacks", "header_union_types", "header_unions",
    "header_union_stacks", "field_lists", "errors", "enums", "parsers", "parse_vsets", "deparsers",
    "meter_arrays", "counter_arrays", "register_arrays", "calculations", "learn_lists", "actions",
    "pipelines", "checksums", "force_arith", "extern_instances", "field_aliases", "program", "__meta__",
]  # fmt: skip


def test_there_are_at_least_thirty_test_programs():
    assert len(list((ROOT / "tests" / "p4").glob("*.p4"))) >= 30


def fields_of(doc):
    """{(instance, field)} for every header instance, plus the hidden $valid$ field."""
    types = {t["name"]: t for t in doc["header_types"]}
    out = set()
    for h in doc["headers"]:
        for f in types[h["header_type"]]["fields"]:
            out.add((h["name"], f[0]))
        out.add((h["name"], "$valid$"))
    return out


def walk(node, found):
    """Collect every {"type": "field"} reference of a JSON subtree."""
    if isinstance(node, dict):
        if node.get("type") == "field" and isinstance(node.get("value"), list):
            found.append(tuple(node["value"]))
        for value in node.values():
            walk(value, found)
    elif isinstance(node, list):
        for value in node:
            walk(value, found)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_program_compiles_consistently(path):
    doc, p4info = compile(path)
    assert list(doc) == TOP_LEVEL
    assert json.loads(dumps(doc)) == doc
    assert doc["__meta__"] == {"version": [2, 23], "compiler": "bufferlab-p4c"}
    assert doc["headers"][0]["name"] == "scalars" and doc["headers"][1]["name"] == "standard_metadata"
    for section in ("header_types", "headers", "actions", "calculations", "register_arrays",
                    "counter_arrays", "meter_arrays", "parse_vsets", "checksums"):
        ids = [item["id"] for item in doc[section]]
        assert ids == list(range(len(ids))), section
    for section in ("field_lists", "learn_lists"):
        assert [item["id"] for item in doc[section]] == list(range(1, len(doc[section]) + 1))
    for t in doc["header_types"]:
        if t["name"] in ("scalars_0", "standard_metadata"):
            assert sum(f[1] for f in t["fields"]) % 8 == 0
    known = fields_of(doc)
    refs = []
    walk(doc, refs)
    assert set(refs) <= known, set(refs) - known
    states = {s["name"] for p in doc["parsers"] for s in p["parse_states"]}
    for parser in doc["parsers"]:
        assert parser["init_state"] in states
        for state in parser["parse_states"]:
            for tr in state["transitions"]:
                assert tr["next_state"] is None or tr["next_state"] in states
    # One name may have several ids: an action bound to other arguments in another table.
    action_names = {a["id"]: a["name"] for a in doc["actions"]}
    for pipeline in doc["pipelines"]:
        nodes = {t["name"] for t in pipeline["tables"]} | {c["name"] for c in pipeline["conditionals"]}
        assert pipeline["init_table"] is None or pipeline["init_table"] in nodes
        for t in pipeline["tables"]:
            assert [action_names[i] for i in t["action_ids"]] == t["actions"]
            successors = list(t["next_tables"].values()) + [t["base_default_next"]]
            assert all(s is None or s in nodes for s in successors)
            if "default_entry" in t:
                assert t["default_entry"]["action_id"] in t["action_ids"]
        for c in pipeline["conditionals"]:
            assert all(s is None or s in nodes for s in (c["true_next"], c["false_next"]))
    p4_ids = [o.preamble.id for kind in ("tables", "actions", "counters", "direct_counters", "meters",
                                         "direct_meters", "registers", "digests", "action_profiles",
                                         "value_sets", "controller_packet_metadata")
              for o in getattr(p4info, kind)]
    assert len(p4_ids) == len(set(p4_ids))
    p4_actions = {a.preamble.id for a in p4info.actions}
    for table in p4info.tables:
        assert table.preamble.id >> 24 == 0x02
        assert {r.id for r in table.action_refs} <= p4_actions
    json_tables = {t["name"] for p in doc["pipelines"] for t in p["tables"]}
    assert {t.preamble.name for t in p4info.tables} <= json_tables
