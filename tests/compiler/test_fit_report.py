"""bufferlab-p4c --fit-report: each Tofino fit rule refuses what it must, at the place
it must, and accepts what fits; exit statuses; both buffer_switch programs."""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from p4.config.v1 import p4info_pb2

from bufferlab.compiler.api import compile_program
from bufferlab.compiler.cli import run
from bufferlab.compiler.fit import check_program
from bufferlab.compiler.fit.targets import TOFINO2

ROOT = Path(__file__).resolve().parents[2]
TNA = ROOT / "tests" / "p4" / "tna"
V1MODEL_SWITCH = ROOT / "p4src" / "buffer_switch.p4"
TNA_SWITCH = ROOT / "p4src" / "tna" / "buffer_switch.p4"

# An ingress whose declarations and apply block each test fills in; egress passes.
TEMPLATE = """#include <core.p4>
#include <tna.p4>
#include "common.p4"

struct md_t {{
    bit<32> a; bit<32> b; bit<32> c; bit<32> x; bit<32> y;
    bit<16> h; bit<64> w; bit<64> v; bit<8> k; bit<1> f;
    bit<128> k0; bit<128> k1; bit<128> k2; bit<128> k3; bit<128> k4;
    bit<128> k5; bit<128> k6; bit<128> k7; bit<128> k8;
}}

parser IgParser(packet_in pkt, out headers_t hdr, out md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {{
    IngressStart() start_;
    PacketParser() packets;
    state start {{
        start_.apply(pkt, ig_intr_md);
        packets.apply(pkt, hdr);
        transition accept;
    }}
}}

control Ingress(inout headers_t hdr, inout md_t md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
{decls}
    apply {{
        ig_tm_md.ucast_egress_port = 1;
{body}
    }}
}}

control IgDeparser(packet_out pkt, inout headers_t hdr, in md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
    apply {{ pkt.emit(hdr); }}
}}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;
Switch(pipe) main;
"""

COUNTER_RA = """
    Register<bit<32>, bit<8>>(256, 0) reg;
    RegisterAction<bit<32>, bit<8>, bit<32>>(reg) bump = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(reg) peek = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
"""


def fit(tmp_path, capsys, decls="", body="", *extra):
    """Write a TNA program from the template; run --fit-report; (status, report, source)."""
    source = TEMPLATE.format(decls=decls, body=body)
    path = tmp_path / "prog.p4"
    path.write_text(source)
    status = run(["--arch", "tna", "--fit-report", "-I", str(TNA), str(path), *extra])
    return status, capsys.readouterr().out, source


def line_of(source, snippet, nth=1):
    """1-based line number of the nth line of `source` that contains `snippet`."""
    lines = [i for i, text in enumerate(source.splitlines(), 1) if snippet in text]
    return lines[nth - 1]


def findings(report, rule):
    """The report's error lines for one rule."""
    return [line for line in report.splitlines() if f"[{rule}]" in line and ": error:" in line]


def assert_refused(report, rule, source, snippet, nth=1):
    """The report has an error of `rule` at the line holding `snippet`."""
    lines = findings(report, rule)
    where = f"prog.p4:{line_of(source, snippet, nth)}:"
    assert any(where in line for line in lines), f"no [{rule}] at {where} in:\n{report}"


# --- one access per register per packet ---------------------------------------------------

def test_two_accesses_to_one_register_are_refused_at_the_second(tmp_path, capsys):
    status, report, source = fit(tmp_path, capsys, COUNTER_RA, """
        md.x = bump.execute(md.k);
        if (md.x == 3) {
            md.y = peek.execute(md.k);
        }""")
    assert status == 1
    assert_refused(report, "register-one-access", source, "md.y = peek.execute(md.k);")
    assert "not mutually exclusive" in findings(report, "register-one-access")[0]
    assert report.rstrip().endswith("verdict: does not fit (1 error, 0 notes)")


def test_the_public_two_action_register_program_is_refused(capsys):
    status = run(["--fit-report", str(TNA / "register_action.p4")])
    report = capsys.readouterr().out
    assert status == 1
    (line,) = findings(report, "register-one-access")
    assert "register_action.p4:83:13:" in line and "Ingress.flow_packets" in line


def test_accesses_on_exclusive_branches_fit(tmp_path, capsys):
    status, report, _ = fit(tmp_path, capsys, COUNTER_RA, """
        if (md.f == 1) {
            md.x = bump.execute(md.k);
        } else {
            md.x = peek.execute(md.k);
        }""")
    assert status == 0, report
    assert "verdict: fits" in report


def test_a_counter_updated_twice_is_refused(tmp_path, capsys):
    decls = "    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS) hits;\n"
    status, report, source = fit(tmp_path, capsys, decls, """
        hits.count(md.k);
        if (md.f == 1) {
            hits.count(md.k + 1);
        }""")
    assert status == 1
    assert_refused(report, "register-one-access", source, "hits.count(md.k + 1);")
    assert "counter Ingress.hits" in findings(report, "register-one-access")[0]


def test_a_register_shared_by_ingress_and_egress_is_refused(tmp_path, capsys):
    path = tmp_path / "shared.p4"
    path.write_text(TNA_PROGRAMS_SHARED)
    status = run(["--fit-report", "-I", str(TNA), str(path)])
    report = capsys.readouterr().out
    assert status == 1
    (line,) = findings(report, "register-one-gress")
    assert f"{path}:{line_of(TNA_PROGRAMS_SHARED, 'md.seen = read_depth')}:" in line
    assert "used by ingress (read here) and by egress (write at" in line


TNA_PROGRAMS_SHARED = """#include <core.p4>
#include <tna.p4>
#include "common.p4"
struct md_t { bit<32> depth; bit<32> seen; }
Register<bit<32>, bit<9>>(512, 0) qdepth;
parser IgParser(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    IngressStart() s;
    PacketParser() p;
    state start { s.apply(pkt, ig_intr_md); p.apply(pkt, hdr); transition accept; }
}
control Ingress(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    RegisterAction<bit<32>, bit<9>, bit<32>>(qdepth) read_depth = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    apply {
        ig_tm_md.ucast_egress_port = 1;
        md.seen = read_depth.execute(1);
    }
}
control IgDeparser(packet_out pkt, inout headers_t hdr, in md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}
parser EgParser(packet_in pkt, out headers_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Egress(inout headers_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    RegisterAction<bit<32>, bit<9>, bit<32>>(qdepth) write_depth = {
        void apply(inout bit<32> value) { value = md.depth; }
    };
    apply {
        md.depth = (bit<32>)eg_intr_md.deq_qdepth;
        write_depth.execute(eg_intr_md.egress_port);
    }
}
control EgDeparser(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;
Switch(pipe) main;
"""


# --- RegisterAction bodies against the stateful ALU ------------------------------------------

def ra_program(cell, body, out="bit<32>"):
    """Declarations of one register and one RegisterAction with `body`."""
    return f"""
    Register<{cell}, bit<8>>(256) reg;
    RegisterAction<{cell}, bit<8>, {out}>(reg) act = {{
        void apply(inout {cell} value, out {out} rv) {{
{body}
        }}
    }};
"""


CALL = "        md.x = (bit<32>)act.execute(md.k);"


def test_three_comparisons_exceed_tofino_1_but_fit_tofino_2(tmp_path, capsys):
    body = """            if (value > md.a) { value = 1; }
            if (value < md.b) { rv = 2; }
            if (value == md.c) { rv = 3; }"""
    status, report, source = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL)
    assert status == 1
    (line,) = findings(report, "salu-comparisons")
    assert f"prog.p4:{line_of(source, 'RegisterAction<bit<32>')}:" in line
    assert "needs 3 comparisons" in line and "has 2" in line
    status, report, _ = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL, "--target", "tofino2")
    assert not findings(report, "salu-comparisons")


def test_a_comparison_of_two_packet_fields_is_refused(tmp_path, capsys):
    body = "            if (value + md.a > md.b) { value = 0; }"
    status, report, source = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL)
    assert status == 1
    assert_refused(report, "salu-compare-form", source, "if (value + md.a > md.b)")


@pytest.mark.parametrize("expr", ["value << 1", "value * md.a"])
def test_operators_the_stateful_alu_lacks_are_refused(tmp_path, capsys, expr):
    body = f"            value = {expr};"
    status, report, source = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL)
    assert status == 1
    assert_refused(report, "salu-operators", source, f"value = {expr};")


def test_three_updates_of_one_cell_are_refused(tmp_path, capsys):
    body = """            if (md.a == 1) { value = 1; }
            else if (md.b == 1) { value = 2; }
            else { value = 3; }"""
    status, report, source = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL)
    assert status == 1
    (line,) = findings(report, "salu-updates")
    assert f"prog.p4:{line_of(source, 'RegisterAction<bit<32>')}:" in line


@pytest.mark.parametrize("cell,ok", [
    ("bit<48>", False), ("bit<32>", True), ("bit<64>", True), ("pair16_t", True), ("pair64_t", False),
])
def test_register_cells_the_stateful_alu_holds(tmp_path, capsys, cell, ok):
    structs = ("struct pair16_t { bit<16> lo; bit<16> hi; }\n"
               "struct pair64_t { bit<64> lo; bit<64> hi; }\n")
    read = "rv = 1;"
    status, report, source = fit(tmp_path, capsys, ra_program(cell, f"            {read}", "bit<8>"), CALL)
    if not ok and cell.startswith("bit"):
        assert status == 1
        assert_refused(report, "salu-cell", source, "Register<bit<48>")
        return
    if cell.startswith("pair"):
        path = tmp_path / "prog.p4"
        path.write_text(source.replace("struct md_t {", structs + "struct md_t {", 1))
        status = run(["--fit-report", "-I", str(TNA), str(path)])
        report = capsys.readouterr().out
        assert bool(findings(report, "salu-cell")) is not ok, report
        if not ok:
            status = run(["--fit-report", "--target", "tofino2", "-I", str(TNA), str(path)])
            assert not findings(capsys.readouterr().out, "salu-cell")
        return
    assert status == 0, report


def test_a_packet_field_wider_than_the_cell_is_refused(tmp_path, capsys):
    body = "            value = md.a[15:0] + 1;\n            rv = value;\n"
    status, _, _ = fit(tmp_path, capsys, ra_program("bit<16>", body, "bit<16>"), CALL)
    assert status == 0
    body = "            if (md.a == 7) { value = 1; }\n            rv = value;\n"
    status, report, source = fit(tmp_path, capsys, ra_program("bit<16>", body, "bit<16>"), CALL)
    assert status == 1
    assert_refused(report, "salu-phv-width", source, "if (md.a == 7)")


def test_more_large_constants_than_register_file_rows_are_refused(tmp_path, capsys):
    body = """            if (value > 100) { value = 200; }
            else { value = 300; }
            rv = value;"""
    status, _, _ = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL)
    assert status == 0
    body = """            if (value > 100) { value = 200; }
            else { value = value + 300; }
            rv = 400 + value;
            rv = 500;"""
    status, report, source = fit(tmp_path, capsys, ra_program("bit<32>", body), CALL)
    assert status == 1
    (line,) = findings(report, "salu-constants")
    assert f"prog.p4:{line_of(source, 'Register<bit<32>, bit<8>>')}:" in line
    assert "5 constants" in line


def test_five_register_actions_on_one_register_are_refused(tmp_path, capsys):
    decls = "    Register<bit<32>, bit<8>>(256) reg;\n" + "".join(f"""
    RegisterAction<bit<32>, bit<8>, bit<32>>(reg) act{i} = {{
        void apply(inout bit<32> value, out bit<32> rv) {{ rv = value + {i}; }}
    }};""" for i in range(5))
    body = "\n".join(f"        {'if' if i == 0 else 'else if'} (md.k == {i}) {{ md.x = act{i}.execute(1); }}"
                     for i in range(5))
    status, report, source = fit(tmp_path, capsys, decls, body)
    assert status == 1
    (line,) = findings(report, "salu-instructions")
    assert f"prog.p4:{line_of(source, 'Register<bit<32>, bit<8>>')}:" in line


def test_more_outputs_than_the_device_returns_are_refused():
    """Tofino 1's RegisterAction has one `rv`; a T2NA RegisterAction2 returns two, which
    a device with one output word (Tofino 1's) refuses."""
    source = TNA / "t2na_ghost.p4"
    compiled = compile_program(source)
    assert check_program(compiled.json, str(source), "t2na", TOFINO2).fits
    assert "RegisterAction2" in (TNA / "t2na_ghost.p4").read_text()
    report = check_program(compiled.json, str(source), "t2na", replace(TOFINO2, salu_outputs=1))
    assert any(f.rule == "salu-outputs" for f in report.errors)


# --- arithmetic ------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,ok", [
    ("md.a * md.b", False), ("md.a * 4", True), ("md.a * 3", False),
    ("md.a / 3", False), ("md.a / 8", True), ("md.a % 8", True), ("md.a % 10", False),
    ("md.a << md.k", False), ("md.a << 3", True),
])
def test_multiply_divide_modulo_only_by_a_power_of_two(tmp_path, capsys, expr, ok):
    status, report, source = fit(tmp_path, capsys, "", f"        md.x = {expr};")
    if ok:
        assert status == 0, report
    else:
        assert status == 1
        assert_refused(report, "arith-mul-div", source, f"md.x = {expr};")


def test_64_bit_arithmetic_is_refused(tmp_path, capsys):
    status, report, source = fit(tmp_path, capsys, "", "        md.w = md.w + md.v;")
    assert status == 1
    assert_refused(report, "alu-width", source, "md.w = md.w + md.v;")


def test_two_operations_on_one_field_are_refused(tmp_path, capsys):
    decls = """
    action sum3() { md.x = md.a + md.b + md.c; }
    action chained() { md.x = md.a + md.b; md.y = md.x + md.c; }
    table t { key = { md.k: exact; } actions = { sum3; chained; } size = 16; }
"""
    status, report, source = fit(tmp_path, capsys, decls, "        t.apply();")
    assert status == 1
    assert_refused(report, "action-single-op", source, "action sum3()")
    assert_refused(report, "action-single-op", source, "action chained()")
    (sum3,) = [f for f in findings(report, "action-single-op") if "sum3" in f]
    assert "2 ALU operations" in sum3


# --- widths ----------------------------------------------------------------------------------

def test_keys_wider_than_the_input_crossbar_are_refused(tmp_path, capsys):
    exact = " ".join(f"md.k{i}: exact;" for i in range(9))
    ternary = " ".join(f"md.k{i}: ternary;" for i in range(5))
    fits = " ".join(f"md.k{i}: ternary;" for i in range(4))
    decls = f"""
    table wide_exact {{ key = {{ {exact} }} actions = {{ NoAction; }} size = 16; }}
    table wide_ternary {{ key = {{ {ternary} }} actions = {{ NoAction; }} size = 16; }}
    table ok_ternary {{ key = {{ {fits} }} actions = {{ NoAction; }} size = 16; }}
"""
    status, report, source = fit(tmp_path, capsys, decls,
                                 "        wide_exact.apply();\n        wide_ternary.apply();\n"
                                 "        ok_ternary.apply();")
    assert status == 1
    lines = findings(report, "key-width")
    assert len(lines) == 2
    assert_refused(report, "key-width", source, "table wide_exact")
    assert_refused(report, "key-width", source, "table wide_ternary")
    assert any("1152-bit exact key (144 bytes)" in line for line in lines)


def test_a_range_key_wider_than_20_bits_is_refused(tmp_path, capsys):
    decls = """
    table narrow { key = { md.h: range; } actions = { NoAction; } size = 16; }
    table wide { key = { md.a: range; } actions = { NoAction; } size = 16; }
"""
    status, report, source = fit(tmp_path, capsys, decls, "        narrow.apply();\n        wide.apply();")
    assert status == 1
    (line,) = findings(report, "key-width")
    assert f"prog.p4:{line_of(source, 'table wide')}:" in line and "(32 bits)" in line


def test_action_data_wider_than_the_action_data_bus_is_refused(tmp_path, capsys):
    params = ", ".join(f"bit<128> p{i}" for i in range(9))
    decls = f"""
    action big({params}) {{ md.k0 = p0; }}
    action medium(bit<64> p) {{ md.w = p; }}
    table t {{ key = {{ md.k: exact; }} actions = {{ big; medium; }} size = 16; }}
"""
    status, report, source = fit(tmp_path, capsys, decls, "        t.apply();")
    assert status == 1
    # Actions are located at the table that uses them (the JSON gives actions no position).
    assert_refused(report, "action-data-width", source, "table t {")
    assert "action Ingress.big takes 1152 bits of data" in findings(report, "action-data-width")[0]
    notes = [line for line in report.splitlines() if ": note:" in line and "medium" in line]
    assert notes and "64 bits of data" in notes[0]


# --- stages ----------------------------------------------------------------------------------

def chain(n):
    """n tables, each keyed on the field the previous one's action wrote."""
    decls, body = [], []
    for i in range(n):
        key = "md.k" if i == 0 else f"md.k{(i - 1) % 9}"
        decls.append(f"""
    action set{i}() {{ md.k{i % 9} = {i}; }}
    table t{i} {{ key = {{ {key}: exact; }} actions = {{ set{i}; }} default_action = set{i}(); size = 16; }}""")
        body.append(f"        t{i}.apply();")
    return "\n".join(decls), "\n".join(body)


def test_a_13_table_dependency_chain_exceeds_tofino_1_only(tmp_path, capsys):
    decls, body = chain(13)
    status, report, source = fit(tmp_path, capsys, decls, body)
    assert status == 1
    (line,) = findings(report, "stages")
    assert "needs at least 13 stages; Tofino 1 has 12" in line
    assert "pipe.ingress: at least 13 of 12 stages (does not fit)" in report
    assert "Ingress.t0 -> Ingress.t1 -> Ingress.t2" in report
    status, report, _ = fit(tmp_path, capsys, decls, body, "--target", "tofino2")
    assert status == 0
    assert "pipe.ingress: at least 13 of 20 stages (fits)" in report
    decls, body = chain(12)
    status, report, _ = fit(tmp_path, capsys, decls, body)
    assert status == 0, report


def test_independent_tables_share_a_stage(tmp_path, capsys):
    decls = "".join(f"""
    action set{i}() {{ md.k{i} = {i}; }}
    table t{i} {{ key = {{ md.k: exact; }} actions = {{ set{i}; }} size = 16; }}""" for i in range(8))
    status, report, _ = fit(tmp_path, capsys, decls, "\n".join(f"        t{i}.apply();" for i in range(8)))
    assert status == 0
    assert "pipe.ingress: at least 1 of 12 stages (fits)" in report


# --- the command line ------------------------------------------------------------------------

def test_exit_statuses_and_outputs(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out.json"
    monkeypatch.chdir(tmp_path)
    assert run(["--fit-report", str(TNA / "l3_forward.p4")]) == 0
    assert "verdict: fits" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # no ./l3_forward.json without -o
    assert run(["--fit-report", str(TNA / "l3_forward.p4"), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["arch"] == "tna"
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <tna.p4>\ncontrol C() { apply { x = 1; } }\n")
    assert run(["--fit-report", str(bad)]) == 1
    assert "bad.p4:2:" in capsys.readouterr().err
    assert run(["--arch", "psa", "--fit-report", str(bad)]) == 2


# --- the lab's two programs ------------------------------------------------------------------

def test_v1model_buffer_switch_is_refused_for_tofino(capsys):
    status = run(["--arch", "tna", "--fit-report", str(V1MODEL_SWITCH)])
    report = capsys.readouterr().out
    assert status == 1
    assert report.startswith(f"Tofino fit report: {V1MODEL_SWITCH} (v1model) against Tofino 1")
    gress = findings(report, "register-one-gress")
    assert any("register pool_occupancy is used by ingress" in line for line in gress)
    assert any("admission.p4:" in line and "queue_occupancy" in line
               for line in findings(report, "register-one-access"))
    assert any("pause_sent_at holds bit<48>" in line for line in findings(report, "salu-cell"))
    assert findings(report, "arith-mul-div") and findings(report, "alu-width")


def test_tna_buffer_switch_fits_tofino_1_and_2(capsys):
    for target, stages in (("tofino", 12), ("tofino2", 20)):
        status = run(["--arch", "tna", "--target", target, "--fit-report", str(TNA_SWITCH)])
        report = capsys.readouterr().out
        assert status == 0, report
        assert "verdict: fits (0 errors" in report
        for gress in ("pipe.ingress", "pipe.egress"):
            (found,) = re.findall(rf"{gress}: at least (\d+) of {stages} stages \(fits\)", report)
            assert 1 <= int(found) <= stages


def _actions(info):
    return {a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in info.actions}


def _tables(info):
    ids = {a.preamble.id: a.preamble.name for a in info.actions}
    return {t.preamble.name.removeprefix("pipe."): (
        [(m.name, m.bitwidth, m.match_type) for m in t.match_fields],
        sorted(ids[r.id] for r in t.action_refs)) for t in info.tables}


def test_tna_buffer_switch_keeps_the_controller_facing_tables(tmp_path):
    tna = compile_program(TNA_SWITCH)
    v1 = compile_program(V1MODEL_SWITCH)
    assert tna.arch == "tna" and isinstance(tna.p4info, p4info_pb2.P4Info)
    shared = ["switch_config", "dscp_class", "ipv4_lpm", "l2_forward", "ecn_threshold", "bcn_config",
              "bcn_feedback"]
    tna_tables, v1_tables = _tables(tna.p4info), _tables(v1.p4info)
    tna_actions, v1_actions = _actions(tna.p4info), _actions(v1.p4info)
    for table in shared:
        assert tna_tables[table] == v1_tables[table], table
        for action in tna_tables[table][1]:
            assert tna_actions[action] == v1_actions[action], action
    # What the TM does on Tofino has no P4 table there.
    for table in ("buffer_threshold", "queue_threshold", "pause_config"):
        assert table in v1_tables and table not in tna_tables
    registers = {r.preamble.name for r in tna.p4info.registers}
    assert registers == {"pipe.bcn_countdown", "pipe.bcn_qold", "pipe.bcn_last_fb"}
    counters = {c.preamble.name.removeprefix("pipe.") for c in tna.p4info.counters}
    assert {"port_rx", "parser_errors", "ingress_discards", "queue_tx", "bcn_frames",
            "ecn_marked", "probes_stamped"} <= counters


@pytest.mark.parametrize("program", ["varbit_header_bound.p4", "parser_error_codes.p4"])
def test_varbit_fields_do_not_break_the_report(capsys, program):
    status = run(["--arch", "tna", "--fit-report", str(ROOT / "tests" / "p4" / program)])
    captured = capsys.readouterr()
    assert status in (0, 1), captured.err
    assert "verdict: " in captured.out and "internal compiler error" not in captured.err


def test_t2na_buffer_switch_fits_tofino_2(capsys):
    program = ROOT / "p4src" / "tna" / "buffer_switch_t2na.p4"
    status = run(["--fit-report", str(program)])
    report = capsys.readouterr().out
    assert status == 0, report
    assert report.startswith(f"Tofino fit report: {program} (t2na) against Tofino 2 (20 stages")
    for gress in ("pipe.ingress", "pipe.egress"):
        (found,) = re.findall(rf"{gress}: at least (\d+) of 20 stages \(fits\)", report)
        assert 1 <= int(found) <= 20
