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
    assert hidden["primitives"][0]["parameters"] == [{"type": "field", "value": ["scalars", "hops_0"]},
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


INLINE = """
#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; }}
struct headers_t {{ h_t h; }}
struct meta_t {{ bit<8> x; }}
bit<8> twice(in bit<8> v) {{ return v + v; }}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control C(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    {locals}
    apply {{
{body}
    }}
}}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def inline(tmp_path, locals_, body):
    src = tmp_path / "inline.p4"
    src.write_text(INLINE.format(locals=locals_, body=body))
    doc = compile(src)[0]
    pipe = doc["pipelines"][0]
    return doc, pipe, {t["name"]: t for t in pipe["tables"]}, {a["name"]: a for a in doc["actions"]}


def test_computed_keys_get_key_temporaries(tmp_path):
    doc, pipe, tables, actions = inline(
        tmp_path, "table t { key = { hdr.h.a + hdr.h.b : exact @name(\"sum\"); } actions = { NoAction; } }",
        "t.apply();")
    assert tables["I.t"]["key"] == [{"match_type": "exact", "name": "sum", "target": ["scalars", "key_0"],
                                     "mask": None}]
    first = tables[pipe["init_table"]]
    assert first["base_default_next"] == "I.t"
    prims = actions[first["actions"][0]]["primitives"]
    assert prims[0]["parameters"][0] == {"type": "field", "value": ["scalars", "key_0"]}
    assert ["key_0", 8, False] in doc["header_types"][0]["fields"]


def test_functions_are_inlined(tmp_path):
    _, _, _, actions = inline(tmp_path, "", "hdr.h.a = twice(hdr.h.b);")
    prim = next(a for a in actions.values() if a["primitives"])["primitives"][0]
    value = prim["parameters"][1]["value"]["value"]
    assert value["op"] == "&" and value["left"]["value"] == {
        "op": "+", "left": {"type": "field", "value": ["h", "b"]}, "right": {"type": "field", "value": ["h", "b"]}}


def test_actions_are_numbered_like_p4c():
    doc = compile(P4 / "ipv4_lpm_router.p4")[0]
    assert [(a["name"], a["id"]) for a in doc["actions"][:3]] == [
        ("NoAction", 0), ("RouterIngress.drop", 1), ("RouterIngress.ipv4_forward", 2)]
    table = doc["pipelines"][0]["tables"][0]
    assert table["action_ids"] == [2, 1, 0]


def test_table_result_inside_a_larger_condition_goes_through_a_temporary(tmp_path):
    doc, pipe, tables, actions = inline(tmp_path, "table t { key = { hdr.h.a : exact; } actions = { NoAction; } }",
                                        "if (t.apply().hit && hdr.h.b == 1) { sm.egress_spec = 1; }")
    table = tables["I.t"]
    assert pipe["init_table"] == "I.t" and table["base_default_next"] is None
    hit, miss = (tables[table["next_tables"][k]] for k in ("__HIT__", "__MISS__"))
    stored = [actions[x["actions"][0]]["primitives"][0]["parameters"] for x in (hit, miss)]
    true, false = ({"type": "expression", "value": {"type": "expression", "value": {
        "op": "b2d", "left": None, "right": {"type": "bool", "value": v}}}} for v in (True, False))
    assert stored == [[{"type": "field", "value": ["scalars", "tmp"]}, true],
                      [{"type": "field", "value": ["scalars", "tmp"]}, false]]
    cond = pipe["conditionals"][0]
    assert hit["base_default_next"] == miss["base_default_next"] == cond["name"]
    assert cond["expression"]["value"]["op"] == "and"
    assert cond["expression"]["value"]["left"]["value"] == {
        "op": "d2b", "left": None, "right": {"type": "field", "value": ["scalars", "tmp"]}}


def test_table_result_the_condition_may_skip_is_applied_only_on_its_branch(tmp_path):
    doc, pipe, tables, actions = inline(tmp_path, "table t { key = { hdr.h.a : exact; } actions = { NoAction; } }",
                                        "if (hdr.h.b == 1 || t.apply().hit) { sm.egress_spec = 1; }")
    first, last = pipe["conditionals"]
    assert pipe["init_table"] == first["name"]
    assert first["expression"]["value"]["op"] == "=="

    def stored(table: str) -> dict:
        return actions[tables[table]["actions"][0]]["primitives"][0]["parameters"][1]["value"]["value"]["right"]

    # `||` decided: the temporary is true and t is never applied on this branch.
    decided = first["true_next"]
    assert stored(decided) == {"type": "bool", "value": True}
    assert tables[decided]["base_default_next"] == last["name"]
    # Otherwise t is applied, and the or's value is its hit.
    assert first["false_next"] == "I.t"
    t = tables["I.t"]
    hit, miss = (t["next_tables"][k] for k in ("__HIT__", "__MISS__"))
    assert (stored(hit), stored(miss)) == ({"type": "bool", "value": True}, {"type": "bool", "value": False})
    assert last["expression"]["value"]["right"]["value"] == ["scalars", "tmp"]



def test_for_loop_in_apply_block_runs_in_a_synthesized_action():
    _, pipe, tables, _, actions = pipeline("control_loops_and_table_results.p4")
    loop = next(a for a in actions.values() if a["name"].startswith("control_loops_and_table_results")
                and any(p["op"] == "_jump" for p in a["primitives"]))
    ops = [p["op"] for p in loop["primitives"]]
    assert ops.count("_jump_if_zero") == 2 and ops.count("_jump") == 2


def test_for_loop_applying_a_table_in_an_apply_block_is_rejected(tmp_path):
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        inline(tmp_path, "table t { key = { hdr.h.a : exact; } actions = { NoAction; } }",
               "for (bit<8> i = 0; i < 2; i = i + 1) { t.apply(); }")
    assert "for loop that applies a table" in err.value.message and err.value.pos.line == 15


STRUCT_REGISTER = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hs { h_t h; }
struct pair_t { bit<8> x; bit<8> y; }
struct ms { pair_t p; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    register<pair_t>(4) pairs;
    apply { pairs.read(meta.p, 0); }
}
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_struct_typed_register_is_rejected_as_p4c_does(tmp_path):
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    src = tmp_path / "reg.p4"
    src.write_text(STRUCT_REGISTER)
    with pytest.raises(CompileError) as err:
        compile(src)
    assert err.value.pos.line == 13
    assert "registers with types other than bit<> or int<> are not supported" in err.value.message


def test_switch_on_a_value_becomes_a_conditional_chain():
    _, pipe, tables, conds, actions = pipeline("value_switch_loops_functions.p4")
    chain = [c for c in conds.values() if c["expression"]["value"]["op"] in ("==", "or")]
    assert chain[0]["true_next"] == "tbl_sum_to_count"
    assert chain[-1]["expression"]["value"]["op"] == "or"
    loop = [p["op"] for p in actions["WorkIngress.sum_to_count"]["primitives"]]
    assert loop.count("_jump") >= 3 and "_jump_if_zero" in loop


def test_one_control_type_for_two_blocks_with_tables_is_rejected(tmp_path):
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    src = tmp_path / "twice.p4"
    src.write_text(INLINE.format(locals="table t { key = { hdr.h.a : exact; } actions = { NoAction; } }",
                                 body="t.apply();").replace("V1Switch(P(), C(), I(), E(), C(), D())",
                                                             "V1Switch(P(), C(), I(), I(), C(), D())"))
    with pytest.raises(CompileError) as err:
        compile(src)
    assert "I.t" in err.value.message and "twice" in err.value.message


def test_copy_in_only_where_the_callee_could_overwrite_the_argument():
    _, pipe, tables, _, actions = pipeline("copy_in_arguments.p4")
    first = actions[tables[pipe["init_table"]]["actions"][0]]
    assert first["primitives"][0]["parameters"] == [{"type": "field", "value": ["scalars", "original_0"]},
                                                    {"type": "field", "value": ["rewrite", "a"]}]
    _, _, _, _, classify = pipeline("subcontrol_nested_actions.p4")
    assert "original_0" not in str(classify) and "addr_0" not in str(classify)


READ_IN_CONDITION = """
#define V1MODEL_VERSION 20200408
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> v; }
struct hs { h_t h; }
struct ms { bit<8> i; }
parser P(packet_in b, out hs h, inout ms m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout hs h, inout ms m) { apply { } }
control I(inout hs h, inout ms m, inout standard_metadata_t sm) {
    register<bit<8>, bit<4>>(16) r;
    apply {
        if (r.read(h.h.v[3:0]) == 0) {
            sm.egress_spec = 1;
        }
    }
}
control E(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control D(packet_out b, in hs h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
"""


def test_register_read_in_a_condition_runs_in_an_action_first(tmp_path):
    src = tmp_path / "read_cond.p4"
    src.write_text(READ_IN_CONDITION)
    doc = compile(src)[0]
    pipe = doc["pipelines"][0]
    tables = {t["name"]: t for t in pipe["tables"]}
    first = tables[pipe["init_table"]]
    reader = next(a for a in doc["actions"] if a["name"] == first["actions"][0])
    assert reader["primitives"][0]["op"] == "register_read"
    cond = next(c for c in pipe["conditionals"] if c["name"] == first["base_default_next"])
    assert cond["expression"]["value"]["left"] == {"type": "field", "value": ["scalars", "tmp"]}


def test_function_with_statements_inlined_into_an_expression_stores_its_result(tmp_path):
    src = tmp_path / "fn.p4"
    src.write_text(INLINE.format(locals="", body="hdr.h.a = pick(hdr.h.b);").replace(
        "control C(", "bit<8> pick(in bit<8> v) {\n    if (v == 0) { return 7; }\n    return v;\n}\ncontrol C("))
    doc = compile(src)[0]
    prims = next(a for a in doc["actions"] if a["primitives"])["primitives"]
    assert [p["op"] for p in prims] == ["_jump_if_zero", "assign", "_jump", "assign", "_jump", "assign"]
    assert prims[1]["parameters"] == [{"type": "field", "value": ["scalars", "tmp"]},
                                      {"type": "hexstr", "value": "0x07"}]
    assert prims[2]["parameters"] == [{"type": "hexstr", "value": "0x5"}]
    assert prims[5]["parameters"] == [{"type": "field", "value": ["h", "a"]},
                                      {"type": "field", "value": ["scalars", "tmp"]}]


def test_value_returning_register_read_writes_the_assigned_local_directly():
    _, _, _, _, actions = pipeline("function_calls_in_expressions.p4")
    reads = [p for a in actions.values() for p in a["primitives"] if p["op"] == "register_read"]
    assert reads[0]["parameters"][0] == {"type": "field", "value": ["scalars", "seen_0"]}
    assert reads[1]["parameters"][0] == {"type": "field", "value": ["fn", "count"]}
    # As a function argument the value is copied in: the read writes the parameter's local.
    assert reads[2]["parameters"][0] == {"type": "field", "value": ["scalars", "v_0"]}


def test_switch_on_a_function_value_computes_it_once(tmp_path):
    src = tmp_path / "sw.p4"
    body = ("switch (low(hdr.h.a)) {\n 1: { sm.egress_spec = 1; }\n 2: { sm.egress_spec = 2; }\n"
            " default: { sm.egress_spec = 3; }\n}")
    src.write_text(INLINE.format(locals="", body=body).replace(
        "control C(", "bit<8> low(in bit<8> v) {\n    bit<8> r = v & 3;\n    return r;\n}\ncontrol C("))
    doc = compile(src)[0]
    pipe = doc["pipelines"][0]
    first = next(t for t in pipe["tables"] if t["name"] == pipe["init_table"])
    compute = next(a for a in doc["actions"] if a["name"] == first["actions"][0])
    assert compute["primitives"][-1]["parameters"][0] == {"type": "field", "value": ["scalars", "tmp"]}
    tested = [c["expression"]["value"]["left"] for c in pipe["conditionals"]]
    assert tested == [{"type": "field", "value": ["scalars", "tmp"]}] * 2


def test_table_applied_from_two_places_is_one_node_with_shared_successors():
    _, pipe, tables, conds, _ = pipeline("table_applied_twice.p4")
    assert [t["name"] for t in pipe["tables"]].count("I.tag") == 1
    assert tables["I.first"]["base_default_next"] == tables["I.second"]["base_default_next"] == "I.tag"
    after_tag = tables["I.tag"]["base_default_next"]
    assert conds[after_tag]["true_next"] == "I.fwd"
    assert tables[conds[after_tag]["false_next"]]["base_default_next"] == "I.fwd"


def test_table_applied_where_it_continues_differently_is_rejected(tmp_path):
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    table = "table t { key = { hdr.h.a : exact; } actions = { NoAction; } }"
    with pytest.raises(CompileError) as err:
        inline(tmp_path, table, "if (hdr.h.b == 1) { t.apply(); sm.egress_spec = 1; } t.apply();")
    assert "multiple successors" in err.value.message
    assert (err.value.pos.line, err.value.pos.column) == (15, 54)
    with pytest.raises(CompileError) as err:
        inline(tmp_path, table + " table u { actions = { NoAction; } }",
               "if (hdr.h.b == 1) { t.apply(); } else { sm.egress_spec = 1; } t.apply(); u.apply();")
    assert "multiple successors" in err.value.message


def test_unused_direct_instances_are_left_out_with_a_warning():
    from bufferlab.compiler.api import compile_program

    result = compile_program(P4 / "unused_direct_empty_field_list.p4")
    assert result.json["counter_arrays"] == [] and result.json["meter_arrays"] == []
    assert [w.message for w in result.warnings] == [
        "direct counter I.unused_counter is not used by any table; ignoring it",
        "direct meter I.unused_meter is not used by any table; ignoring it",
    ]
    assert [(f["name"], f["elements"]) for f in result.json["field_lists"]] == [("field_list2", [])]


def test_deprecated_forms_keep_the_fields_their_data_names(tmp_path):
    doc, _, _, actions = inline(tmp_path, "", "resubmit({ meta.x, hdr.h.a });")
    (fl,) = doc["field_lists"]
    assert fl["elements"] == [{"type": "field", "value": ["scalars", "userMetadata.x"]},
                              {"type": "field", "value": ["h", "a"]}]
    prim = next(p for a in actions.values() for p in a["primitives"] if p["op"] == "resubmit")
    assert prim["parameters"] == [{"type": "hexstr", "value": f"0x{fl['id']:08x}"}]


def test_deprecated_forms_refuse_data_that_is_not_a_field(tmp_path):
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        inline(tmp_path, "", "recirculate({ meta.x, 8w3 });")
    assert err.value.message == ("a value other than a field in the data of resubmit, recirculate or "
                                 "clone3 is not supported by the BMv2 back end")
    assert (err.value.pos.line, err.value.pos.column) == (15, 13)


def test_a_varbit_assignment_copies_it_with_its_length(tmp_path):
    src = tmp_path / "vb.p4"
    src.write_text(INLINE.replace("header h_t {{ bit<8> a; bit<8> b; }}", "header h_t {{ bit<8> a; varbit<16> b; }}")
                   .replace("pkt.extract(hdr.h);", "pkt.extract(hdr.h, 8);")
                   .format(locals="varbit<16> v;", body="v = hdr.h.b; hdr.h.b = v;"))
    doc = compile(src)[0]
    # The local is a one-field metadata header: BMv2 keeps a varbit's length in a `*` field.
    (local,) = [h for h in doc["headers"] if h["header_type"] == "varbit_16"]
    assert local["metadata"] is True
    assert [t for t in doc["header_types"] if t["name"] == "varbit_16"][0]["fields"] == [["value", "*"]]
    prims = [p for a in doc["actions"] for p in a["primitives"] if p["op"] == "assign_VL"]
    v = {"type": "field", "value": [local["name"], "value"]}
    b = {"type": "field", "value": ["h", "b"]}
    assert [p["parameters"] for p in prims] == [[v, b], [b, v]]
