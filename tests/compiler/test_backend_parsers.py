"""Parse states: extract forms, set/verify/advance ops, select keys, masks, ranges, value sets."""

from pathlib import Path

import pytest

from bufferlab.compiler import compile
from bufferlab.compiler.bmv2.parsers import range_to_masks
from bufferlab.compiler.diagnostics import CompileError

P4 = Path(__file__).resolve().parents[1] / "p4"


def states(name):
    doc = compile(P4 / name)[0]
    assert [p["name"] for p in doc["parsers"]] == ["parser"]
    return doc, {s["name"]: s for s in doc["parsers"][0]["parse_states"]}


def tr(kind, value, mask, nxt):
    return {"type": kind, "value": value, "mask": mask, "next_state": nxt}


def test_range_to_masks_covers_exactly_the_range():
    for low, high, width in [(0, 1500, 16), (5, 15, 4), (1, 1, 8), (0, 255, 8), (3, 200, 8)]:
        covered = {v for v in range(1 << width)
                   for value, mask in range_to_masks(low, high, width) if v & mask == value}
        assert covered == set(range(low, high + 1))
    assert range_to_masks(0, 255, 8) == [(0, 0)]


def test_select_on_field_with_default():
    doc, st = states("ipv4_lpm_router.p4")
    start = st["start"]
    assert doc["parsers"][0]["init_state"] == "start"
    assert start["parser_ops"] == [{"parameters": [{"type": "regular", "value": "ethernet"}], "op": "extract"}]
    assert start["transition_key"] == [{"type": "field", "value": ["ethernet", "etherType"]}]
    assert start["transitions"] == [tr("hexstr", "0x0800", None, "parse_ipv4"), tr("default", None, None, None)]
    assert st["parse_ipv4"]["transitions"] == [tr("default", None, None, None)]


def test_masks_ranges_and_tuple_keys():
    _, st = states("parser_select_masks_ranges.p4")
    start = st["start"]["transitions"]
    assert start[1] == tr("hexstr", "0x0800", None, "parse_ipv4")
    ranges = [t for t in start if t["next_state"] is None and t["type"] == "hexstr"]
    assert ranges[0] == tr("hexstr", "0x0000", "0xfc00", None)
    assert ranges[-1] == tr("hexstr", "0x05dc", None, None)
    vlan = st["parse_vlan"]
    assert vlan["transitions"][:2] == [tr("hexstr", "0x00000000", "0x0fff0000", None),
                                       tr("hexstr", "0x00000800", "0x0000ffff", "parse_ipv4")]
    ipv4 = st["parse_ipv4"]["transitions"]
    assert ipv4[0] == tr("hexstr", "0x00000506", None, "parse_tcp")
    assert tr("hexstr", "0x00000811", "0x1fff08ff", "parse_udp") in ipv4
    assert ipv4[-1] == tr("default", None, None, None)
    assert st["parse_tcp"]["parser_ops"][1] == {
        "parameters": [{"type": "field", "value": ["scalars", "userMetadata.path"]},
                       {"type": "hexstr", "value": "0x01"}], "op": "set"}


def test_value_set_transition_and_declaration():
    doc, st = states("parser_value_set.p4")
    assert st["start"]["transitions"][0] == tr("parse_vset", "PvsParser.tunnel_ethertypes", None, "parse_tunnel")
    assert doc["parse_vsets"] == [{"name": "PvsParser.tunnel_ethertypes", "id": 0,
                                   "source_info": doc["parse_vsets"][0]["source_info"],
                                   "compressed_bitwidth": 16, "max_size": 4}]


def test_lookahead_verify_and_advance():
    _, st = states("parser_lookahead_advance_verify.p4")
    assert st["start"]["transition_key"] == [{"type": "lookahead", "value": [0, 4]}]
    assert st["start"]["transitions"][0] == tr("hexstr", "0x04", None, "parse_ipv4")
    verify = st["parse_ipv4"]["parser_ops"][1]
    assert verify["op"] == "verify"
    assert verify["parameters"][1] == {"type": "hexstr", "value": "0x7"}
    assert verify["parameters"][0]["value"]["op"] == "=="
    ops = st["skip_options"]["parser_ops"]
    assert ops[0]["op"] == "set"
    assert ops[0]["parameters"][1] == {"type": "lookahead", "value": [0, 8]}
    assert ops[1]["op"] == "advance"
    # BMv2 reads an `expression` operand's value as a typed operand: wrapped twice.
    assert ops[1]["parameters"][0]["type"] == "expression"
    assert ops[1]["parameters"][0]["value"]["value"]["op"] == "&"


def test_stack_next_and_last_field():
    _, st = states("header_stack_mpls.p4")
    mpls = st["parse_mpls"]
    assert mpls["parser_ops"] == [{"parameters": [{"type": "stack", "value": "mpls"}], "op": "extract"}]
    assert mpls["transition_key"] == [{"type": "stack_field", "value": ["mpls", "bos"]}]
    assert mpls["transitions"] == [tr("hexstr", "0x00", None, "parse_mpls"), tr("hexstr", "0x01", None, "parse_ipv4")]
    _, hop = states("header_stack_runtime_index.p4")
    assert hop["parse_hop3"]["parser_ops"][2] == {"parameters": [{"type": "regular", "value": "hop[2]"}],
                                                  "op": "extract"}


def test_union_member_extract():
    _, st = states("header_union_ip.p4")
    assert st["parse_v6"]["parser_ops"] == [{"parameters": [{"type": "regular", "value": "ip.v6"}], "op": "extract"}]


def test_sub_parser_is_inlined_around_the_call():
    _, st = states("subparser_inline.p4")
    assert st["parse_ipv4"]["transitions"] == [tr("default", None, None, "l4_parser_start")]
    sub = st["l4_parser_start"]
    assert sub["transition_key"] == [{"type": "field", "value": ["ipv4", "protocol"]}]
    assert sub["transitions"][-1] == tr("default", None, None, "parse_ipv4_0")
    assert st["l4_parser_parse_tcp"]["parser_ops"][1]["parameters"] == [
        {"type": "field", "value": ["scalars", "userMetadata.l4_dst"]}, {"type": "field", "value": ["tcp", "dstPort"]}]
    assert st["parse_ipv4_0"]["transitions"] == [tr("default", None, None, None)]


def test_serializable_enum_keysets():
    _, st = states("enums_and_errors.p4")
    assert st["parse_op"]["transitions"][0] == tr("hexstr", "0x01", None, None)


PARSER_WITH_PRIMITIVES = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t extra; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        hdr.extra.setValid();
        meta.x = hdr.h.a + hdr.h.b;
        transition select(hdr.h.a[3:0]) {
            1: accept;
            default: reject;
        }
    }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_parser_primitives_are_wrapped_and_computed_keys_use_temporaries(tmp_path):
    src = tmp_path / "prim.p4"
    src.write_text(PARSER_WITH_PRIMITIVES)
    doc = compile(src)[0]
    start = doc["parsers"][0]["parse_states"][0]
    ops = start["parser_ops"]
    assert ops[1] == {"parameters": [{"op": "add_header", "parameters": [{"type": "header", "value": "extra"}]}],
                      "op": "primitive"}
    assert ops[2]["op"] == "set" and ops[2]["parameters"][1]["value"]["value"]["op"] == "&"
    assert ops[3]["op"] == "set" and ops[3]["parameters"][0] == {"type": "field", "value": ["scalars", "tmp"]}
    assert start["transition_key"] == [{"type": "field", "value": ["scalars", "tmp"]}]
    assert start["transitions"] == [tr("hexstr", "0x01", None, None), tr("default", None, None, None)]
    assert doc["deparsers"][0]["order"] == ["h", "extra"]


VARBIT_PARSER = """
#include <core.p4>
#include <v1model.p4>
header opt_len_t { bit<4> kind; bit<4> words; }
header opts_t { bit<8> kind_words; varbit<120> data; }
struct headers_t { opts_t opts; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.opts, (bit<32>)pkt.lookahead<opt_len_t>().words * 32);
        transition accept;
    }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.opts); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_varbit_extract_with_lookahead_length(tmp_path):
    src = tmp_path / "varbit.p4"
    src.write_text(VARBIT_PARSER)
    doc = compile(src)[0]
    opts = next(t for t in doc["header_types"] if t["name"] == "opts_t")
    assert opts["fields"] == [["kind_words", 8, False], ["data", "*"]]
    assert opts["max_length"] == 16
    ops = doc["parsers"][0]["parse_states"][0]["parser_ops"]
    assert ops[0] == {"parameters": [{"type": "field", "value": ["scalars", "tmp"]},
                                     {"type": "lookahead", "value": [4, 4]}], "op": "set"}
    assert ops[1]["op"] == "extract_VL"
    assert ops[1]["parameters"][0] == {"type": "regular", "value": "opts"}
    assert "lookahead" not in str(ops[1]["parameters"][1])


UNION_STACK = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> kind; bit<8> v; }
header b_t { bit<8> kind; bit<16> w; }
header_union ab_t { a_t a; b_t b; }
struct headers_t { ab_t[2] items; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        transition select(pkt.lookahead<bit<8>>()) { 1: parse_a; 2: parse_b; default: accept; }
    }
    state parse_a { pkt.extract(hdr.items.next.a); transition start; }
    state parse_b { pkt.extract(hdr.items.next.b); transition start; }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.items); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_header_union_stack_extracts(tmp_path):
    src = tmp_path / "ustack.p4"
    src.write_text(UNION_STACK)
    doc = compile(src)[0]
    st = {s["name"]: s for s in doc["parsers"][0]["parse_states"]}
    assert st["parse_b"]["parser_ops"] == [{"parameters": [{"type": "union_stack", "value": ["items", "b"]}],
                                            "op": "extract"}]
    unions = {u["name"]: u["id"] for u in doc["header_unions"]}
    assert doc["header_union_stacks"] == [{"name": "items", "id": 0, "union_type": "ab_t",
                                           "header_union_ids": [unions["items[0]"], unions["items[1]"]]}]
    assert doc["deparsers"][0]["order"] == ["items[0].a", "items[0].b", "items[1].a", "items[1].b"]


def test_parser_locals_are_initialised_in_the_start_state(tmp_path):
    src = tmp_path / "init.p4"
    src.write_text(PARSER_WITH_PRIMITIVES.replace(
        "parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {",
        "parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {\n"
        "    bit<8> seen = 3;").replace("meta.x = hdr.h.a + hdr.h.b;", "meta.x = seen;"))
    doc = compile(src)[0]
    ops = doc["parsers"][0]["parse_states"][0]["parser_ops"]
    assert ops[0] == {"parameters": [{"type": "field", "value": ["scalars", "seen_0"]},
                                     {"type": "hexstr", "value": "0x03"}], "op": "set"}
    assert {"parameters": [{"type": "field", "value": ["scalars", "userMetadata.x"]},
                           {"type": "field", "value": ["scalars", "seen_0"]}], "op": "set"} in ops


NESTED_SUBPARSERS = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t[3] s; }
struct meta_t { bit<8> x; }
parser Inner(packet_in pkt, inout headers_t hdr) {
    state start { pkt.extract(hdr.s.next); transition accept; }
}
parser Outer(packet_in pkt, inout headers_t hdr) {
    Inner() i1;
    Inner() i2;
    state start { i1.apply(pkt, hdr); transition select(hdr.h.a) { 1: more; default: accept; } }
    state more { i2.apply(pkt, hdr); transition accept; }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Outer() o;
    state start { pkt.extract(hdr.h); o.apply(pkt, hdr); transition accept; }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.s); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_nested_sub_parsers_get_nested_state_names(tmp_path):
    src = tmp_path / "nested.p4"
    src.write_text(NESTED_SUBPARSERS)
    doc = compile(src)[0]
    st = {s["name"]: s for s in doc["parsers"][0]["parse_states"]}
    assert list(st) == ["start", "o_start", "o_i1_start", "o_start_0", "o_more", "o_i2_start", "o_more_0",
                        "start_0"]
    assert st["o_start_0"]["transitions"][0] == tr("hexstr", "0x01", None, "o_more")
    assert st["o_more_0"]["transitions"] == [tr("default", None, None, "start_0")]


SUBPARSER_COPY_IN = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t next; }
struct meta_t { bit<8> x; }
parser Again(packet_in pkt, inout headers_t hdr, in bit<8> kind) {
    state start {
        pkt.extract(hdr.h);
        transition select(kind) { 1: accept; default: reject; }
    }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Again() again;
    state start { pkt.extract(hdr.h); again.apply(pkt, hdr, hdr.h.a); transition accept; }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_sub_parser_in_argument_copied_when_the_sub_parser_overwrites_it(tmp_path):
    src = tmp_path / "again.p4"
    src.write_text(SUBPARSER_COPY_IN)
    doc = compile(src)[0]
    st = {s["name"]: s for s in doc["parsers"][0]["parse_states"]}
    assert st["start"]["parser_ops"][-1] == {"parameters": [{"type": "field", "value": ["scalars", "kind_0"]},
                                                            {"type": "field", "value": ["h", "a"]}], "op": "set"}
    assert st["again_start"]["transition_key"] == [{"type": "field", "value": ["scalars", "kind_0"]}]


REJECTING = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hs { h_t h; }
struct ms { bit<8> x; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            1: accept;
            2: reject;
            default: dangling;
        }
    }
    state dangling { }
}
control C(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def test_reject_becomes_a_null_next_state_with_p4cs_warning(tmp_path):
    from bufferlab.compiler.api import compile_program

    src = tmp_path / "reject.p4"
    src.write_text(REJECTING)
    result = compile_program(src)
    start, dangling = result.json["parsers"][0]["parse_states"]
    assert [t["next_state"] for t in start["transitions"]] == [None, None, "dangling"]
    assert dangling["transitions"] == [tr("default", None, None, None)]
    messages = [(w.pos.line, w.message) for w in result.warnings]
    assert (12, "explicit transition to reject not supported on this target (parsing ends as on accept)") in messages
    assert (16, "dangling: implicit transition to `reject'; explicit transition to reject not supported on this "
                "target (parsing ends as on accept)") in messages


def test_if_in_a_parser_state_splits_the_state():
    _, by_name = states("parser_if_statements.p4")
    start = by_name["start"]
    assert start["transition_key"] == [{"type": "field", "value": ["scalars", "tmp"]}]
    assert start["transitions"] == [tr("hexstr", "0x01", None, "start_true_0"),
                                    tr("default", None, None, "start_join_0")]
    assert by_name["start_true_1"]["transitions"] == [tr("default", None, None, "start_join_1")]
    assert by_name["start_false_1"]["transitions"] == [tr("default", None, None, "start_join_1")]
    assert by_name["start_join_0"]["transitions"][0] == tr("hexstr", "0x0b", None, None)
    assert by_name["finish"]["transition_key"] == [{"type": "field", "value": ["opt", "$valid$"]}]


def test_a_sub_parser_applied_twice_gets_states_per_call_and_one_value_set():
    doc, st = states("subparser_applied_twice.p4")
    assert list(st) == ["start", "tags_start", "tags_mark", "start_0",
                        "again", "tags_1_start", "tags_1_mark", "again_0"]
    # Each copy returns to the state after its own call.
    assert st["tags_start"]["transitions"][-1]["next_state"] == "start_0"
    assert st["tags_1_start"]["transitions"][-1]["next_state"] == "again_0"
    assert st["tags_1_mark"]["transitions"] == [tr("default", None, None, "again_0")]
    assert [v["name"] for v in doc["parse_vsets"]] == ["TwiceParser.tags.special"]
    # The second call initialises the shared local again, then writes the second header.
    ops = st["tags_1_start"]["parser_ops"]
    assert [op["op"] for op in ops[:2]] == ["set", "extract"]
    assert ops[0]["parameters"] == st["tags_start"]["parser_ops"][0]["parameters"] == [
        {"type": "field", "value": ["scalars", "weight_0"]}, {"type": "hexstr", "value": "0x01"}]
    assert ops[1]["parameters"] == [{"type": "regular", "value": "second"}]


def test_empty_select_and_cases_after_one_matching_everything(tmp_path):
    _, st = states("empty_select.p4")
    assert st["start"]["transition_key"] == []
    assert st["start"]["transitions"] == [tr("default", None, None, "take_first")]
    # `_: take_second; default: accept;`: the second case is never reached, and BMv2 would
    # take a state's last default, so only the first is written.
    assert st["take_first"]["transitions"] == [tr("default", None, None, "take_second")]
    src = tmp_path / "bad.p4"
    src.write_text((P4 / "empty_select.p4").read_text().replace(
        "transition select() { default: take_first; }", "transition select() { 1: take_first; }"))
    import pytest

    from bufferlab.compiler.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        compile(src)
    assert err.value.message == "a select with no expressions takes only default or _"


def test_lookahead_of_a_header_and_a_struct():
    _, st = states("parser_lookahead_header.p4")

    def la(offset, width):
        return {"type": "lookahead", "value": [offset, width]}

    def add(header):
        return {"parameters": [{"op": "add_header", "parameters": [{"type": "header", "value": header}]}],
                "op": "primitive"}

    def set_(dest, source):
        return {"parameters": [{"type": "field", "value": dest}, source], "op": "set"}

    # a header is made valid before its fields are set: add_header zeroes it (p4c's ExpandLookahead)
    assert st["start"]["parser_ops"] == [
        add("ahead_0"),
        set_(["ahead_0", "kind"], la(0, 8)),
        set_(["ahead_0", "value"], la(8, 8)),
        set_(["scalars", "userMetadata.value"], {"type": "field", "value": ["ahead_0", "value"]}),
        set_(["scalars", "userMetadata._first_hi0"], la(0, 4)),
        set_(["scalars", "userMetadata._first_lo1"], la(4, 4)),
    ]
    assert st["start"]["transition_key"] == [{"type": "field", "value": ["ahead_0", "kind"]}]
    assert st["copy"]["parser_ops"] == [add("peek"), set_(["peek", "kind"], la(0, 8)),
                                        set_(["peek", "value"], la(8, 8))]


def test_lookahead_into_a_union_is_a_located_error(tmp_path):
    src = tmp_path / "union.p4"
    src.write_text("""#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> v; }
header b_t { bit<8> w; }
header_union ab_t { a_t a; b_t b; }
struct headers_t { ab_t u; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        hdr.u = pkt.lookahead<ab_t>();
        transition accept;
    }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.u); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
""")
    with pytest.raises(CompileError) as err:
        compile(src)
    assert err.value.pos.line == 10
    assert "a lookahead into this value" in str(err.value)
