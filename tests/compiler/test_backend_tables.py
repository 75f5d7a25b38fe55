"""Tables: keys and masks, match types, action lists, default entries, const entries, profiles."""

from pathlib import Path

from bufferlab.compiler import compile

P4 = Path(__file__).resolve().parents[1] / "p4"


def tables_of(name):
    doc = compile(P4 / name)[0]
    return doc, {t["name"]: t for p in doc["pipelines"] for t in p["tables"]}


def test_table_object_key_order_and_defaults():
    doc, tables = tables_of("basic_l2_forward.p4")
    dmac = tables["L2Ingress.dmac"]
    assert list(dmac) == ["name", "id", "source_info", "key", "match_type", "type", "max_size", "with_counters",
                          "support_timeout", "direct_meters", "action_ids", "actions", "base_default_next",
                          "next_tables", "default_entry"]
    assert dmac["key"] == [{"match_type": "exact", "name": "hdr.ethernet.dstAddr", "target": ["ethernet", "dstAddr"],
                            "mask": None}]
    assert dmac["max_size"] == 256
    drop = next(a["id"] for a in doc["actions"] if a["name"] == "L2Ingress.drop")
    assert dmac["default_entry"] == {"action_id": drop, "action_const": False, "action_data": [],
                                     "action_entry_const": False}


def test_missing_default_action_adds_noaction():
    doc, tables = tables_of("subparser_inline.p4")
    table = tables["SubIngress.by_l4_port"]
    assert table["actions"] == ["SubIngress.to_port", "NoAction"]
    noaction = next(a["id"] for a in doc["actions"] if a["name"] == "NoAction")
    assert table["default_entry"]["action_id"] == noaction
    assert table["max_size"] == 1024


def test_default_action_arguments_are_unpadded():
    _, tables = tables_of("range_match_l4_ports.p4")
    assert tables["ClassIngress.forward"]["default_entry"]["action_data"] == ["0x1"]


def test_ternary_optional_const_entries():
    _, tables = tables_of("acl_ternary_const_entries.p4")
    acl = tables["AclIngress.acl"]
    assert acl["match_type"] == "ternary"
    assert [k["match_type"] for k in acl["key"]] == ["ternary", "ternary", "ternary"]
    assert acl["max_size"] == 4
    assert acl["default_entry"]["action_const"] is True
    first = acl["entries"][0]
    assert first["match_key"] == [{"match_type": "ternary", "key": "0x0a000000", "mask": "0xff000000"},
                                  {"match_type": "ternary", "key": "0x0a000001", "mask": "0xffffffff"},
                                  {"match_type": "ternary", "key": "0x06", "mask": "0xff"}]
    assert first["action_entry"]["action_data"] == ["0x1"]
    assert [e["priority"] for e in acl["entries"]] == [1, 2, 3, 4]
    wildcard = acl["entries"][3]["match_key"]
    assert all(k["mask"] in ("0x00000000", "0x00") for k in wildcard)


def test_range_entries():
    _, tables = tables_of("range_match_l4_ports.p4")
    port_class = tables["ClassIngress.port_class"]
    assert port_class["match_type"] == "range"
    assert port_class["entries"][1]["match_key"] == [
        {"match_type": "range", "start": "0x1451", "end": "0x145a"},
        {"match_type": "range", "start": "0x0400", "end": "0xffff"}]
    assert port_class["entries"][0]["match_key"][1] == {"match_type": "range", "start": "0x0000", "end": "0xffff"}


def test_masked_key_names_and_global_table_names():
    _, tables = tables_of("table_properties_annotations.p4")
    assert "global_port_vrf" in tables
    assert tables["global_port_vrf"]["key"][0]["name"] == "port"
    l2 = tables["PropIngress.l2_by_vrf"]
    # `etherType & 0xff00` is computed into a key temporary first, as p4c's SimplifyKey does.
    assert l2["key"][2] == {"match_type": "ternary", "name": "ethertype_hi", "target": ["scalars", "key_0"],
                            "mask": None}
    assert l2["support_timeout"] is True and l2["max_size"] == 2048


def test_valid_key():
    _, tables = tables_of("struct_header_copy.p4")
    assert tables["CopyIngress.tunnel"]["key"][1] == {"match_type": "exact", "name": "hdr.inner.$valid$",
                                                      "target": ["inner", "$valid$"], "mask": None}


def test_action_profile_shared_by_two_tables():
    doc, tables = tables_of("action_profile_wcmp.p4")
    host, prefix = tables["ApIngress.host_routes"], tables["ApIngress.prefix_routes"]
    assert host["type"] == prefix["type"] == "indirect"
    assert host["action_profile"] == prefix["action_profile"] == "ApIngress.next_hops"
    assert "default_entry" not in host
    profiles = doc["pipelines"][0]["action_profiles"]
    assert [(p["name"], p["max_size"]) for p in profiles] == [("ApIngress.next_hops", 128)]


def test_action_selector_takes_selector_keys_as_input():
    doc, tables = tables_of("action_selector_ecmp.p4")
    ecmp = tables["EcmpIngress.ecmp_group"]
    assert ecmp["type"] == "indirect_ws"
    assert ecmp["key"] == [{"match_type": "lpm", "name": "hdr.ipv4.dstAddr", "target": ["ipv4", "dstAddr"],
                            "mask": None}]
    profile = doc["pipelines"][0]["action_profiles"][0]
    assert profile["name"] == ecmp["action_profile"]
    assert profile["max_size"] == 64
    assert profile["selector"] == {"algo": "crc16", "input": [
        {"type": "field", "value": ["ipv4", "srcAddr"]}, {"type": "field", "value": ["ipv4", "protocol"]},
        {"type": "field", "value": ["tcp", "srcPort"]}, {"type": "field", "value": ["tcp", "dstPort"]}]}


def test_const_entries_with_enum_values():
    _, tables = tables_of("enums_and_errors.p4")
    responder = tables["EnumIngress.responder"]
    assert responder["entries"][0]["match_key"] == [{"match_type": "exact", "key": "0x01"}]
    assert responder["entries"][0]["action_entry"]["action_data"] == ["0x2"]
    assert responder["max_size"] == 1


BOUND = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }
action drop_packet(inout standard_metadata_t smeta) { mark_to_drop(smeta); }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set; drop_packet(sm); }
        default_action = drop_packet(sm);
    }
    apply { t.apply(); }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_directional_arguments_bound_in_the_action_list(tmp_path):
    src = tmp_path / "bound.p4"
    src.write_text(BOUND)
    doc, p4info = compile(src)
    actions = {a["name"]: a for a in doc["actions"]}
    assert actions["drop_packet"]["runtime_data"] == []
    assert actions["drop_packet"]["primitives"][0]["parameters"] == [{"type": "header", "value": "standard_metadata"}]
    table = doc["pipelines"][0]["tables"][0]
    assert table["default_entry"] == {"action_id": actions["drop_packet"]["id"], "action_const": False,
                                      "action_data": [], "action_entry_const": False}
    assert [a.preamble.name for a in p4info.actions] == ["drop_packet", "I.set"]


def test_entry_priority_annotation(tmp_path):
    src = tmp_path / "prio.p4"
    text = (P4 / "acl_ternary_const_entries.p4").read_text()
    text = text.replace('#include "include/std_headers.p4"', f'#include "{P4}/include/std_headers.p4"')
    text = text.replace("(_, _, _) : deny();", "(_, _, _) : deny() @priority(10);")
    src.write_text(text)
    doc = compile(src)[0]
    assert [e["priority"] for e in doc["pipelines"][0]["tables"][0]["entries"]] == [1, 2, 3, 10]


def test_leading_priority_annotations_on_entries():
    _, tables = tables_of("header_struct_fields_named_args.p4")
    assert [e["priority"] for e in tables["TagIngress.by_kind"]["entries"]] == [1, 1, 2]


def test_a_mask_on_an_exact_key_is_named_as_such(tmp_path):
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    src = tmp_path / "mask.p4"
    src.write_text(BOUND.replace("actions = { set; drop_packet(sm); }",
                                 "actions = { set; drop_packet(sm); }\n        const entries = { 0x10 &&& 0xf0 : set(1); }"))
    with pytest.raises(CompileError) as err:
        compile(src)
    assert err.value.message == "an exact key takes a single value, not a mask or a range"
    assert (err.value.pos.line, err.value.pos.column) == (17, 27)
