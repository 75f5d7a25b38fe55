"""P4Info golden tests: ids, names, aliases, match fields, params, table contents, externs."""

from pathlib import Path

import pytest
from p4.config.v1 import p4info_pb2

from bufferlab.compiler import compile
from bufferlab.compiler.p4info.files import p4info_text, write_p4info
from bufferlab.compiler.p4info.ids import jenkins_one_at_a_time

P4 = Path(__file__).resolve().parents[1] / "p4"


def p4id(prefix, name):
    return (prefix << 24) | (jenkins_one_at_a_time(name.encode()) & 0xFFFFFF)


def info(name):
    return compile(P4 / name)[1]


def by_name(items):
    return {i.preamble.name: i for i in items}


def test_router_tables_and_actions():
    p = info("ipv4_lpm_router.p4")
    assert p.pkg_info.arch == "v1model"
    table = by_name(p.tables)["RouterIngress.ipv4_lpm"]
    assert table.preamble.id == p4id(0x02, "RouterIngress.ipv4_lpm")
    assert table.preamble.alias == "ipv4_lpm"
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in table.match_fields] == [
        (1, "hdr.ipv4.dstAddr", 32, p4info_pb2.MatchField.LPM)]
    actions = by_name(p.actions)
    assert actions["NoAction"].preamble.id == 21257015
    assert list(actions["NoAction"].preamble.annotations) == ['@noWarn("unused")']
    forward = actions["RouterIngress.ipv4_forward"]
    assert [(x.id, x.name, x.bitwidth) for x in forward.params] == [(1, "dstAddr", 48), (2, "port", 9)]
    assert [r.id for r in table.action_refs] == [forward.preamble.id, actions["RouterIngress.drop"].preamble.id,
                                                 21257015]
    assert table.initial_default_action.action_id == actions["RouterIngress.drop"].preamble.id
    assert table.const_default_action_id == 0
    assert table.size == 1024
    assert [t.preamble.name for t in p.tables] == ["RouterIngress.ipv4_lpm"]


def test_implicit_noaction_is_default_only():
    p = info("action_selector_ecmp.p4")
    table = p.tables[0]
    assert table.action_refs[-1].id == 21257015
    assert table.action_refs[-1].scope == p4info_pb2.ActionRef.DEFAULT_ONLY
    assert list(table.action_refs[-1].annotations) == ["@defaultonly"]


def test_explicit_ids_names_scopes_and_timeouts():
    p = info("table_properties_annotations.p4")
    tables = by_name(p.tables)
    port_vrf = tables["global_port_vrf"]
    assert port_vrf.preamble.alias == "global_port_vrf"
    assert port_vrf.match_fields[0].name == "port"
    actions = by_name(p.actions)
    drop = actions["PropIngress.drop"].preamble.id
    assert port_vrf.const_default_action_id == drop
    assert port_vrf.size == 32
    assert "PropIngress.set_vrf" in actions
    l2 = tables["PropIngress.l2_by_vrf"]
    assert l2.preamble.id == 0x02000042
    assert l2.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL
    assert [m.name for m in l2.match_fields] == ["meta.vrf", "hdr.ethernet.dstAddr", "ethertype_hi"]
    assert l2.match_fields[2].match_type == p4info_pb2.MatchField.TERNARY
    forward = actions["PropIngress.forward"]
    assert forward.preamble.id == 0x01000101
    assert [(x.id, x.name) for x in forward.params] == [(7, "port"), (2, "vrf_hint")]
    assert l2.action_refs[0].scope == p4info_pb2.ActionRef.TABLE_ONLY


def test_default_action_arguments_are_padded_bytes():
    p = info("range_match_l4_ports.p4")
    forward = by_name(p.tables)["ClassIngress.forward"]
    arg = forward.initial_default_action.arguments[0]
    assert (arg.param_id, arg.value) == (1, b"\x00\x01")
    port_class = by_name(p.tables)["ClassIngress.port_class"]
    assert port_class.is_const_table and port_class.has_initial_entries
    assert port_class.match_fields[0].match_type == p4info_pb2.MatchField.RANGE


def test_optional_match_kind():
    p = info("acl_ternary_const_entries.p4")
    acl = p.tables[0]
    assert [m.match_type for m in acl.match_fields] == [
        p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.OPTIONAL]


def test_counters_meters_registers():
    p = info("counters_indirect.p4")
    counters = by_name(p.counters)
    assert counters["CntIngress.rx_packets"].spec.unit == p4info_pb2.CounterSpec.PACKETS
    assert counters["CntIngress.rx_bytes"].spec.unit == p4info_pb2.CounterSpec.BYTES
    assert counters["CntEgress.tx_both"].spec.unit == p4info_pb2.CounterSpec.BOTH
    assert counters["CntEgress.tx_both"].size == 512
    assert counters["CntEgress.tx_both"].preamble.id == p4id(0x12, "CntEgress.tx_both")
    p = info("direct_counter_table.p4")
    direct = p.direct_counters[0]
    assert direct.preamble.id >> 24 == 0x13
    assert direct.direct_table_id == p.tables[0].preamble.id
    assert list(p.tables[0].direct_resource_ids) == [direct.preamble.id]
    p = info("direct_meter_policer.p4")
    meter = p.direct_meters[0]
    assert meter.preamble.id >> 24 == 0x15 and meter.spec.unit == p4info_pb2.MeterSpec.PACKETS
    assert meter.direct_table_id == by_name(p.tables)["DmIngress.policer"].preamble.id
    p = info("meter_color_marking.p4")
    meters = by_name(p.meters)
    assert meters["MtrIngress.class_meter"].spec.unit == p4info_pb2.MeterSpec.BYTES
    assert meters["MtrIngress.class_meter"].size == 256
    p = info("register_flow_state.p4")
    registers = by_name(p.registers)
    assert registers["RegIngress.flow_last_seen"].type_spec.bitstring.bit.bitwidth == 48
    assert registers["RegIngress.flow_last_seen"].size == 1024
    assert registers["RegIngress.flow_packets"].preamble.id == p4id(0x16, "RegIngress.flow_packets")


def test_action_profiles_and_selectors():
    p = info("action_profile_wcmp.p4")
    profile = p.action_profiles[0]
    assert profile.preamble.name == "ApIngress.next_hops"
    assert not profile.with_selector and profile.size == 128
    assert sorted(profile.table_ids) == sorted(t.preamble.id for t in p.tables)
    assert all(t.implementation_id == profile.preamble.id for t in p.tables)
    p = info("action_selector_ecmp.p4")
    assert p.action_profiles[0].with_selector
    assert [m.name for m in p.tables[0].match_fields] == ["hdr.ipv4.dstAddr"]


def test_digest_value_set_controller_headers():
    p = info("digest_mac_learning.p4")
    digest = p.digests[0]
    assert digest.preamble.name == "learn_t" and digest.type_spec.struct.name == "learn_t"
    members = p.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [("srcAddr", 48), ("ingress_port", 9)]
    p = info("parser_value_set.p4")
    vset = p.value_sets[0]
    assert vset.preamble.name == "PvsParser.tunnel_ethertypes" and vset.size == 4
    assert vset.match[0].bitwidth == 16
    p = info("packet_io_controller_header.p4")
    headers = by_name(p.controller_packet_metadata)
    assert headers["packet_out"].preamble.id == 75327753
    assert headers["packet_in"].preamble.id == p4id(0x04, "packet_in_t")
    assert [(m.id, m.name, m.bitwidth) for m in headers["packet_in"].metadata] == [(1, "ingress_port", 9), (2, "_pad", 7)]


def test_aliases_stay_unique_when_names_clash():
    p = info("subcontrol_nested_actions.p4")
    aliases = {a.preamble.name: a.preamble.alias for a in p.actions}
    assert aliases["NestIngress.src_classifier.set_class"] == "src_classifier.set_class"
    tables = {t.preamble.name: t.preamble.alias for t in p.tables}
    assert tables["NestIngress.dst_classifier.classify"] == "dst_classifier.classify"


@pytest.mark.parametrize("suffix", [".txtpb", ".json", ".bin"])
def test_files_round_trip(tmp_path, suffix):
    p = info("basic_l2_forward.p4")
    path = tmp_path / f"out{suffix}"
    write_p4info(p, path)
    if suffix == ".txtpb":
        text = path.read_text()
        assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n")
        assert text == p4info_text(p)
    elif suffix == ".bin":
        assert p4info_pb2.P4Info.FromString(path.read_bytes()) == p
    else:
        assert '"preamble"' in path.read_text()


def test_const_entries_write_request():
    from bufferlab.compiler.api import compile_program

    result = compile_program(P4 / "acl_ternary_const_entries.p4")
    updates = result.entries.updates
    assert len(updates) == 4
    first = updates[0].entity.table_entry
    assert first.table_id == result.p4info.tables[0].preamble.id
    assert [u.entity.table_entry.priority for u in updates] == [4, 3, 2, 1]
    assert all(u.entity.table_entry.is_const for u in updates)
    assert [m.field_id for m in first.match] == [1, 2, 3]
    assert first.match[0].ternary.value == b"\x0a\x00\x00\x00" and first.match[0].ternary.mask == b"\xff\x00\x00\x00"
    assert first.match[2].optional.value == b"\x06"
    assert (first.action.action.params[0].param_id, first.action.action.params[0].value) == (1, b"\x00\x01")
    last = updates[3].entity.table_entry
    assert list(last.match) == []
    exact = compile_program(P4 / "enums_and_errors.p4").entries.updates[0].entity.table_entry
    assert exact.priority == 0 and exact.match[0].exact.value == b"\x01"


def test_initial_default_action_only_when_declared_and_direct():
    p = info("subparser_inline.p4")
    assert not p.tables[0].HasField("initial_default_action")
    p = info("action_profile_wcmp.p4")
    assert all(not t.HasField("initial_default_action") for t in p.tables)
    p = info("acl_ternary_const_entries.p4")
    assert p.tables[0].HasField("initial_default_action")
    assert p.tables[0].const_default_action_id == p.tables[0].initial_default_action.action_id
    assert p.HasField("type_info")
    assert p4info_text(p).endswith("type_info {\n}\n")


def test_pkginfo_annotation_on_main(tmp_path):
    src = tmp_path / "pkg.p4"
    text = (P4 / "basic_l2_forward.p4").read_text()
    text = text.replace('#include "include/std_headers.p4"', f'#include "{P4}/include/std_headers.p4"')
    text = text.replace("V1Switch(L2Parser()", '@pkginfo(name="l2", version="1.2", organization="bufferlab")\nV1Switch(L2Parser()')
    src.write_text(text)
    p = compile(src)[1]
    assert (p.pkg_info.name, p.pkg_info.version, p.pkg_info.organization, p.pkg_info.arch) == (
        "l2", "1.2", "bufferlab", "v1model")


def test_hidden_tables_and_actions_stay_out_of_p4info(tmp_path):
    src = tmp_path / "hidden.p4"
    text = (P4 / "basic_l2_forward.p4").read_text()
    text = text.replace('#include "include/std_headers.p4"', f'#include "{P4}/include/std_headers.p4"')
    text = text.replace("    table dmac {", "    @hidden table dmac {").replace("    action drop() {", "    @hidden action drop() {")
    src.write_text(text)
    doc, p = compile(src)
    assert [t.preamble.name for t in p.tables] == []
    assert [a.preamble.name for a in p.actions] == ["L2Ingress.forward"]
    assert [t["name"] for t in doc["pipelines"][0]["tables"]] == ["L2Ingress.dmac"]


def test_struct_value_set_has_one_match_field_per_member(tmp_path):
    src = tmp_path / "pvs.p4"
    src.write_text("""
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct pair_t { bit<8> a; bit<16> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<pair_t>(8) pairs;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) { pairs: accept; default: reject; }
    }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
""")
    doc, p = compile(src)
    assert doc["parse_vsets"][0]["compressed_bitwidth"] == 24
    vset = p.value_sets[0]
    assert [(m.id, m.name, m.bitwidth) for m in vset.match] == [(1, "a", 8), (2, "b", 16)]


def test_digest_type_specs_for_bool_signed_and_error_members(tmp_path):
    src = tmp_path / "digest.p4"
    src.write_text("""
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; int<8> b; }
struct headers_t { h_t h; }
struct d_t { bool ok; int<8> b; error e; }
struct meta_t { d_t d; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.d.ok = hdr.h.a == 1;
        meta.d.b = hdr.h.b;
        meta.d.e = sm.parser_error;
        digest<d_t>(1, meta.d);
    }
}
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
""")
    doc, p = compile(src)
    members = p.type_info.structs["d_t"].members
    assert members[0].type_spec.HasField("bool")
    assert members[1].type_spec.bitstring.int.bitwidth == 8
    assert members[2].type_spec.HasField("error")
    assert list(p.type_info.error.members)[:2] == ["NoError", "PacketTooShort"]
    assert len(doc["learn_lists"][0]["elements"]) == 3


def test_serializable_enums_in_type_info():
    p = info("enums_and_errors.p4")
    spec = p.type_info.serializable_enums["opcode_t"]
    assert spec.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in spec.members] == [("PING", b"\x01"), ("PONG", b"\x02"), ("DROP", b"\x03")]
    assert "HashAlgorithm" not in p.type_info.serializable_enums
