"""Pipelines: tables and conditionals as a graph, hidden tables, hit/miss, switch, inlining."""

from pathlib import Path

from bufferlab.compiler import compile

P4 = Path(__file__).resolve().parents[1] / "p4"


def pipeline(name, which="ingress"):
    doc = compile(P4 / name)[0]
    pipe = next(p for p in doc["pipelines"] if p["name"] == which)
    tables = {t["name"]: t for t in pipe["tables"]}
    conds = {c["name"]: c for c in pipe["conditionals"]}
    actions = {a["name"]: a for a in doc["actions"]}
    return doc, pipe, tables, conds, actions


def test_pipelines_are_named_ingress_and_egress():
    doc = compile(P4 / "basic_l2_forward.p4")[0]
    assert [(p["name"], p["id"]) for p in doc["pipelines"]] == [("ingress", 0), ("egress", 1)]
    assert list(doc["pipelines"][0]) == ["name", "id", "source_info", "init_table", "tables",
                                         "action_profiles", "conditionals"]
    assert doc["pipelines"][1]["init_table"] is None


def test_if_becomes_conditional_and_direct_call_becomes_tbl_action():
    _, pipe, tables, conds, actions = pipeline("ipv4_lpm_router.p4")
    assert pipe["init_table"] == "node_0"
    cond = conds["node_0"]
    assert cond["expression"]["value"]["op"] == "and"
    assert cond["true_next"] == "RouterIngress.ipv4_lpm"
    assert cond["false_next"] == "tbl_drop"
    drop = tables["tbl_drop"]
    assert drop["key"] == [] and drop["actions"] == ["RouterIngress.drop"]
    assert drop["default_entry"] == {"action_id": actions["RouterIngress.drop"]["id"], "action_const": True,
                                     "action_data": [], "action_entry_const": True}
    assert drop["next_tables"] == {"RouterIngress.drop": None} and drop["base_default_next"] is None


def test_statement_runs_become_hidden_actions_named_after_file_and_line():
    _, pipe, tables, _, actions = pipeline("switch_action_run_locals.p4")
    assert pipe["init_table"] == "tbl_switch_action_run_locals55"
    hidden = actions["switch_action_run_locals55"]
    assert hidden["runtime_data"] == []
    assert hidden["primitives"][0]["parameters"] == [{"type": "field", "value": ["scalars", "hops"]},
                                                     {"type": "hexstr", "value": "0x00"}]
    assert tables["tbl_switch_action_run_locals55"]["base_default_next"] == "SwIngress.l2"


def test_switch_on_action_run():
    _, _, tables, _, _ = pipeline("switch_action_run_locals.p4")
    l2 = tables["SwIngress.l2"]
    assert l2["next_tables"] == {
        "SwIngress.unicast": "tbl_switch_action_run_locals58",
        "SwIngress.flood": "node_4",
        "SwIngress.to_cpu": "tbl_switch_action_run_locals61",
    }
    assert l2["base_default_next"] == "tbl_switch_action_run_locals70"
    assert tables["tbl_switch_action_run_locals58"]["base_default_next"] == "tbl_switch_action_run_locals70"


def test_hit_miss_and_exit():
    _, pipe, tables, _, actions = pipeline("table_hit_miss_exit.p4")
    assert pipe["init_table"] == "HmIngress.blocked"
    blocked = tables["HmIngress.blocked"]
    assert blocked["next_tables"] == {"__HIT__": "tbl_table_hit_miss_exit47", "__MISS__": "HmIngress.dmac"}
    assert blocked["base_default_next"] is None
    assert tables["HmIngress.dmac"]["next_tables"] == {"__HIT__": "HmIngress.smac",
                                                       "__MISS__": "tbl_table_hit_miss_exit51"}
    assert tables["HmIngress.smac"]["next_tables"] == {"__HIT__": None, "__MISS__": "tbl_table_hit_miss_exit54"}
    ops = [p["op"] for p in actions["table_hit_miss_exit47"]["primitives"]]
    assert ops == ["mark_to_drop", "exit"]


def test_conditional_numbers_share_the_node_counter():
    _, _, _, conds, _ = pipeline("switch_action_run_locals.p4")
    assert list(conds) == ["node_4"]


def test_sub_controls_are_inlined_per_instance():
    _, pipe, tables, conds, actions = pipeline("subcontrol_nested_actions.p4")
    assert conds["node_0"]["true_next"] == "NestIngress.src_classifier.classify"
    src = tables["NestIngress.src_classifier.classify"]
    assert src["key"] == [{"match_type": "lpm", "name": "addr", "target": ["ipv4", "srcAddr"], "mask": None}]
    assert src["base_default_next"] == "NestIngress.dst_classifier.classify"
    dst = tables["NestIngress.dst_classifier.classify"]
    assert dst["key"][0]["target"] == ["ipv4", "dstAddr"]
    assert actions["NestIngress.src_classifier.set_class"]["primitives"][0]["parameters"][0] == {
        "type": "field", "value": ["scalars", "userMetadata.src_class"]}
    assert actions["NestIngress.dst_classifier.set_class"]["primitives"][0]["parameters"][0] == {
        "type": "field", "value": ["scalars", "userMetadata.dst_class"]}


def test_actions_called_from_actions_are_inlined():
    _, _, _, _, actions = pipeline("subcontrol_nested_actions.p4")
    route = actions["NestIngress.route"]
    assert [p["parameters"][0]["value"] for p in route["primitives"]] == [
        ["ethernet", "srcAddr"], ["ethernet", "dstAddr"], ["ipv4", "ttl"], ["standard_metadata", "egress_spec"]]
    assert route["primitives"][0]["parameters"][1] == {"type": "runtime_data", "value": 0}
    assert "NestIngress.rewrite_src" not in actions


def test_egress_pipeline_and_queueing_fields():
    _, pipe, tables, conds, actions = pipeline("queue_telemetry_probe.p4", "egress")
    cond = conds[pipe["init_table"]]
    hidden = actions[tables[cond["true_next"]]["actions"][0]]
    sources = [p["parameters"][1] for p in hidden["primitives"]]
    assert {"type": "field", "value": ["standard_metadata", "deq_timedelta"]} in sources
