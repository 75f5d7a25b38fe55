"""Actions: expression lowering conventions, jumps, and v1model extern primitives."""

from pathlib import Path

import pytest

from bufferlab.compiler import compile

P4 = Path(__file__).resolve().parents[1] / "p4"


def actions_of(name):
    doc = compile(P4 / name)[0]
    return doc, {a["name"]: a for a in doc["actions"]}


def E(op, left, right, **extra):
    return {"type": "expression", "value": {"op": op, "left": left, "right": right, **extra}}


def F(h, f):
    return {"type": "field", "value": [h, f]}


def H(v):
    return {"type": "hexstr", "value": v}


def arg(expr):
    """An expression as a primitive argument: wrapped once more."""
    return {"type": "expression", "value": expr}


@pytest.fixture(scope="module")
def calc():
    return actions_of("bit_arithmetic_ops.p4")[1]


def assigned(action):
    return action["primitives"][0]["parameters"][1]


def test_action_data_and_subtraction_of_a_constant(calc):
    doc, actions = actions_of("ipv4_lpm_router.p4")
    fwd = actions["RouterIngress.ipv4_forward"]
    assert fwd["runtime_data"] == [{"name": "dstAddr", "bitwidth": 48}, {"name": "port", "bitwidth": 9}]
    assert fwd["primitives"][0]["op"] == "assign"
    assert fwd["primitives"][0]["parameters"] == [F("standard_metadata", "egress_spec"),
                                                  {"type": "runtime_data", "value": 1}]
    ttl = fwd["primitives"][3]["parameters"][1]
    assert ttl == arg(E("&", E("+", F("ipv4", "ttl"), H("0xff")), H("0xff")))
    assert list(fwd["primitives"][0]) == ["op", "parameters", "source_info"]


def test_arithmetic_is_masked_and_bitwise_is_not(calc):
    a, b = F("calc", "a"), F("calc", "b")
    mask = H("0xffffffff")
    assert assigned(calc["CalcIngress.op_add"]) == arg(E("&", E("+", a, b), mask))
    assert assigned(calc["CalcIngress.op_xor"]) == arg(E("^", a, b))
    assert assigned(calc["CalcIngress.op_not"]) == arg(E("&", E("~", None, a), mask))
    assert assigned(calc["CalcIngress.op_neg"]) == arg(E("&", E("-", H("0x00000000"), a), mask))
    assert assigned(calc["CalcIngress.op_shr"]) == arg(E("&", E(">>", a, H("0x4")), mask))


def test_saturating_slices_and_concatenation(calc):
    a8 = E("&", F("calc", "a"), H("0xff"))
    b8 = E("&", F("calc", "b"), H("0xff"))
    assert assigned(calc["CalcIngress.op_satadd"]) == arg(E("usat_cast", E("+", a8, b8), H("0x8")))
    assert assigned(calc["CalcIngress.op_satsub"]) == arg(E("usat_cast", E("-", a8, b8), H("0x8")))
    concat = assigned(calc["CalcIngress.op_concat"])
    assert concat == arg(E("|", E("&", E("<<", F("calc", "a"), H("0x20")), H("0xffffffffffffffff")),
                           E("&", F("calc", "b"), H("0xffffffff"))))
    slice_assign = calc["CalcIngress.op_slice_assign"]["primitives"][0]["parameters"]
    assert slice_assign[0] == F("calc", "result")
    assert slice_assign[1] == arg(E("|", E("&", F("calc", "result"), H("0x00ffffff")),
                                    E("&", E("<<", F("calc", "op"), H("0x18")), H("0xff000000"))))


def test_signed_arithmetic_uses_two_comp_mod(calc):
    signed = assigned(calc["CalcIngress.op_signed"])
    assert signed["value"]["value"]["op"] == "two_comp_mod"
    assert signed["value"]["value"]["right"] == H("0x10")


def test_ternary_operator(calc):
    expr = assigned(calc["CalcIngress.op_max"])["value"]["value"]
    assert expr["op"] == "?"
    assert expr["cond"] == E(">", F("calc", "a"), F("calc", "b"))


def test_return_inside_if_jumps_to_the_end():
    _, actions = actions_of("table_hit_miss_exit.p4")
    prims = actions["HmIngress.to_port"]["primitives"]
    assert [p["op"] for p in prims] == ["assign", "_jump_if_zero", "_jump", "assign"]
    assert list(prims[1]) == ["op", "source_info", "parameters"]
    cond, target = prims[1]["parameters"]
    assert cond == arg(E("b2d", None, E("==", {"type": "local", "value": 0}, H("0x0000"))))
    assert target == H("0x3")
    assert prims[2]["parameters"] == [H("0x4")]


def test_registers_counters_meters():
    _, reg = actions_of("register_flow_state.p4")
    prims = reg["RegIngress.update_flow"]["primitives"]
    assert prims[0] == {"op": "register_read", "parameters": [
        F("scalars", "userMetadata.packets"), {"type": "register_array", "value": "RegIngress.flow_packets"},
        F("scalars", "userMetadata.flow_index")], "source_info": prims[0]["source_info"]}
    assert prims[2]["op"] == "register_write"
    assert prims[2]["parameters"][:2] == [{"type": "register_array", "value": "RegIngress.flow_packets"},
                                          F("scalars", "userMetadata.flow_index")]
    doc, cnt = actions_of("counters_indirect.p4")
    assert cnt["CntIngress.to_port"]["primitives"][1]["parameters"] == [
        {"type": "counter_array", "value": "CntIngress.rx_both"}, {"type": "runtime_data", "value": 0}]
    assert [c["name"] for c in doc["counter_arrays"]] == ["CntIngress.rx_packets", "CntIngress.rx_bytes",
                                                          "CntIngress.rx_both", "CntEgress.tx_both"]
    assert doc["counter_arrays"][0]["size"] == 512 and doc["counter_arrays"][0]["is_direct"] is False
    doc, mtr = actions_of("meter_color_marking.p4")
    assert mtr["MtrIngress.police"]["primitives"][1]["parameters"] == [
        {"type": "meter_array", "value": "MtrIngress.class_meter"}, {"type": "runtime_data", "value": 0},
        F("scalars", "userMetadata.color")]
    meters = {m["name"]: m for m in doc["meter_arrays"]}
    assert meters["MtrIngress.class_meter"]["type"] == "bytes"
    assert meters["MtrIngress.port_meter"]["type"] == "packets"
    assert meters["MtrIngress.port_meter"]["size"] == 64 and meters["MtrIngress.port_meter"]["rate_count"] == 2


def test_direct_counter_and_meter_bindings():
    doc, _ = actions_of("direct_counter_table.p4")
    assert doc["counter_arrays"][0]["is_direct"] is True
    assert doc["counter_arrays"][0]["binding"] == "DcIngress.routes"
    assert "size" not in doc["counter_arrays"][0]
    routes = doc["pipelines"][0]["tables"][0]
    assert routes["with_counters"] is True
    doc, _ = actions_of("direct_meter_policer.p4")
    meter = doc["meter_arrays"][0]
    assert (meter["binding"], meter["size"], meter["result_target"]) == (
        "DmIngress.policer", 128, ["scalars", "userMetadata.color"])
    policer = next(t for t in doc["pipelines"][0]["tables"] if t["name"] == "DmIngress.policer")
    assert policer["direct_meters"] == "DmIngress.source_rate"


def test_clone_field_lists_resubmit_recirculate():
    doc, acts = actions_of("clone_sessions_mirror.p4")
    plain = acts["MirIngress.mirror_plain"]["primitives"][0]
    assert plain["op"] == "clone_ingress_pkt_to_egress"
    assert plain["parameters"] == [H("0x00000005"), H("0x00000001")]
    tagged = acts["MirIngress.mirror_tagged"]["primitives"][-1]
    assert tagged["parameters"] == [H("0x00000005"), H("0x00000002")]
    lists = {fl["name"]: fl for fl in doc["field_lists"]}
    assert lists["fl"]["elements"] == [] and lists["fl"]["id"] == 1
    assert lists["field_list1"]["elements"] == [F("scalars", "userMetadata.reason"),
                                                F("scalars", "userMetadata.original_port")]
    e2e = [p for a in doc["actions"] for p in a["primitives"] if p["op"] == "clone_egress_pkt_to_egress"]
    assert e2e[0]["parameters"][0] == H("0x00000006")
    doc, acts = actions_of("resubmit_recirculate.p4")
    ops = {p["op"]: p for a in doc["actions"] for p in a["primitives"]}
    lists = {fl["name"]: fl for fl in doc["field_lists"]}
    assert ops["resubmit"]["parameters"] == [H(f"0x{lists['field_list1']['id']:08x}")]
    assert ops["recirculate"]["parameters"] == [H(f"0x{lists['field_list2']['id']:08x}")]
    assert lists["field_list2"]["elements"] == [F("scalars", "userMetadata.passes"), F("scalars", "userMetadata.tag")]


def test_digest_learn_list():
    doc, acts = actions_of("digest_mac_learning.p4")
    assert doc["learn_lists"][0]["id"] == 1 and doc["learn_lists"][0]["name"] == "learn_t"
    prim = acts["LearnIngress.learn"]["primitives"][-1]
    assert prim["op"] == "generate_digest"
    assert prim["parameters"] == [H("0x00000001"), H("0x1")]


def test_hash_calculations_for_every_algorithm():
    doc, _ = actions_of("hash_all_algorithms.p4")
    assert [c["algo"] for c in doc["calculations"]] == [
        "crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity", "csum16", "xor16", "crc32"]
    csum = doc["calculations"][6]
    assert csum["input"][2] == {"type": "hexstr", "value": "0x00", "bitwidth": 8}
    prims = [p for a in doc["actions"] for p in a["primitives"] if p["op"] == "modify_field_with_hash_based_offset"]
    assert prims[-1]["parameters"] == [F("hashes", "bucket"), H("0x0064"), {"type": "calculation", "value": "calc_7"},
                                       H("0x00000008")]


def test_random_truncate_log_assert_assume():
    _, acts = actions_of("random_sampling.p4")
    rng = acts["RndIngress.sample"]["primitives"][0]
    assert rng["op"] == "modify_field_rng_uniform"
    assert rng["parameters"][:2] == [F("scalars", "userMetadata.draw"), H("0x0000")]
    _, acts = actions_of("multicast_truncate.p4")
    assert acts["McEgress.monitor_copy"]["primitives"][0]["parameters"] == [{"type": "runtime_data", "value": 0}]
    doc, acts = actions_of("log_assert_assume.p4")
    trace = acts["LogIngress.trace"]["primitives"][0]
    assert trace["parameters"] == [{"type": "string", "value": "trace level {} on port {}"},
                                   {"type": "parameters_vector",
                                    "value": [{"type": "runtime_data", "value": 0},
                                              F("standard_metadata", "ingress_port")]}]
    ops = [p["op"] for a in doc["actions"] for p in a["primitives"]]
    assert "assert" in ops and "assume" in ops


def test_checksums_update_then_verify():
    doc, _ = actions_of("checksum_udp_payload.p4")
    update, verify = doc["checksums"]
    assert (update["name"], update["verify"], update["update"]) == ("cksum", False, True)
    assert (verify["name"], verify["verify"], verify["update"]) == ("cksum_0", True, False)
    assert update["target"] == ["udp", "checksum"]
    calcs = {c["name"]: c for c in doc["calculations"]}
    assert calcs[update["calculation"]]["input"][-1] == {"type": "payload", "value": None}
    assert verify["if_cond"]["value"]["op"] == "and"


def test_header_copy_and_invalidation():
    _, acts = actions_of("struct_header_copy.p4")
    decap = acts["CopyIngress.decap"]["primitives"]
    assert decap[0]["op"] == "assign_header"
    assert decap[0]["parameters"] == [{"type": "header", "value": "outer"}, {"type": "header", "value": "inner"}]
    assert decap[1]["op"] == "remove_header"
    assert decap[2]["parameters"][1] == arg(E("b2d", None, {"type": "bool", "value": True}))


def test_runtime_stack_index():
    _, acts = actions_of("header_stack_runtime_index.p4")
    record = acts["HopEgress.record"]["primitives"]
    element = E("dereference_header_stack", {"type": "header_stack", "value": "hop"}, {"type": "local", "value": 1})
    assert record[0] == {"op": "add_header", "parameters": [arg(element)], "source_info": record[0]["source_info"]}
    assert record[1]["parameters"][0] == arg(E("access_field", element, 0))


REGISTER_READ_VALUE = """
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
        h.h.v = r.read(4w1) + 1;
    }
}
control E(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control D(packet_out b, in hs h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
"""


def test_register_read_returning_a_value(tmp_path):
    src = tmp_path / "rr.p4"
    src.write_text(REGISTER_READ_VALUE)
    doc = compile(src)[0]
    prims = next(a for a in doc["actions"] if a["primitives"])["primitives"]
    assert prims[0]["op"] == "register_read"
    assert prims[0]["parameters"] == [F("scalars", "tmp"), {"type": "register_array", "value": "I.r"}, H("0x01")]
    assert prims[1]["parameters"][1] == arg(E("&", E("+", F("scalars", "tmp"), H("0x01")), H("0xff")))


def test_an_action_bound_to_other_arguments_is_copied_under_its_name():
    doc, cp = compile(P4 / "action_bound_twice.p4")
    copies = [a for a in doc["actions"] if a["name"] == "I.set_byte"]
    assert len(copies) == 2 and copies[0]["id"] != copies[1]["id"]
    writes = [c["primitives"][0]["parameters"][0] for c in copies]
    assert writes == [F("h", "a"), F("h", "b")]
    tables = {t["name"]: t for t in doc["pipelines"][0]["tables"]}
    assert tables["I.to_a"]["action_ids"][0] == copies[0]["id"]
    assert tables["I.to_b"]["action_ids"][0] == copies[1]["id"]
    assert [a.preamble.name for a in cp.actions].count("I.set_byte") == 1
