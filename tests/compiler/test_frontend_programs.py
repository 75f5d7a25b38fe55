"""Whole v1model programs (our own samples) parse and check; broken variants never crash."""

import random

import pytest

from bufferlab.compiler import ast, frontend, types
from bufferlab.compiler.check import check
from bufferlab.compiler.diagnostics import CompileError
from bufferlab.compiler.lexer import tokenize
from bufferlab.compiler.parse import parse
from bufferlab.compiler.preprocess import preprocess

ROUTER = r"""
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
typedef bit<32> ip4_t;
const bit<16> ETH_IPV4 = 0x0800;

header ethernet_t { mac_t dst; mac_t src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> total_len;
    bit<16> ident; bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto;
    bit<16> csum; ip4_t src; ip4_t dst;
}
struct headers_t { ethernet_t eth; ipv4_t ip; }
struct meta_t { bit<16> nhop; }

parser RParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            ETH_IPV4: parse_ip;
            default: accept;
        }
    }
    state parse_ip {
        pkt.extract(hdr.ip);
        verify(hdr.ip.ihl >= 5, error.HeaderTooShort);
        transition accept;
    }
}

control RVerify(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ip.isValid(),
            { hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.total_len, hdr.ip.ident,
              hdr.ip.flags, hdr.ip.frag, hdr.ip.ttl, hdr.ip.proto, hdr.ip.src, hdr.ip.dst },
            hdr.ip.csum, HashAlgorithm.csum16);
    }
}

control RIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action set_nhop(bit<16> nhop, bit<9> port) {
        meta.nhop = nhop;
        sm.egress_spec = port;
        hdr.ip.ttl = hdr.ip.ttl - 1;
    }
    table lpm4 {
        key = { hdr.ip.dst : lpm @name("dst_addr"); }
        actions = { set_nhop; drop; NoAction; }
        default_action = drop();
        size = 1024;
    }
    apply {
        if (hdr.ip.isValid() && hdr.ip.ttl > 1) {
            lpm4.apply();
        } else {
            drop();
        }
    }
}

control REgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control RCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ip.isValid(),
            { hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.total_len, hdr.ip.ident,
              hdr.ip.flags, hdr.ip.frag, hdr.ip.ttl, hdr.ip.proto, hdr.ip.src, hdr.ip.dst },
            hdr.ip.csum, HashAlgorithm.csum16);
    }
}

control RDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ip); }
}

V1Switch(RParser(), RVerify(), RIngress(), REgress(), RCompute(), RDeparser()) main;
"""

KITCHEN_SINK = r"""
#include <core.p4>
#include <v1model.p4>

type bit<9> port_t;
enum bit<8> Kind { DATA = 1, CTRL = 2 }
enum Dir { UP, DOWN }
error { BadKind }

header tag_t { Kind kind; bit<8> len; }
header opt_t { varbit<256> data; }
header lbl_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header a_t { bit<8> v; }
header b_t { bit<16> v; }
header_union ab_t { a_t a; b_t b; }
struct headers_t { tag_t tag; opt_t opt; lbl_t[3] labels; ab_t ab; }
struct digest_t { bit<8> len; Kind kind; }
struct meta_t {
    @field_list(1) bit<8> keep;
    bit<2> color;
    bit<32> flow;
    Dir dir;
}

bit<8> clamp<T>(in bit<8> v, in T unused) { return v > 64 ? 8w64 : v; }

parser KParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(8) ctrl_lengths;
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind, hdr.tag.len) {
            (Kind.DATA, 0 .. 31): labels;
            (Kind.CTRL, 0x80 &&& 0x80): by_length;
            (_, 0xF0 &&& 0xF0): reject;
            default: accept;
        }
    }
    state options {
        pkt.extract(hdr.opt, (bit<32>)hdr.tag.len * 8);
        transition accept;
    }
    state labels {
        pkt.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) { 1: union; default: labels; }
    }
    state by_length {
        transition select(hdr.tag.len) { ctrl_lengths: options; default: accept; }
    }
    state union {
        bit<8> peek = pkt.lookahead<bit<8>>();
        transition select(peek) {
            0: ua;
            default: ub;
        }
    }
    state ua { pkt.extract(hdr.ab.a); transition accept; }
    state ub { pkt.extract(hdr.ab.b); transition accept; }
}

control KVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control KIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) per_entry;
    direct_meter<bit<2>>(MeterType.bytes) policer;
    meter(128, MeterType.packets) rate;
    register<bit<32>>(256) seen;
    counter(512, CounterType.packets) hits;

    action fwd(port_t port) {
        sm.egress_spec = (bit<9>)port;
        policer.read(meta.color);
    }
    action to_cpu() {
        clone_preserving_field_list(CloneType.I2E, 100, 1);
        digest<digest_t>(1, { hdr.tag.len, hdr.tag.kind });
    }
    table classify {
        key = {
            hdr.tag.kind : exact;
            hdr.tag.len : range;
            meta.flow : ternary;
            hdr.labels[0].label : optional;
        }
        actions = { fwd; to_cpu; @defaultonly NoAction; }
        const default_action = NoAction();
        counters = per_entry;
        meters = policer;
        const entries = {
            (Kind.DATA, 1 .. 10, 0 &&& 0, _) : fwd((port_t)1);
            priority = 5 : (Kind.CTRL, _, 0x1 &&& 0xF, 7) : to_cpu();
        }
    }
    action pick(bit<32> dummy) { }
    table ecmp {
        key = { meta.flow : selector; hdr.tag.kind : exact; }
        actions = { pick; }
        implementation = action_selector(HashAlgorithm.crc16, 1024, 14);
    }
    apply {
        hash(meta.flow, HashAlgorithm.crc32, 32w0, { hdr.tag.kind, hdr.tag.len }, 32w65536);
        rate.execute_meter((bit<32>)meta.flow[6:0], meta.color);
        bit<32> count;
        seen.read(count, meta.flow[7:0] ++ 24w0 >> 24);
        seen.write((bit<32>)meta.flow[7:0], count + 1);
        hits.count(meta.flow & 511);
        meta.keep = clamp(hdr.tag.len, true);
        switch (classify.apply().action_run) {
            fwd: { ecmp.apply(); }
            default: { }
        }
        switch (meta.dir) {
            Dir.UP: { meta.flow = 1; }
            Dir.DOWN: { }
        }
        if (hdr.labels[0].isValid() && hdr.ab.isValid()) {
            hdr.labels.pop_front(1);
            hdr.ab.a.setInvalid();
        }
        if (meta.color == V1MODEL_METER_COLOR_RED) { resubmit_preserving_field_list(1); }
        assert(hdr.tag.len <= 255);
        log_msg("flow {} color {}", { meta.flow, meta.color });
    }
}

control KEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) { truncate(64); }
        if (sm.egress_port == 5) { recirculate_preserving_field_list(1); }
    }
}

control KCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control KDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(KParser(), KVerify(), KIngress(), KEgress(), KCompute(), KDeparser()) main;
"""

VERSIONED = r"""
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
    counter<bit<4>>(16, CounterType.bytes) c;
    apply {
        PortId_t p = sm.ingress_port;
        r.write(h.h.v[3:0], h.h.v);
        c.count(4w3);
        h.h.v = r.read(4w1);
        sm.egress_spec = p;
    }
}
control E(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs h, inout ms m) { apply { } }
control D(packet_out b, in hs h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.mark.parametrize(
    "text", [ROUTER, KITCHEN_SINK, VERSIONED], ids=["router", "kitchen_sink", "versioned"]
)
def test_sample_program_checks(compile_p4, text):
    program = compile_p4(text)
    assert program.main is not None and program.package.name == "V1Switch"
    assert set(program.main_args) == {"p", "vr", "ig", "eg", "ck", "dep"}
    untyped = [e for e in _expressions(program.program) if e.type is None]
    assert untyped == []


def _expressions(node):
    """Every expression under `node` that is part of user code (not the includes)."""
    import dataclasses

    stack, out = [node], []
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
        elif isinstance(n, ast.Node):
            if "p4include" in n.pos.file and not isinstance(n, ast.Program):
                continue
            if isinstance(n, ast.Expression) and not isinstance(n, ast.TypeExpression):
                out.append(n)
            if isinstance(n, ast.Annotation):
                continue
            stack.extend(getattr(n, f.name) for f in dataclasses.fields(n) if f.compare)
    return out


def test_router_details(compile_p4):
    program = compile_p4(ROUTER)
    ingress = program.main_args["ig"]
    table = next(d for d in ingress.locals if isinstance(d, ast.TableDeclaration))
    key = table.property("key").elements[0]
    assert key.expr.type == types.Bits(32) and key.match_kind.ref.name == "lpm"
    ttl = ingress.locals[1].body.components[2].right
    assert ttl.type == types.Bits(8) and ttl.right.type == types.Bits(8)


def test_kitchen_sink_details(compile_p4):
    program = compile_p4(KITCHEN_SINK)
    ingress = program.main_args["ig"]
    by_name = {d.name: d for d in ingress.locals}
    assert by_name["policer"].p4type.args == (types.Bits(2),)
    classify = by_name["classify"]
    assert classify.property("counters").value.ref is by_name["per_entry"]
    assert classify.property("implementation") is None
    ecmp_impl = by_name["ecmp"].property("implementation").value
    assert (
        ecmp_impl.call.kind is ast.CallKind.CONSTRUCTOR and ecmp_impl.type.name == "action_selector"
    )
    entry = classify.property("entries").entries[1]
    assert entry.priority.const_value == 5
    fwd_entry = classify.property("entries").entries[0]
    assert fwd_entry.action.expr.call.args[0].type.name == "port_t"
    assert fwd_entry.action.expr.call.args[0].const_value == 1
    parser = program.main_args["p"]
    assert parser.locals[0].p4type == types.Set(types.Bits(8))


def test_buffer_switch_style_include_tree(compile_p4, tmp_path):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "headers.p4").write_text(
        "header h_t { bit<8> v; }\nstruct hs { h_t h; }\n"
    )
    text = ROUTER.replace(
        "typedef bit<48> mac_t;", '#include "include/headers.p4"\ntypedef bit<48> mac_t;'
    )
    assert compile_p4(text).declaration("hs").p4type.name == "hs"


@pytest.mark.parametrize("seed", range(4))
def test_mutated_programs_fail_with_located_errors_only(tmp_path, seed):
    src = tmp_path / "k.p4"
    src.write_text(KITCHEN_SINK)
    tokens = tokenize(preprocess(src), str(src))
    user = [i for i, t in enumerate(tokens[:-1]) if t.pos.file == str(src)]
    rng = random.Random(seed)
    failures = 0
    for _ in range(150):
        i = rng.choice(user)
        mutated = list(tokens)
        if rng.random() < 0.5:
            del mutated[i]
        else:
            mutated.insert(i, tokens[rng.choice(user)])
        try:
            check(parse(mutated))
        except CompileError as err:
            assert err.pos is not None and err.pos.line >= 1
            failures += 1
    assert failures > 100  # nearly every mutation breaks the program, always with a CompileError


def test_load_text_without_preprocessing():
    program = frontend.load_text("const bit<8> x = 3;\nconst bit<8> y = x * 2;\n")
    assert program.declaration("y").value.const_value == 6 and program.main is None


def test_every_node_has_a_position_in_an_original_file(compile_p4):
    import dataclasses

    program = compile_p4(KITCHEN_SINK)
    files = set()
    stack = [program.program]
    count = 0
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
        elif isinstance(n, ast.Node):
            count += 1
            assert n.pos.line >= 1 and n.pos.column >= 1, n
            files.add(n.pos.file.rsplit("/", 1)[-1])
            stack.extend(getattr(n, f.name) for f in dataclasses.fields(n) if f.compare)
    assert count > 1000
    assert files == {"core.p4", "v1model.p4", "prog.p4"}


def test_deep_nesting_compiles_or_fails_with_a_compile_error():
    nested = "const bit<8> x = " + "(" * 500 + "7" + ")" * 500 + ";"
    assert frontend.load_text(nested).declaration("x").value.const_value == 7
    long_sum = "const bit<16> y = " + " + ".join(["1"] * 3000) + ";"
    assert frontend.load_text(long_sum).declaration("y").value.const_value == 3000
    absurd = "const bit<8> z = " + "(" * 100000 + "1" + ")" * 100000 + ";"
    with pytest.raises(CompileError, match="nested too deeply"):
        frontend.load_text(absurd, "deep.p4")
