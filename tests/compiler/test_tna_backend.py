"""TNA JSON and P4Info: block structure per pipe and gress, extern lowering, bf-p4c names."""

import json
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from bufferlab.compiler.api import compile_program
from bufferlab.compiler.cli import run
from bufferlab.compiler.diagnostics import CompileError


@pytest.fixture(scope="module")
def compiled(request):
    """Compile a program of tests/p4/tna once per module and name."""
    cache = {}

    def get(tna_dir, name):
        if name not in cache:
            cache[name] = compile_program(tna_dir / f"{name}.p4")
        return cache[name]

    return get


def by_name(items, name):
    found = [i for i in items if i["name"] == name]
    assert len(found) == 1, (name, [i["name"] for i in items])
    return found[0]


def prims(gress):
    """Every primitive of a gress: actions, deparser, register actions."""
    out = [p for a in gress["actions"] for p in a["primitives"]]
    out += [p for d in gress["deparsers"] for p in d["primitives"]]
    out += [p for r in gress["register_actions"] for p in r["primitives"]]
    return out


def ops(gress, op):
    return [p for p in prims(gress) if p["op"] == op]


def p4info_names(info, kind):
    return [e.preamble.name for e in getattr(info, kind)]


# ---------------------------------------------------------------- structure


def test_l3_forward_document_structure(tna, compiled):
    result = compiled(tna.TNA_DIR, "l3_forward")
    doc = result.json
    assert (result.arch, result.target, doc["arch"], doc["target"]) == ("tna", "tofino", "tna", "tofino")
    assert doc["target_info"]["cell_bytes"] == 80 and doc["target_info"]["port_metadata_bits"] == 64
    assert [p["name"] for p in doc["pipes"]] == ["pipe"]
    pipe = doc["pipes"][0]
    for gress in ("ingress", "egress"):
        g = pipe[gress]
        assert (len(g["parsers"]), len(g["pipelines"]), len(g["deparsers"])) == (1, 1, 1)
        assert g["pipelines"][0]["name"] == gress
    ig, eg = pipe["ingress"], pipe["egress"]
    headers = {h["name"]: h for h in ig["headers"]}
    assert headers["ig_intr_md"]["metadata"] is False
    assert headers["ig_intr_md_for_tm"]["metadata"] is True
    assert [i["name"] for i in ig["intrinsic_metadata"]] == [
        "ig_intr_md", "ig_intr_md_for_tm", "ig_intr_md_from_prsr", "ig_intr_md_for_dprsr"]
    assert [i["name"] for i in eg["intrinsic_metadata"] if i["prepended"]] == ["eg_intr_md"]
    # the program calls its parameter ig_tm_md; the JSON uses the architecture's name
    route = by_name(ig["actions"], "Ingress.route")
    assert route["primitives"][0]["parameters"][0] == {"type": "field", "value": ["ig_intr_md_for_tm",
                                                                                   "ucast_egress_port"]}
    start = ig["parsers"][0]["parse_states"][0]
    assert start["parser_ops"][0] == {"parameters": [{"type": "regular", "value": "ig_intr_md"}],
                                      "op": "extract"}
    eg_start = eg["parsers"][0]["parse_states"][0]["parser_ops"]
    assert [op["parameters"][0]["value"] for op in eg_start[:2]] == ["eg_intr_md", "bridge"]
    assert ig["deparsers"][0]["order"] == ["bridge", "ethernet", "ipv4"]
    # `1: reject` goes to the marked sink state, not BMv2's null (accept) next state
    states = {s["name"]: s for s in ig["parsers"][0]["parse_states"]}
    assert states["$reject"]["reject"] is True and states["$reject"]["parser_ops"] == []
    assert [t["next_state"] for t in start["transitions"]] == ["$reject", "skip_port_metadata"]
    assert not [w for w in result.warnings if "reject" in w.message]
    [update] = ops(ig, "_Checksum_update")
    params = update["parameters"]
    assert params[0] == {"type": "extern", "value": "IgDeparser.ipv4_checksum"}
    assert params[1] == {"type": "hexstr", "value": "0x0"}  # zeros_as_ones not given
    assert params[-1] == {"type": "field", "value": ["ipv4", "hdr_checksum"]}
    assert [p["value"][1] for p in params[2:-1]][:3] == ["version", "ihl", "diffserv"]
    [verify] = [op["parameters"][0] for s in ig["parsers"][0]["parse_states"] for op in s["parser_ops"]
                if op["op"] == "primitive" and op["parameters"][0]["op"] == "_Checksum_verify"]
    assert verify["parameters"][-1] == {"type": "field", "value": ["scalars", "userMetadata.checksum_err"]}


def test_l3_forward_p4info_names_and_ids(tna, compiled):
    info = compiled(tna.TNA_DIR, "l3_forward").p4info
    assert info.pkg_info.arch == "tna"
    assert p4info_names(info, "tables") == ["pipe.Ingress.ipv4_lpm", "pipe.Ingress.port_queue",
                                            "pipe.Egress.port_mac"]
    assert p4info_names(info, "actions") == ["NoAction", "Ingress.drop", "Ingress.route", "Ingress.set_queue",
                                             "Egress.set_source_mac"]
    assert all(t.preamble.id >> 24 == 0x02 for t in info.tables)
    assert all(a.preamble.id >> 24 == 0x01 for a in info.actions)
    lpm = info.tables[0]
    assert lpm.preamble.alias == "ipv4_lpm"
    assert [(m.name, m.bitwidth, m.match_type) for m in lpm.match_fields] == [("hdr.ipv4.dst_addr", 32, 3)]  # LPM
    route = next(a for a in info.actions if a.preamble.name == "Ingress.route")
    assert [(p.name, p.bitwidth) for p in route.params] == [("port", 9), ("next_hop_mac", 48)]
    queue = next(a for a in info.actions if a.preamble.name == "Ingress.set_queue")
    assert [(p.name, p.bitwidth) for p in queue.params] == [("qid", 5)]
    drop_id = next(a.preamble.id for a in info.actions if a.preamble.name == "Ingress.drop")
    assert lpm.const_default_action_id == drop_id


def test_tofino2_target_widens_queue_ids(tna):
    result = compile_program(tna.TNA_DIR / "l3_forward.p4", target="tofino2")
    assert result.json["target_info"]["queues_per_port"] == 128
    queue = next(a for a in result.p4info.actions if a.preamble.name == "Ingress.set_queue")
    assert queue.params[0].bitwidth == 7


# ---------------------------------------------------------------- RegisterAction


def test_register_actions_are_lowered_bodies(tna, compiled):
    result = compiled(tna.TNA_DIR, "register_action")
    ig = result.json["pipes"][0]["ingress"]
    reg = by_name(ig["register_arrays"], "Ingress.flow_packets")
    assert (reg["size"], reg["bitwidth"], reg["initial_value"]) == (1024, 32, "0x00000000")
    count = by_name(ig["register_actions"], "Ingress.count_flow")
    assert (count["type"], count["register"]) == ("RegisterAction", "Ingress.flow_packets")
    state = count["state"]
    assert count["value"] == [[state, "value"]] and count["results"] == [[state, "rv1"]]
    assert {h["name"]: h["metadata"] for h in ig["headers"]}[state] is True
    body = count["primitives"]
    assert body[0]["op"] == "_jump_if_zero"
    assert [p["op"] for p in body].count("assign") == 3
    assert body[1]["parameters"][0] == {"type": "field", "value": [state, "value"]}
    assert count["methods"] == ["execute"]
    calls = {p["parameters"][0]["value"]: p for p in ops(ig, "_RegisterAction_execute")}
    assert calls["Ingress.count_flow"]["parameters"][1:] == [
        {"type": "field", "value": ["scalars", "userMetadata.flow"]},
        {"type": "field", "value": ["scalars", "userMetadata.over"]}]
    # a constant index
    assert calls["Ingress.track_longest"]["parameters"][1] == {"type": "hexstr", "value": "0x00"}
    [log] = ops(ig, "_RegisterAction_execute_log")
    assert log["parameters"] == [{"type": "extern", "value": "Ingress.log_sample"}]
    longest = by_name(ig["register_actions"], "Ingress.track_longest")
    # max() inside the body: a conditional expression
    assert longest["primitives"][0]["parameters"][1]["value"]["value"]["op"] == "?"
    info = result.p4info
    regs = {r.preamble.name: r for r in info.registers}
    assert set(regs) == {"pipe.Ingress.flow_packets", "pipe.Ingress.longest", "pipe.Ingress.samples"}
    assert (regs["pipe.Ingress.flow_packets"].size,
            regs["pipe.Ingress.flow_packets"].type_spec.bitstring.bit.bitwidth) == (1024, 32)
    assert all(r.preamble.id >> 24 == 0x16 for r in info.registers)


def test_paired_register_cells_and_register_param(tmp_path, tna):
    locals_ = """    struct_pair_register;
    RegisterParam<bit<16>>(16w500) limit;
    RegisterAction<pair_t, bit<8>, bit<16>>(pairs) update = {
        void apply(inout pair_t value, out bit<16> rv) {
            if (value.lo < limit.read()) { value.lo = value.lo + 1; }
            value.hi = 7;
            rv = value.lo;
        }
    };"""
    text = tna.tna_program(locals_.replace("struct_pair_register;", "Register<pair_t, bit<8>>(256, {1, 2}) pairs;"),
                           "        md.index = update.execute(md.index[7:0]);",
                           before="struct pair_t { bit<16> lo; bit<16> hi; }\n")
    path = tmp_path / "pair.p4"
    path.write_text(text)
    ig = compile_program(path).json["pipes"][0]["ingress"]
    reg = by_name(ig["register_arrays"], "Ingress.pairs")
    assert reg["layout"] == [{"name": "lo", "bitwidth": 16}, {"name": "hi", "bitwidth": 16}]
    assert (reg["bitwidth"], reg["initial_value"]) == (32, "0x00010002")
    update = by_name(ig["register_actions"], "Ingress.update")
    assert [f[1] for f in update["value"]] == ["value_lo", "value_hi"]
    [param] = [p for p in prims(ig) if p["op"] == "_RegisterParam_read"]
    assert param["parameters"][0] == {"type": "extern", "value": "Ingress.limit"}
    assert by_name(ig["extern_instances"], "Ingress.limit")["attribute_values"][1]["value"] == "0x01f4"


def test_direct_register_bound_to_its_table(tmp_path, tna):
    locals_ = """    DirectRegister<bit<32>>(7) hits;
    DirectRegisterAction<bit<32>, bit<32>>(hits) bump = {
        void apply(inout bit<32> value, out bit<32> rv) { value = value + 1; rv = value; }
    };
    action seen() { md.value = bump.execute(); }
    table t { key = { hdr.ethernet.dst : exact; } actions = { seen; } size = 64; registers = hits; }"""
    path = tmp_path / "direct.p4"
    path.write_text(tna.tna_program(locals_, "        t.apply();"))
    ig = compile_program(path).json["pipes"][0]["ingress"]
    reg = by_name(ig["register_arrays"], "Ingress.hits")
    assert (reg["is_direct"], reg["binding"], reg["size"], reg["initial_value"]) == (
        True, "Ingress.t", 0, "0x00000007")
    assert by_name(ig["register_actions"], "Ingress.bump")["type"] == "DirectRegisterAction"
    [call] = ops(ig, "_DirectRegisterAction_execute")
    assert call["parameters"] == [{"type": "extern", "value": "Ingress.bump"},
                                  {"type": "field", "value": ["scalars", "userMetadata.value"]}]


# ---------------------------------------------------------------- Hash, selectors, counters, meters


def test_hashes_carry_their_crc_parameters(tna, compiled):
    result = compiled(tna.TNA_DIR, "hash_ecmp")
    ig = result.json["pipes"][0]["ingress"]
    calcs = ig["calculations"]
    crc16, custom, identity = calcs[0], calcs[1], calcs[2]
    assert (crc16["algo"], crc16["output_width"], crc16["tofino_algorithm"]) == ("crc", 16, "CRC16")
    assert crc16["polynomial"] == {"width": 16, "coeff": "0x8005", "reversed": True, "msb": False,
                                   "extended": False, "init": "0x0000", "xor": "0x0000"}
    assert len(crc16["input"]) == 5
    assert custom["polynomial"]["coeff"] == "0x1edc6f41" and custom["polynomial"]["init"] == "0xffffffff"
    assert (identity["algo"], "polynomial" in identity) == ("identity", False)
    # the slice is computed into a temporary before it is hashed
    assert identity["input"][0]["value"][0] == "scalars"
    gets = ops(ig, "modify_field_with_hash_based_offset")
    assert gets[0]["parameters"][3] == {"type": "hexstr", "value": "0x010000"}
    [rnd] = ops(ig, "modify_field_rng_uniform")
    assert rnd["parameters"][2] == {"type": "hexstr", "value": "0xffff"}
    [profile] = ig["pipelines"][0]["action_profiles"]
    assert (profile["name"], profile["max_size"]) == ("Ingress.ecmp_selector", 256)
    selector = profile["selector"]
    assert (selector["algo"], selector["mode"], selector["max_group_size"], selector["num_groups"]) == (
        "crc", "FAIR", 16, 64)
    assert len(selector["input"]) == 5
    table = by_name(ig["pipelines"][0]["tables"], "Ingress.ecmp")
    assert (table["type"], table["action_profile"]) == ("indirect_ws", "Ingress.ecmp_selector")
    info = result.p4info
    [ap] = info.action_profiles
    assert (ap.preamble.name, ap.with_selector, ap.size) == ("pipe.Ingress.ecmp_selector", True, 256)
    ecmp = next(t for t in info.tables if t.preamble.name == "pipe.Ingress.ecmp")
    assert ecmp.implementation_id == ap.preamble.id and list(ap.table_ids) == [ecmp.preamble.id]


def test_counters_meters_filters(tna, compiled):
    result = compiled(tna.TNA_DIR, "counter_meter")
    ig = result.json["pipes"][0]["ingress"]
    eg = result.json["pipes"][0]["egress"]
    direct = by_name(ig["counter_arrays"], "Ingress.acl_hits")
    assert (direct["is_direct"], direct["binding"]) == (True, "Ingress.acl")
    policer = by_name(ig["meter_arrays"], "Ingress.acl_policer")
    assert (policer["binding"], policer["result_target"], policer["type"]) == (
        "Ingress.acl", ["scalars", "acl_policer_color"], "packets")
    # the engine meters on the hit; each execute() in an action reads the colour
    permit = by_name(ig["actions"], "Ingress.permit")
    assert permit["primitives"][0]["parameters"] == [
        {"type": "field", "value": ["scalars", "userMetadata.acl_color"]},
        {"type": "field", "value": ["scalars", "acl_policer_color"]}]
    port_meter = by_name(ig["meter_arrays"], "Ingress.port_meter")
    assert port_meter["color_values"] == {"green": 0, "yellow": 1, "red": 3}
    [execute] = ops(ig, "execute_meter")
    assert execute["parameters"][0] == {"type": "meter_array", "value": "Ingress.port_meter"}
    assert execute["parameters"][2] == {"type": "field", "value": ["scalars", "userMetadata.port_color"]}
    [count] = ops(ig, "count")
    assert count["parameters"] == [{"type": "counter_array", "value": "Ingress.port_packets"},
                                   {"type": "field", "value": ["ig_intr_md", "ingress_port"]}]
    lpf = by_name(eg["extern_instances"], "Egress.length_filter")
    wred = by_name(eg["extern_instances"], "Egress.queue_wred")
    assert (lpf["type"], wred["type"]) == ("Lpf", "Wred")
    assert {a["name"]: a["value"] for a in wred["attribute_values"]}["drop_value"] == "0x01"
    [lpf_call] = ops(eg, "_Lpf_execute")
    assert lpf_call["parameters"][1:] == [{"type": "field", "value": ["eg_intr_md", "pkt_length"]},
                                          {"type": "field", "value": ["eg_intr_md", "egress_port"]},
                                          {"type": "field", "value": ["scalars", "userMetadata.avg_len"]}]
    info = result.p4info
    assert [(c.preamble.name, c.spec.unit, c.size) for c in info.counters] == [
        ("pipe.Ingress.port_packets", 3, 512)]
    assert [(c.preamble.name, c.spec.unit) for c in info.direct_counters] == [("pipe.Ingress.acl_hits", 2)]
    acl = next(t for t in info.tables if t.preamble.name == "pipe.Ingress.acl")
    assert info.direct_counters[0].direct_table_id == acl.preamble.id
    assert [(m.preamble.name, m.spec.unit, m.size) for m in info.meters] == [("pipe.Ingress.port_meter", 1, 512)]
    assert [m.preamble.name for m in info.direct_meters] == ["pipe.Ingress.acl_policer"]
    assert sorted(acl.direct_resource_ids) == sorted(
        [info.direct_counters[0].preamble.id, info.direct_meters[0].preamble.id])


# ---------------------------------------------------------------- deparser externs


def test_mirror_resubmit_digest_in_the_deparsers(tna, compiled):
    result = compiled(tna.TNA_DIR, "mirror_resubmit_digest")
    ig = result.json["pipes"][0]["ingress"]
    eg = result.json["pipes"][0]["egress"]
    dep = ig["deparsers"][0]
    assert dep["order"] == ["bridge", "ethernet", "ipv4", "udp"]
    [mirror] = ops(ig, "_Mirror_emit")
    assert mirror["parameters"][1] == {"type": "field", "value": ["scalars", "userMetadata.session"]}
    assert [p["value"][1] for p in mirror["parameters"][2:]] == ["kind", "_pad", "ingress_port", "ingress_tstamp"]
    # the emit runs only when the program's condition on mirror_type holds
    jump = dep["primitives"][0]
    assert jump["op"] == "_jump_if_zero"
    assert "mirror_type" in json.dumps(jump["parameters"][0])
    [resubmit] = ops(ig, "_Resubmit_emit")
    assert [p["value"][1] for p in resubmit["parameters"][1:]] == ["reason", "pass", "_pad"]
    [pack] = ops(ig, "_Digest_pack")
    learn = by_name(ig["learn_lists"], "IgDeparser.learn_digest")
    assert pack["parameters"][1] == {"type": "hexstr", "value": hex(learn["id"])}
    assert learn["elements"] == [{"type": "field", "value": ["ethernet", "src_addr"]},
                                 {"type": "field", "value": ["mirror", "ingress_port"]}]
    instances = {i["name"]: i for i in ig["extern_instances"]}
    assert instances["IgDeparser.mirror"]["attribute_values"] == [
        {"name": "mirror_type", "type": "hexstr", "value": "0x01"}]
    assert instances["IgDeparser.learn_digest"]["type"] == "Digest"
    [e2e] = ops(eg, "_Mirror_emit")
    assert e2e["parameters"] == [{"type": "extern", "value": "EgDeparser.congestion_mirror"},
                                 {"type": "field", "value": ["scalars", "userMetadata.session"]}]
    # the egress parser tells mirrored copies apart with a lookahead
    [digest] = result.p4info.digests
    assert (digest.preamble.name, digest.type_spec.struct.name) == ("pipe.IgDeparser.learn_digest", "learn_t")
    members = result.p4info.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [("src_addr", 48), ("port", 9)]


# ---------------------------------------------------------------- program instances, lookahead


def headers_of(gress):
    return {h["name"]: h["header_type"] for h in gress["headers"]}


def test_metadata_member_named_like_intrinsic_metadata_gets_its_own_name(tna, compiled):
    result = compiled(tna.TNA_DIR, "bridged_intrinsic")
    ig, eg = result.json["pipes"][0]["ingress"], result.json["pipes"][0]["egress"]
    names = [h["name"] for h in ig["headers"]]
    assert names.count("ig_intr_md") == 1 and names.count("ig_intr_md_0") == 1
    # the architecture's keeps its name (the engine prepends into it), the program's is ig_intr_md_0
    assert ig["intrinsic_metadata"][0]["name"] == "ig_intr_md"
    assert ig["parsers"][0]["parse_states"][0]["parser_ops"][0]["parameters"] == [
        {"type": "regular", "value": "ig_intr_md"}]
    assert by_name(ig["pipelines"][0]["tables"], "Ingress.bridge_ctrl")["key"][0]["target"] == [
        "ig_intr_md", "ingress_port"]
    bridge = by_name(ig["actions"], "Ingress.bridge_port")["primitives"]
    assert bridge[1]["op"] == "assign_header"
    assert bridge[1]["parameters"] == [{"type": "header", "value": "ig_intr_md_0"},
                                       {"type": "header", "value": "ig_intr_md"}]
    assert bridge[2]["parameters"][0] == {"type": "field", "value": ["ig_intr_md_0", "ingress_port"]}
    assert ig["deparsers"][0]["order"] == ["kind", "ig_intr_md_0", "ethernet"]
    # the same name in egress, which has no ig_intr_md of its own
    assert headers_of(eg)["ig_intr_md_0"] == "ingress_intrinsic_metadata_t"
    assert "ig_intr_md" not in headers_of(eg)
    states = {s["name"]: s for s in eg["parsers"][0]["parse_states"]}
    assert states["parse_intrinsic"]["parser_ops"] == [
        {"parameters": [{"type": "regular", "value": "ig_intr_md_0"}], "op": "extract"}]


def test_headers_member_named_like_intrinsic_metadata_gets_its_own_name(tmp_path, tna):
    text = (tna.TNA_DIR / "l2_forward.p4").read_text()
    text = text.replace("bridge_h bridge;", "bridge_h eg_intr_md;").replace("hdr.bridge", "hdr.eg_intr_md")
    path = tmp_path / "renamed.p4"
    path.write_text(text)
    pipe = compile_program(path).json["pipes"][0]
    ig, eg = pipe["ingress"], pipe["egress"]
    assert headers_of(ig)["eg_intr_md_0"] == "bridge_h" and "eg_intr_md" not in headers_of(ig)
    assert ig["deparsers"][0]["order"] == ["eg_intr_md_0", "ethernet"]
    assert headers_of(eg)["eg_intr_md"] == "egress_intrinsic_metadata_t"
    assert headers_of(eg)["eg_intr_md_0"] == "bridge_h"
    start = eg["parsers"][0]["parse_states"][0]["parser_ops"]
    assert [op["parameters"][0]["value"] for op in start] == ["eg_intr_md", "eg_intr_md_0", "ethernet"]


def test_header_local_from_lookahead_is_valid_before_its_fields_are_set(tna, compiled):
    eg = compiled(tna.TNA_DIR, "lookahead_local").json["pipes"][0]["egress"]
    peek = {s["name"]: s for s in eg["parsers"][0]["parse_states"]}["peek"]
    # add_header zeroes the header it makes valid, so it comes first (p4c's ExpandLookahead)
    assert peek["parser_ops"][:3] == [
        {"parameters": [{"op": "add_header", "parameters": [{"type": "header", "value": "peeked_0"}]}],
         "op": "primitive"},
        {"parameters": [{"type": "field", "value": ["peeked_0", "kind"]},
                        {"type": "lookahead", "value": [0, 8]}], "op": "set"},
        {"parameters": [{"type": "field", "value": ["peeked_0", "tag"]},
                        {"type": "lookahead", "value": [8, 8]}], "op": "set"},
    ]
    assert peek["transition_key"] == [{"type": "field", "value": ["peeked_0", "kind"]}]


# ---------------------------------------------------------------- pipes, T2NA


def test_three_pipes_two_programs(tna, compiled):
    result = compiled(tna.TNA_DIR, "multi_pipe")
    pipes = result.json["pipes"]
    assert [(p["name"], p["id"]) for p in pipes] == [("pipe_a", 0), ("pipe_b", 1), ("pipe_c", 2)]
    assert [t["name"] for t in pipes[0]["ingress"]["pipelines"][0]["tables"]] == ["IngressA.dmac"]
    assert pipes[1]["ingress"]["counter_arrays"][0]["name"] == "IngressB.seen"
    # one control type in two pipes: a table in each pipe's document, two P4Info tables
    assert pipes[2]["ingress"]["pipelines"][0]["tables"][0]["name"] == "IngressA.dmac"
    info = result.p4info
    assert p4info_names(info, "tables") == ["pipe_a.IngressA.dmac", "pipe_c.IngressA.dmac"]
    assert len({t.preamble.id for t in info.tables}) == 2
    assert p4info_names(info, "counters") == ["pipe_b.IngressB.seen"]
    assert p4info_names(info, "actions") == ["IngressA.forward", "IngressA.drop"]


def test_t2na_ghost_register_action2_and_pktgen(tna, compiled):
    result = compiled(tna.TNA_DIR, "t2na_ghost")
    doc = result.json
    assert (doc["arch"], doc["target"], doc["target_info"]["cell_bytes"]) == ("t2na", "tofino2", 176)
    ig = doc["pipes"][0]["ingress"]
    assert [p["name"] for p in ig["pipelines"]] == ["ingress", "ghost"]
    # the ghost thread and ingress share the top-level register; egress has none
    assert [r["name"] for r in ig["register_arrays"]] == ["queue_length", "Ingress.counts"]
    assert doc["pipes"][0]["egress"]["register_arrays"] == []
    assert "gh_intr_md" in [i["name"] for i in ig["intrinsic_metadata"]]
    twice = by_name(ig["register_actions"], "Ingress.count_twice")
    assert twice["type"] == "RegisterAction" and len(twice["results"]) == 2
    call = next(p for p in ops(ig, "_RegisterAction_execute")
                if p["parameters"][0]["value"] == "Ingress.count_twice")
    assert call["parameters"][2:] == [{"type": "field", "value": ["scalars", "userMetadata.old_count"]},
                                      {"type": "field", "value": ["scalars", "userMetadata.new_count"]}]
    [pktgen] = ops(ig, "_Pktgen_emit")
    assert pktgen["parameters"][1] == {"type": "field", "value": ["prefix", "reason"]}
    assert result.p4info.pkg_info.arch == "t2na"
    assert p4info_names(result.p4info, "registers") == ["pipe.queue_length", "pipe.Ingress.counts"]


def test_pragmas_are_kept(tmp_path, tna):
    before = '@pa_no_overlay("ingress", "hdr.ethernet.dst")\nheader pad_h { bit<8> x; }\n'
    locals_ = """    action nop() { }
    @stage(1) @placement_priority(2)
    table t { key = { hdr.ethernet.dst : exact; } actions = { nop; } size = 16; }"""
    path = tmp_path / "pragmas.p4"
    path.write_text(tna.tna_program(locals_, "        t.apply();", before=before))
    pragmas = compile_program(path).json["pragmas"]
    assert [(p["name"], p["body"], p["on"]) for p in pragmas] == [
        ("pa_no_overlay", '@pa_no_overlay("ingress", "hdr.ethernet.dst")', "header pad_h"),
        ("stage", "@stage(1)", "table t"),
        ("placement_priority", "@placement_priority(2)", "table t"),
    ]
    assert pragmas[0]["source_info"]["line"] == 6


# ---------------------------------------------------------------- errors


def compile_error(tmp_path, text):
    path = tmp_path / "bad.p4"
    path.write_text(text)
    with pytest.raises(CompileError) as info:
        compile_program(path)
    return info.value


def test_conditional_emit_is_located(tmp_path, tna):
    text = tna.tna_program(deparser_body="        if (hdr.ethernet.isValid()) { pkt.emit(hdr.ethernet); }")
    err = compile_error(tmp_path, text)
    assert "emit() inside a condition" in err.message
    assert err.pos.line == tna.line_of(text, "if (hdr.ethernet.isValid()) { pkt.emit")


def test_deparser_extern_in_a_control_is_located(tmp_path, tna):
    text = tna.tna_program("    Mirror() m;", "        m.emit(10w1);")
    err = compile_error(tmp_path, text)
    assert "Mirror.emit() cannot be called in a TNA control, only in a deparser" in err.message
    assert err.pos.line == tna.line_of(text, "m.emit(")


def test_custom_hash_needs_a_polynomial(tmp_path, tna):
    text = tna.tna_program("    Hash<bit<16>>(HashAlgorithm_t.CUSTOM) h;", "        md.index = h.get({hdr.ethernet.dst});")
    err = compile_error(tmp_path, text)
    assert "CUSTOM needs a CRCPolynomial" in err.message
    assert err.pos.line == tna.line_of(text, "Hash<bit<16>>")


# ---------------------------------------------------------------- command line


def test_cli_compiles_tna(tmp_path, tna, capsys):
    out, info = tmp_path / "l3.json", tmp_path / "l3.p4info.txtpb"
    src = str(tna.TNA_DIR / "l3_forward.p4")
    assert run(["--arch", "tna", "--target", "tofino", "--p4runtime-force-std-externs", src, "-o", str(out),
                "--p4runtime-files", str(info)]) == 0
    assert json.loads(out.read_text())["pipes"][0]["name"] == "pipe"
    assert 'name: "pipe.Ingress.ipv4_lpm"' in info.read_text()
    # without --arch the include decides
    assert run([src, "-o", str(out)]) == 0 and json.loads(out.read_text())["arch"] == "tna"


def test_cli_refuses_mismatched_arch_and_target(tmp_path, tna, capsys):
    src = str(tna.TNA_DIR / "l3_forward.p4")
    assert run(["--arch", "v1model", src, "-o", str(tmp_path / "x.json")]) == 1
    assert "includes tna.p4 (tna) but --arch v1model was given" in capsys.readouterr().err
    assert run(["--arch", "t2na", "--target", "tofino", src, "-o", str(tmp_path / "x.json")]) == 2
    assert "--target tofino: known targets are tofino2" in capsys.readouterr().err
    assert run(["--target", "bmv2", src, "-o", str(tmp_path / "x.json")]) == 1
    assert "--target bmv2: architecture tna runs on tofino, tofino2" in capsys.readouterr().err


def test_multi_parser_switch_and_parser_externs(tna, compiled):
    result = compiled(tna.TNA_DIR, "multi_parser")
    ig = result.json["pipes"][0]["ingress"]
    assert [p["name"] for p in ig["parsers"]] == ["parser", "parser_1"]
    ops_ = [op["parameters"][0] for s in ig["parsers"][0]["parse_states"] for op in s["parser_ops"]
            if op["op"] == "primitive"]
    assert [op["op"] for op in ops_] == ["_Checksum_subtract", "_Checksum_subtract_all_and_deposit",
                                         "_ParserCounter_set", "_ParserCounter_decrement",
                                         "_ParserPriority_set", "_ParserCounter_is_zero"]
    assert ops_[1]["parameters"] == [{"type": "extern", "value": "PlainParser.ck"},
                                     {"type": "field", "value": ["scalars", "userMetadata.residual"]}]
    start = ig["parsers"][0]["parse_states"][0]
    # the counter's verdict is computed first, then selected on
    assert start["transition_key"] == [ops_[-1]["parameters"][1]]


def test_register_sweep_is_a_located_error(tmp_path, tna):
    locals_ = """    Register<bit<32>, bit<16>>(8) reg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) ra = {
        void apply(inout bit<32> value) { value = 1; }
    };"""
    path = tmp_path / "t2.p4"
    path.write_text(tna.tna_program(locals_, "        ra.sweep();", include="t2na.p4"))
    with pytest.raises(CompileError) as info:
        compile_program(path)
    assert "RegisterAction.sweep() outside its apply body" in info.value.message
    assert info.value.pos.line == tna.line_of(path.read_text(), "ra.sweep()")


def test_symmetric_hash_and_idle_timeout(tmp_path, tna):
    locals_ = """    @symmetric("hdr.ethernet.src", "hdr.ethernet.dst")
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash;
    action nop() { }
    table aged { key = { hdr.ethernet.dst : exact; } actions = { nop; } size = 64; idle_timeout = true; }"""
    body = """        md.index = flow_hash.get({hdr.ethernet.ether_type, hdr.ethernet.src, hdr.ethernet.dst});
        aged.apply();"""
    path = tmp_path / "sym.p4"
    path.write_text(tna.tna_program(locals_, body))
    result = compile_program(path)
    ig = result.json["pipes"][0]["ingress"]
    assert ig["calculations"][0]["symmetric"] == [[1, 2]]
    assert by_name(ig["pipelines"][0]["tables"], "Ingress.aged")["support_timeout"] is True
    [table] = result.p4info.tables
    assert table.idle_timeout_behavior == table.NOTIFY_CONTROL


def test_symmetric_naming_no_input_is_located(tmp_path, tna):
    locals_ = """    @symmetric("hdr.ethernet.src", "md.value")
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash;"""
    text = tna.tna_program(locals_, "        md.index = flow_hash.get({hdr.ethernet.src, hdr.ethernet.dst});")
    err = compile_error(tmp_path, text)
    assert "@symmetric naming other than two inputs" in err.message
    assert err.pos.line == tna.line_of(text, "@symmetric")


def test_true_egress_accounting_is_kept(tmp_path, tna):
    locals_ = "    Counter<bit<32>, bit<8>>(256, CounterType_t.BYTES, true) sent;"
    path = tmp_path / "tea.p4"
    path.write_text(tna.tna_program(locals_, "        sent.count(md.index[7:0]);", include="t2na.p4"))
    ig = compile_program(path).json["pipes"][0]["ingress"]
    assert by_name(ig["counter_arrays"], "Ingress.sent")["true_egress_accounting"] is True


def test_learn_action_is_refused_where_declared(tmp_path, tna):
    locals_ = """    Register<bit<32>, bit<8>>(256) reg;
    LearnAction<bit<32>, bit<8>, bit<48>, bit<32>>(reg) learn = {
        void apply(inout bit<32> value, in bit<48> digest, in bool learn) { value = 1; }
    };"""
    text = tna.tna_program(locals_, include="t2na.p4")
    err = compile_error(tmp_path, text)
    assert err.message == "the extern LearnAction is not supported by bufferlab's TNA back end"
    assert err.pos.line == tna.line_of(text, "LearnAction<")


def test_direct_register_without_a_table_has_one_cell(tmp_path, tna):
    locals_ = """    DirectRegister<bit<32>>() last;
    DirectRegisterAction<bit<32>, bit<32>>(last) keep = {
        void apply(inout bit<32> value) { value = 5; }
    };"""
    path = tmp_path / "cell.p4"
    path.write_text(tna.tna_program(locals_, "        keep.execute();"))
    ig = compile_program(path).json["pipes"][0]["ingress"]
    reg = by_name(ig["register_arrays"], "Ingress.last")
    assert (reg["binding"], reg["size"]) == (None, 1)
    [call] = ops(ig, "_DirectRegisterAction_execute")
    assert call["parameters"] == [{"type": "extern", "value": "Ingress.keep"}]


def test_meter_overloads_color_aware_and_adjusted(tmp_path, tna):
    locals_ = "    Meter<bit<16>>(64, MeterType_t.BYTES) m;"
    body = """        md.color = m.execute(md.index, MeterColor_t.YELLOW);
        md.color = m.execute(md.index, 32w20);"""
    path = tmp_path / "meter.p4"
    path.write_text(tna.tna_program(locals_, body))
    aware, adjusted = ops(compile_program(path).json["pipes"][0]["ingress"], "execute_meter")
    # operands: meter, index, dest[, pre-colour[, adjust]] (YELLOW is 1; no pre-colour is 0)
    assert aware["parameters"][3:] == [{"type": "hexstr", "value": "0x01"}]
    assert adjusted["parameters"][3:] == [{"type": "hexstr", "value": "0x0"},
                                          {"type": "hexstr", "value": "0x00000014"}]


def test_cli_writes_const_entries_with_pipe_names(tmp_path, tna):
    locals_ = """    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table t { key = { hdr.ethernet.dst : exact; } actions = { fwd; } size = 16;
              const entries = { 48w1 : fwd(9w3); } }"""
    src = tmp_path / "entries.p4"
    src.write_text(tna.tna_program(locals_, "        t.apply();"))
    info, entries = tmp_path / "p.txtpb", tmp_path / "e.txtpb"
    assert run([str(src), "-o", str(tmp_path / "e.json"), "--p4runtime-files", str(info),
                "--p4runtime-entries-files", str(entries)]) == 0
    p4info = text_format.Parse(info.read_text(), p4info_pb2.P4Info())
    write = text_format.Parse(entries.read_text(), p4runtime_pb2.WriteRequest())
    [table] = p4info.tables
    [update] = write.updates
    assert table.preamble.name == "pipe.Ingress.t"
    assert update.entity.table_entry.table_id == table.preamble.id
    assert update.entity.table_entry.action.action.params[0].value == b"\x00\x03"


def test_cli_error_is_located_with_the_source_line(tmp_path, tna, capsys):
    text = tna.tna_program("    Hash<bit<16>>() h;")
    src = tmp_path / "bad.p4"
    src.write_text(text)
    assert run([str(src), "-o", str(tmp_path / "x.json")]) == 1
    err = capsys.readouterr().err.splitlines()
    line = tna.line_of(text, "Hash<bit<16>>() h;")
    assert err[0].startswith(f"{src}:{line}:5: error: wrong number of arguments to the constructor of Hash")
    assert err[1].strip() == "Hash<bit<16>>() h;"


def test_cli_v1model_program_with_arch_tna(tmp_path, capsys):
    src = Path(__file__).resolve().parent.parent / "p4" / "basic_l2_forward.p4"
    assert run(["--arch", "tna", str(src), "-o", str(tmp_path / "x.json")]) == 1
    assert "includes v1model.p4 (v1model) but --arch tna was given" in capsys.readouterr().err


def test_this_predicate_in_an_apply_body(tmp_path, tna):
    locals_ = """    Register<bit<16>, bit<16>>(1024) r;
    RegisterAction<bit<16>, bit<16>, bit<4>>(r) classify = {
        void apply(inout bit<16> value, out bit<4> rv) {
            rv = this.predicate(value > 10, value < 100);
        }
    };"""
    path = tmp_path / "pred.p4"
    path.write_text(tna.tna_program(locals_, "        md.color = (bit<8>) classify.execute(md.index);"))
    ig = compile_program(path).json["pipes"][0]["ingress"]
    classify = by_name(ig["register_actions"], "Ingress.classify")
    [pred] = classify["primitives"]
    assert pred["op"] == "_RegisterAction_predicate"
    assert pred["parameters"][0] == {"type": "extern", "value": "Ingress.classify"}
    assert [p["value"]["value"]["right"]["value"]["op"] for p in pred["parameters"][1:3]] == [">", "<"]
    assert pred["parameters"][3] == {"type": "field", "value": [classify["state"], "rv1"]}


def test_t2na_address_and_max16(tmp_path, tna):
    locals_ = """    Register<bit<32>, bit<16>>(1024) r;
    bit<3> lane = 0;
    RegisterAction<bit<32>, bit<16>, bit<16>>(r) where_ = {
        void apply(inout bit<32> value, out bit<16> rv) { rv = this.address(); }
    };
    Register<bit<128>, bit<4>>(16) lanes;
    MinMaxAction<bit<128>, bit<4>, bit<16>>(lanes) widest = {
        void apply(inout bit<128> value, out bit<16> rv) { rv = this.max16(value, 8w0xff, lane); }
    };"""
    body = "        md.index = where_.execute(md.index);\n        md.index = widest.execute(4w1);"
    path = tmp_path / "alu.p4"
    path.write_text(tna.tna_program(locals_, body, include="t2na.p4"))
    ig = compile_program(path).json["pipes"][0]["ingress"]
    [address] = by_name(ig["register_actions"], "Ingress.where_")["primitives"]
    assert address["op"] == "_RegisterAction_address"
    assert address["parameters"][1] == {"type": "hexstr", "value": "0x0"}
    widest = by_name(ig["register_actions"], "Ingress.widest")
    assert widest["type"] == "MinMaxAction"
    [max16] = widest["primitives"]
    assert max16["op"] == "_RegisterAction_max16"
    assert max16["parameters"][2] == {"type": "hexstr", "value": "0xff"}
    assert max16["parameters"][-1]["value"][1].startswith("lane")


def test_this_outside_an_implementation_is_located(tmp_path, tna):
    text = tna.tna_program(body="        md.value = (bit<32>) this.predicate(true);")
    err = compile_error(tmp_path, text)
    assert "'this' may only be used in an abstract method implementation" in err.message
    assert err.pos.line == tna.line_of(text, "this.predicate")


def test_t2na_fifo_overflow_and_underflow_bodies(tmp_path, tna):
    locals_ = """    Register<bit<32>, bit<8>>(256) fifo;
    RegisterAction<bit<32>, bit<8>, bit<32>>(fifo) push = {
        void apply(inout bit<32> value, out bit<32> rv) { value = md.value; rv = 0; }
        void overflow(inout bit<32> value, out bit<32> rv) { rv = 1; }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(fifo) pop = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
        void underflow(out bit<32> rv) { rv = 32w0xffffffff; }
    };"""
    body = "        md.value = push.enqueue();\n        md.value = pop.dequeue();"
    path = tmp_path / "fifo.p4"
    path.write_text(tna.tna_program(locals_, body, include="t2na.p4"))
    ig = compile_program(path).json["pipes"][0]["ingress"]
    push = by_name(ig["register_actions"], "Ingress.push")
    pop = by_name(ig["register_actions"], "Ingress.pop")
    assert (push["methods"], pop["methods"]) == (["enqueue"], ["dequeue"])
    assert push["overflow"][0]["parameters"] == [{"type": "field", "value": [push["state"], "rv1"]},
                                                 {"type": "hexstr", "value": "0x00000001"}]
    assert "underflow" not in push and "overflow" not in pop
    assert pop["underflow"][0]["parameters"][1] == {"type": "hexstr", "value": "0xffffffff"}
    assert [p["parameters"][0]["value"] for p in ops(ig, "_RegisterAction_enqueue")] == ["Ingress.push"]
