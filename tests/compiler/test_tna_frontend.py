"""Front end for TNA/T2NA: architecture selection, @optional block parameters, packages of
packages, RegisterAction initialisers, located errors for wrong signatures."""

import pytest

from bufferlab.compiler import frontend
from bufferlab.compiler.diagnostics import CompileError


def load(tmp_path, text, **kwargs):
    path = tmp_path / "prog.p4"
    path.write_text(text)
    return frontend.load(path, **kwargs), path


def error_of(tmp_path, text, **kwargs):
    with pytest.raises(CompileError) as info:
        load(tmp_path, text, **kwargs)
    return info.value


def test_the_include_picks_the_architecture_and_target(tmp_path, tna):
    checked, _ = load(tmp_path, tna.tna_program())
    assert (checked.arch.name, checked.target) == ("tna", "tofino")
    assert checked.package.name == "Switch"
    assert checked.type_args["IH0"].name == "headers_t"
    # pipes 1..3 are omitted @optional parameters: their type variables stay open
    assert type(checked.type_args["IH1"]).__name__ == "DontCare"


def test_tofino2_widths_for_a_tna_program_and_for_t2na(tmp_path, tna):
    checked, _ = load(tmp_path, tna.tna_program(), target="tofino2")
    qid = checked.declaration("QueueId_t").p4type
    assert (checked.target, qid.width) == ("tofino2", 7)
    checked, _ = load(tmp_path, tna.tna_program())
    assert checked.declaration("QueueId_t").p4type.width == 5
    assert checked.declaration("PORT_METADATA_SIZE").value.const_value == 64


def test_intrinsic_metadata_widths_are_tofinos(tmp_path, tna):
    checked, _ = load(tmp_path, tna.tna_program())
    eg = dict(checked.declaration("egress_intrinsic_metadata_t").p4type.fields)
    assert {name: eg[name].width for name in ("enq_qdepth", "deq_timedelta", "enq_tstamp", "egress_qid",
                                              "app_pool_congest_stat", "pkt_length")} == {
        "enq_qdepth": 19, "deq_timedelta": 18, "enq_tstamp": 18, "egress_qid": 5,
        "app_pool_congest_stat": 8, "pkt_length": 16}
    # the prepended header is a whole number of bytes, as the hardware lays it out
    assert sum(t.width for t in eg.values()) % 8 == 0
    ig = dict(checked.declaration("ingress_intrinsic_metadata_t").p4type.fields)
    assert sum(t.width for t in ig.values()) == 64
    tm = dict(checked.declaration("ingress_intrinsic_metadata_for_tm_t").p4type.fields)
    assert (tm["ucast_egress_port"].width, tm["qid"].width, tm["ingress_cos"].width) == (9, 5, 3)


def test_t2na_egress_metadata_is_wider(tmp_path, tna):
    checked = frontend.load(tna.TNA_DIR / "t2na_ghost.p4")
    assert (checked.arch.name, checked.target) == ("t2na", "tofino2")
    eg = dict(checked.declaration("egress_intrinsic_metadata_t").p4type.fields)
    assert (eg["enq_tstamp"].width, eg["deq_timedelta"].width, eg["egress_qid"].width) == (32, 32, 7)
    assert sum(t.width for t in eg.values()) % 32 == 0


def test_blocks_may_leave_off_optional_parameters(tmp_path, tna):
    text = tna.tna_program().replace(
        """                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
""", "")
    checked, _ = load(tmp_path, text)
    assert checked.main is not None


def test_a_parameter_of_the_wrong_type_is_located(tmp_path, tna):
    text = tna.tna_program().replace("inout ingress_intrinsic_metadata_for_tm_t ig_tm_md",
                                 "inout ingress_intrinsic_metadata_for_tm_t ig_tm_md, in bit<8> extra")
    err = error_of(tmp_path, text)
    assert err.pos.line == tna.line_of(text, "in bit<8> extra")
    assert "parameter 'extra' of Ingress matches no parameter of IngressT" in err.message


def test_a_missing_pipeline_block_is_located(tmp_path, tna):
    main = "Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress()) pipe;\nSwitch(pipe) main;"
    text = tna.tna_program(main=main)
    err = error_of(tmp_path, text)
    assert err.pos.line == tna.line_of(text, "Pipeline(IgParser()")
    assert "wrong number of arguments to Pipeline: expected 6, got 5" in err.message


def test_a_block_in_the_wrong_place_is_located(tmp_path, tna):
    main = "Pipeline(IgParser(), Egress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;\n" \
           "Switch(pipe) main;"
    text = tna.tna_program(main=main)
    err = error_of(tmp_path, text)
    assert "argument 'ingress' of Pipeline" in err.message


def test_five_pipes_are_too_many(tmp_path, tna):
    main = tna.MAIN.replace("Switch(pipe) main;", "") + "\n" + "\n".join(
        f"Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) p{i};"
        for i in range(5)) + "\nSwitch(p0, p1, p2, p3, p4) main;"
    text = tna.tna_program(main=main)
    err = error_of(tmp_path, text)
    assert "wrong number of arguments to Switch: expected 4, got 5" in err.message


def test_register_action_initialiser_is_checked(tmp_path, tna):
    locals_ = """    Register<bit<32>, bit<16>>(1024) reg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) bump = {
        void apply(inout bit<32> value, out bit<32> rv) { value = value + 1; rv = value; }
    };"""
    checked, _ = load(tmp_path, tna.tna_program(locals_, "        md.value = bump.execute(md.index);"))
    assert checked.main is not None


@pytest.mark.parametrize(("apply", "message"), [
    ("void apply(inout bit<16> value) { }",
     "RegisterAction.apply: parameter 'value' is inout bit<16>, the abstract method needs inout bit<32>"),
    ("void apply(in bit<32> value) { }",
     "RegisterAction.apply: parameter 'value' is in bit<32>, the abstract method needs inout bit<32>"),
    ("void apply(inout bit<32> value, out bit<32> rv, out bit<32> more) { }",
     "RegisterAction.apply has no parameter like 'more'"),
    ("void update(inout bit<32> value) { }", "RegisterAction has no abstract method update (abstract: apply)"),
    ("bit<32> apply(inout bit<32> value) { return value; }", "RegisterAction.apply returns void, not bit<32>"),
])
def test_bad_register_action_is_located(tmp_path, apply, message, tna):
    locals_ = f"""    Register<bit<32>, bit<16>>(1024) reg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) bump = {{
        {apply}
    }};"""
    text = tna.tna_program(locals_)
    err = error_of(tmp_path, text)
    assert message in err.message
    assert err.pos.line == tna.line_of(text, apply.split("{")[0].strip()[:20])


def test_register_action_without_apply(tmp_path, tna):
    locals_ = """    Register<bit<32>, bit<16>>(1024) reg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) bump = { };"""
    text = tna.tna_program(locals_)
    err = error_of(tmp_path, text)
    assert "bump: abstract method apply of RegisterAction is not implemented" in err.message
    assert err.pos.line == tna.line_of(text, "RegisterAction<")


def test_register_action_on_a_counter_is_a_type_error(tmp_path, tna):
    locals_ = """    Counter<bit<32>, bit<16>>(1024, CounterType_t.PACKETS) ctr;
    RegisterAction<bit<32>, bit<16>, bit<32>>(ctr) bump = {
        void apply(inout bit<32> value) { }
    };"""
    text = tna.tna_program(locals_)
    err = error_of(tmp_path, text)
    assert "argument 'reg' of RegisterAction constructor: cannot convert Counter<bit<32>, bit<16>> to " \
           "Register<_, _>" in err.message
    assert err.pos.line == tna.line_of(text, "(ctr) bump")


@pytest.mark.parametrize(("local", "message"), [
    ("Hash<bit<16>>() h;", "wrong number of arguments to the constructor of Hash: expected 1 or 2, got 0"),
    ("Hash<bit<16>>(HashAlgorithm_t.CRC16, 5) h;", "argument 'poly' of Hash constructor"),
    ("Counter<bit<32>, bit<8>>(256) c;", "wrong number of arguments to the constructor of Counter"),
    ("Meter<bit<8>>(256, 3) m;", "argument 'type' of Meter constructor: cannot convert"),
    ("Mirror(10w5) m;", "argument 'mirror_type' of Mirror constructor"),
])
def test_wrong_extern_signature_is_located(tmp_path, local, message, tna):
    text = tna.tna_program("    " + local)
    err = error_of(tmp_path, text)
    assert message in err.message
    assert err.pos.line == tna.line_of(text, local)


def test_wrong_extern_method_arguments(tmp_path, tna):
    text = tna.tna_program("    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS) c;",
                       "        c.count(md.index, 1, 2);")
    err = error_of(tmp_path, text)
    assert "wrong number of arguments to count: expected 2, got 3" in err.message
    assert err.pos.line == tna.line_of(text, "c.count(")


def test_explicit_v1model_with_a_tna_include_is_refused(tmp_path, tna):
    err = error_of(tmp_path, tna.tna_program(), arch="v1model")
    assert "includes tna.p4 (tna) but --arch v1model was given" in err.message


def test_bf_pragmas_are_accepted(tmp_path, tna):
    before = '@pa_no_overlay("ingress", "hdr.ethernet.dst")\nheader pad_h { bit<8> x; }\n'
    locals_ = """    action nop() { }
    @stage(1) @placement_priority(2) @ways(4)
    table t { key = { hdr.ethernet.dst : exact; } actions = { nop; } size = 16; }"""
    checked, _ = load(tmp_path, tna.tna_program(locals_, "        t.apply();", before=before))
    assert checked.main is not None


def test_the_test_programs_check(tmp_path, tna):
    for path in sorted(tna.TNA_DIR.glob("*.p4")):
        if path.name == "common.p4":
            continue
        checked = frontend.load(path)
        assert checked.arch.name in ("tna", "t2na"), path.name
