"""Header types, instances, scalars, stacks, unions, errors, enums and field aliases."""

from pathlib import Path

import pytest

from bufferlab.compiler import compile

P4 = Path(__file__).resolve().parents[1] / "p4"


def by_name(items):
    return {item["name"]: item for item in items}


@pytest.fixture(scope="module")
def router():
    return compile(P4 / "ipv4_lpm_router.p4")[0]


def test_scalars_and_standard_metadata_come_first(router):
    types = router["header_types"]
    assert [t["name"] for t in types[:4]] == ["scalars_0", "standard_metadata", "ethernet_t", "ipv4_t"]
    assert [t["id"] for t in types] == [0, 1, 2, 3]
    std = by_name(types)["standard_metadata"]["fields"]
    assert std[0] == ["ingress_port", 9, False]
    assert std[-2:] == [["priority", 3, False], ["_padding", 3, False]]
    headers = router["headers"]
    assert headers[0] == {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True, "pi_omit": True}
    assert headers[1]["name"] == "standard_metadata" and headers[1]["metadata"] is True
    assert by_name(headers)["ipv4"] == {"name": "ipv4", "id": 3, "header_type": "ipv4_t", "metadata": False,
                                        "pi_omit": True}


def test_field_aliases_come_from_v1model(router):
    aliases = dict((a, tuple(f)) for a, f in router["field_aliases"])
    assert aliases["queueing_metadata.enq_qdepth"] == ("standard_metadata", "enq_qdepth")
    assert aliases["intrinsic_metadata.mcast_grp"] == ("standard_metadata", "mcast_grp")
    assert len(aliases) == 9


def test_core_errors_then_user_errors():
    doc = compile(P4 / "parser_lookahead_advance_verify.p4")[0]
    assert doc["errors"][:7] == [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2],
                                 ["StackOutOfBounds", 3], ["HeaderTooShort", 4], ["ParserTimeout", 5],
                                 ["ParserInvalidArgument", 6]]
    assert doc["errors"][7:] == [["BadIpVersion", 7], ["OptionsTooLong", 8]]


def test_user_metadata_and_locals_are_packed_into_scalars():
    doc = compile(P4 / "switch_action_run_locals.p4")[0]
    scalars = doc["header_types"][0]
    assert scalars["fields"] == [["hops_0", 8, False], ["cpu_0", 9, False], ["userMetadata.verdict", 8, False],
                                 ["_padding_0", 7, False]]


def test_nested_metadata_structs_are_flattened_like_p4c():
    doc = compile(P4 / "digest_mac_learning.p4")[0]
    names = [f[0] for f in doc["header_types"][0]["fields"]]
    assert names[:2] == ["userMetadata._learn_srcAddr0", "userMetadata._learn_ingress_port1"]


def test_bool_and_enum_and_error_scalars():
    doc = compile(P4 / "enums_and_errors.p4")[0]
    fields = {f[0]: f for f in doc["header_types"][0]["fields"]}
    assert fields["userMetadata.parse_status"] == ["userMetadata.parse_status", 32, False]
    assert fields["userMetadata.last_op"][1] == 8
    assert doc["enums"] == [{"name": "color_t", "entries": [["GREEN", 0], ["YELLOW", 1], ["RED", 2]]}]
    copy = compile(P4 / "struct_header_copy.p4")[0]
    assert ["userMetadata.is_tunnel", 1, False] in copy["header_types"][0]["fields"]


def test_header_stack_elements_and_union_members():
    mpls = compile(P4 / "header_stack_mpls.p4")[0]
    ids = {h["name"]: h["id"] for h in mpls["headers"]}
    assert mpls["header_stacks"] == [{"name": "mpls", "id": 0, "size": 4, "header_type": "mpls_t",
                                      "header_ids": [ids[f"mpls[{i}]"] for i in range(4)]}]
    union = compile(P4 / "header_union_ip.p4")[0]
    ids = {h["name"]: h["id"] for h in union["headers"]}
    assert union["header_union_types"] == [{"name": "ip_t", "id": 0, "headers": [["v4", "ipv4_t"], ["v6", "ipv6_t"]]}]
    assert union["header_unions"] == [{"name": "ip", "id": 0, "union_type": "ip_t",
                                       "header_ids": [ids["ip.v4"], ids["ip.v6"]]}]


def test_signed_header_fields_are_marked(tmp_path):
    doc = compile(P4 / "bit_arithmetic_ops.p4")[0]
    calc = by_name(doc["header_types"])["calc_t"]["fields"]
    assert ["signed_val", 16, True] in calc


LOCAL_STRUCT = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct pair_t { bit<8> x; bit<8> y; bool f; }
struct meta_t { pair_t saved; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        pair_t p = { hdr.h.b, hdr.h.a, true };
        meta.saved = p;
        log_msg("p={}", {p});
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_struct_locals_are_metadata_header_instances(tmp_path):
    src = tmp_path / "local_struct.p4"
    src.write_text(LOCAL_STRUCT)
    doc = compile(src)[0]
    p = by_name(doc["headers"])["p_0"]
    assert (p["header_type"], p["metadata"]) == ("pair_t", True)
    assert by_name(doc["header_types"])["pair_t"]["fields"] == [["x", 8, False], ["y", 8, False], ["f", 1, 0],
                                                                ["_padding", 7, False]]
    prims = next(a for a in doc["actions"] if a["primitives"])["primitives"]
    assert [p["op"] for p in prims] == ["assign"] * 6 + ["log_msg"]
    assert prims[3]["parameters"] == [{"type": "field", "value": ["scalars", "userMetadata._saved_x0"]},
                                      {"type": "field", "value": ["p_0", "x"]}]
    assert prims[6]["parameters"][1]["value"] == [{"type": "header", "value": "p_0"}]


def test_struct_typed_header_fields_are_flattened_as_p4c_names_them():
    doc = compile(P4 / "header_struct_fields_named_args.p4")[0]
    tagged = next(h for h in doc["header_types"] if h["name"] == "tagged_t")
    assert tagged["fields"] == [["_kind0", 8, False], ["_tag_cls1", 4, False], ["_tag_color2", 4, False],
                                ["_seq3", 16, False]]
    recolor = next(a for a in doc["actions"] if a["name"] == "TagIngress.recolor")
    assert recolor["primitives"][0]["parameters"][0] == {"type": "field", "value": ["tagged", "_tag_color2"]}
