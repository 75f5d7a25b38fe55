"""Semantic checks: every expression typed, names resolved, constants folded."""

import pytest

from bufferlab.compiler import ast, types


def apply_stmts(c):
    return c.body.components


def test_unsized_literal_adopts_the_other_operand_type(control):
    c = control("apply { meta.x = meta.x + 1; meta.s = -1; }")
    assign, neg = apply_stmts(c)
    add = assign.right
    assert add.type == types.Bits(8) and add.right.type == types.Bits(8)
    assert add.right.const_value == 1
    assert neg.right.type == types.Bits(8, True) and neg.right.const_value == -1


def test_every_expression_gets_a_type_and_names_their_declaration(control):
    c = control("apply { hdr.h.b = (bit<8>)hdr.h.b ++ 8w0 |+| 1; }")
    (assign,) = apply_stmts(c)
    left = assign.left
    assert left.type == types.Bits(16)
    assert isinstance(left.expr.expr.ref, ast.Parameter) and left.expr.expr.ref.name == "hdr"
    right = assign.right
    assert right.op == "|+|" and right.type == types.Bits(16)
    concat = right.left
    assert concat.op == "++" and concat.type == types.Bits(16)
    assert concat.left.type == types.Bits(8) and isinstance(concat.left, ast.CastExpression)


def test_constants_fold_with_wrapping(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
const bit<8> A = (bit<8>)(200 + 100);
const int B = 7 * 6 - 2;
const bit<4> C = 4w15 + 1;
const int<8> D = -128;
const bit<16> E = (bit<16>)A << 4;
const bool F = B > 30 && !false;
const bit<8> G = 0xF0 >> 4 | 0x0F & 3;
const bit<8> H = 0xABC[11:4];
const int I = 10 / 3 + 10 % 3;
const bit<8> J = A |+| 250;
const bit<8> K = 8w3 |-| 5;
const bit<16> L = 8w0xAB ++ 8w0xCD;
const bit<8> M = true ? 1 : 2;
"""
    )

    def value(name):
        return p.declaration(name).value.const_value

    assert value("A") == 44  # 300 wraps modulo 2^8
    assert value("B") == 40
    assert value("C") == 0
    assert value("D") == -128
    assert value("E") == 44 << 4
    assert value("F") is True
    assert value("G") == 0x0F | 3
    assert value("H") == 0xAB
    assert value("I") == 4
    assert value("J") == 255
    assert value("K") == 0
    assert value("L") == 0xABCD
    assert value("M") == 1


def test_widths_and_sizes_come_from_constants(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
const bit<32> W = 12;
header x_t { bit<(W)> f; bit<(W - 4)> g; }
struct s_t { x_t[W / 4] st; }
"""
    )
    x = p.declaration("x_t").p4type
    assert x.fields == (("f", types.Bits(12)), ("g", types.Bits(8)))
    assert p.declaration("s_t").p4type.field_type("st") == types.Stack(x, 3)


def test_enums_errors_and_serializable_enums(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
enum Color { RED, GREEN }
enum bit<8> Op { ADD = 1, SUB = 2 }
error { BadThing }
const Color c = Color.GREEN;
const Op o = Op.SUB;
const bit<8> n = (bit<8>)Op.ADD;
const error e = error.BadThing;
"""
    )
    assert p.declaration("c").value.const_value == types.EnumValue(
        p.declaration("Color").p4type, "GREEN"
    )
    assert p.declaration("o").value.const_value.value == 2
    assert p.declaration("n").value.const_value == 1
    assert p.declaration("e").value.const_value == types.ErrorValue("BadThing")
    assert p.errors[:2] == ["NoError", "PacketTooShort"] and p.errors[-1] == "BadThing"
    assert p.match_kinds == ["exact", "ternary", "lpm", "range", "optional", "selector"]


def test_generic_extern_instantiation_and_method_resolution(control):
    c = control(
        """
    register<bit<32>>(1024) r;
    counter(64, CounterType.packets) cnt;
    action act() {
        bit<32> v;
        r.read(v, 5);
        r.write(5, v + 1);
        cnt.count(3);
    }
    apply { act(); }
"""
    )
    reg, cnt, act = c.locals
    assert reg.p4type == types.Specialized(reg.p4type.base, (types.Bits(32),))
    assert reg.p4type.base.name == "register"
    assert cnt.p4type.name == "counter"
    read, write, count = act.body.components[1:]
    call = read.call.call
    assert call.kind is ast.CallKind.EXTERN_METHOD and call.target.name == "read"
    assert [p.name for p in call.params] == ["result", "index"]
    assert call.args[1].type == types.Bits(32) and call.args[1].const_value == 5
    assert call.receiver.ref is reg
    assert write.call.call.args[1].type == types.Bits(32)
    assert count.call.call.args[0].type == types.Bits(32)


def test_overloads_pick_by_argument_count(control):
    c = control(
        """
    register<bit<16>>(8) r;
    apply {
        bit<16> x = r.read(2);
        log_msg("x");
        log_msg("x={}", {x});
    }
"""
    )
    decl, log1, log2 = apply_stmts(c)
    assert decl.init.type == types.Bits(16) and len(decl.init.call.params) == 1
    assert len(log1.call.call.params) == 1 and len(log2.call.call.params) == 2
    assert log2.call.call.type_args["T"] == types.Tuple((types.Bits(16),))


def test_type_arguments_inferred_and_explicit(control):
    c = control(
        """
    apply {
        bit<16> h;
        hash(h, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.c }, 32w1024);
        random<bit<8>>(meta.x, 0, 7);
    }
"""
    )
    _, hash_call, random_call = apply_stmts(c)
    bound = hash_call.call.call.type_args
    assert (
        bound["O"] == types.Bits(16)
        and bound["T"] == types.Bits(16)
        and bound["M"] == types.Bits(32)
    )
    assert bound["D"] == types.Tuple((types.Bits(8), types.Bits(32)))
    r = random_call.call.call
    assert r.type_args["T"] == types.Bits(8) and r.args[1].type == types.Bits(8)


def test_header_and_stack_builtins(control):
    c = control(
        """
    apply {
        if (hdr.h.isValid()) { hdr.h.setInvalid(); }
        hdr.st.push_front(1);
        hdr.st[0].setValid();
        bit<32> n = hdr.st.size;
        bit<32> li = hdr.st.lastIndex;
    }
"""
    )
    if_stmt, push, set_valid, size, last = apply_stmts(c)
    assert if_stmt.cond.type == types.Bool()
    assert if_stmt.cond.call.kind is ast.CallKind.BUILTIN and if_stmt.cond.call.builtin == "isValid"
    assert push.call.call.builtin == "push_front" and push.call.call.args[0].const_value == 1
    assert set_valid.call.call.receiver.type.name == "h_t"
    assert size.init.const_value == 4
    assert last.init.type == types.Bits(32)


def test_table_apply_hit_miss_action_run_and_switch(control):
    c = control(
        """
    action a1(bit<9> port) { sm.egress_spec = port; }
    action a2() { mark_to_drop(sm); }
    table t {
        key = { hdr.h.a : exact; hdr.h.b : ternary @name("bee"); }
        actions = { a1; a2; @defaultonly NoAction; }
        default_action = a1(3);
        size = 64;
        const entries = {
            (1, 0x10 &&& 0xF0) : a1(2);
            (2, _) : a2();
        }
    }
    apply {
        if (t.apply().hit) { exit; }
        bool m = t.apply().miss;
        switch (t.apply().action_run) {
            a1:
            a2: { }
            default: { }
        }
    }
"""
    )
    a1, a2, t = c.locals
    assert isinstance(t.p4type, types.Table)
    if_stmt, miss, switch = apply_stmts(c)
    apply_call = if_stmt.cond.expr
    assert apply_call.call.kind is ast.CallKind.TABLE_APPLY and apply_call.call.target is t
    assert isinstance(apply_call.type, types.ApplyResult)
    assert miss.init.type == types.Bool()
    assert isinstance(switch.expr.type, types.ActionEnum)
    assert [case.label.ref for case in switch.cases[:2]] == [a1, a2]
    default = t.property("default_action").action
    assert default.ref is a1 and default.expr.call.args[0].type == types.Bits(9)
    entries = t.property("entries").entries
    mask = entries[0].keyset[1]
    assert mask.value.type == types.Bits(16) and mask.mask.const_value == 0xF0
    assert entries[0].action.expr.call.args[0].type == types.Bits(9)


def test_action_in_table_binds_directional_parameters(control):
    c = control(
        """
    action set(inout bit<8> v, bit<8> data) { v = data; }
    table t { key = { meta.x : exact; } actions = { set(meta.x); } }
    apply { t.apply(); set(meta.x, 8); }
"""
    )
    _, t = c.locals
    ref = t.property("actions").actions[0]
    assert ref.expr.call.args[0].expr.ref.name == "meta"
    direct = apply_stmts(c)[1].call.call
    assert direct.kind is ast.CallKind.ACTION and direct.args[1].type == types.Bits(8)


def test_parser_states_select_and_lookahead(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
header v_t { bit<8> len; varbit<64> opts; }
struct vh { h_t h; v_t v; h_t[4] st; }
struct pair_t { bit<8> a; bit<16> b; }
parser P(packet_in pkt, out vh hdr, inout ms meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) special;
    value_set<pair_t>(4) pairs;
    state start {
        pkt.extract(hdr.h);
        bit<8> peek = pkt.lookahead<bit<8>>();
        transition select(hdr.h.a, hdr.h.b) {
            (1, 0x800 &&& 0xF00): vlen;
            pairs: stack;
            (2 .. 9, default): accept;
            default: reject;
        }
    }
    state vlen {
        pkt.extract(hdr.v, (bit<32>)hdr.v.len * 8);
        verify(hdr.v.len > 0, error.PacketTooShort);
        transition select(hdr.v.len) { 0: accept; special: stack; _: reject; }
    }
    state stack {
        pkt.extract(hdr.st.next);
        transition select(hdr.st.last.a) { 0: stack; default: accept; }
    }
}
"""
    )
    parser = p.declaration("P")
    start, vlen, stack = parser.states
    sel = start.transition
    assert [c.state.ref.name for c in sel.cases] == ["vlen", "stack", "accept", "reject"]
    assert sel.cases[0].keyset.components[1].value.type == types.Bits(16)
    assert (
        sel.cases[1].keyset.ref.name == "pairs"
        and sel.cases[1].keyset.type.element.name == "pair_t"
    )
    assert start.components[1].init.call.type_args["T"] == types.Bits(8)
    extract = vlen.components[0].call.call
    assert len(extract.params) == 2 and extract.type_args["T"].name == "v_t"
    assert stack.components[0].call.call.args[0].type.name == "h_t"


def test_main_package_and_its_arguments(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
parser P(packet_in b, out hs h, inout ms m, inout standard_metadata_t sm) { state start { transition accept; } }
control VC(inout hs h, inout ms m) { apply { } }
control I(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control E(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs h, inout ms m) { apply { } }
control D(packet_out b, in hs h) { apply { b.emit(h); } }
V1Switch(p = P(), vr = VC(), ig = I(), eg = E(), ck = CC(), dep = D()) main;
"""
    )
    assert p.main.name == "main" and p.package.name == "V1Switch"
    assert {k: v.name for k, v in p.main_args.items()} == {
        "p": "P", "vr": "VC", "ig": "I", "eg": "E", "ck": "CC", "dep": "D",
    }  # fmt: skip
    assert p.type_args["H"].name == "hs" and p.type_args["M"].name == "ms"


def test_explicit_package_type_arguments(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
parser P(packet_in b, out hs h, inout ms m, inout standard_metadata_t sm) { state start { transition accept; } }
control VC(inout hs h, inout ms m) { apply { } }
control I(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs h, inout ms m) { apply { } }
control D(packet_out b, in hs h) { apply { } }
V1Switch<hs, ms>(P(), VC(), I(), I(), CC(), D()) main;
"""
    )
    assert p.main_args["eg"].name == "I"


def test_annotations_stay_on_nodes(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
struct m2 { @field_list(1, 2) bit<8> keep; }
control C(inout hs h) {
    @name("ingress.fwd") @id(0x01000005) action fwd() { }
    @hidden table t { key = { h.h.a : exact; } actions = { @tableonly fwd; @defaultonly NoAction; } }
    apply { t.apply(); }
}
"""
    )
    fwd, t = p.declaration("C").locals
    assert ast.find_annotation(fwd.annotations, "name").args[0].value == "ingress.fwd"
    assert ast.find_annotation(fwd.annotations, "id").args[0].value == 0x01000005
    assert ast.find_annotation(t.annotations, "hidden") is not None
    field = p.declaration("m2").fields[0]
    assert [a.value for a in ast.find_annotation(field.annotations, "field_list").args] == [1, 2]
    alias = p.declaration("standard_metadata_t").fields[5].annotations[0]
    assert alias.name == "alias" and alias.args[0].value == "queueing_metadata.enq_timestamp"


def test_functions_and_shadowing(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """
const bit<8> x = 1;
bit<8> max(in bit<8> a, in bit<8> b) { if (a > b) { return a; } return b; }
control C(inout ms meta) {
    apply {
        bit<8> x = 5;
        meta.x = max(x, 3);
    }
}
"""
    )
    decl, assign = p.declaration("C").body.components
    call = assign.right
    assert call.call.kind is ast.CallKind.FUNCTION and call.type == types.Bits(8)
    assert call.call.args[0].ref is decl  # the local x shadows the constant
    (warning,) = p.warnings
    assert (
        warning.pos == decl.pos
        and warning.message == f"'x' shadows the declaration at {p.declaration('x').pos}"
    )


def test_casts_that_are_allowed(control):
    c = control(
        """
    apply {
        bit<8> a = (bit<8>)hdr.h.b;
        int<8> s = (int<8>)meta.x;
        bit<1> b = (bit<1>)meta.f;
        bool f = (bool)1w1;
        bit<32> w = (bit<32>)(bit<8>)meta.s;
    }
"""
    )
    assert [d.init.type for d in apply_stmts(c)][:3] == [
        types.Bits(8),
        types.Bits(8, True),
        types.Bits(1),
    ]


def test_struct_and_list_expressions_initialise_aggregates(control):
    c = control(
        """
    apply {
        ms m = { x = 1, y = 2, f = true, s = -3 };
        h_t h = { 1, 2, 3 };
        hdr.h = {#};
        tuple<bit<8>, bool> t = { 7, false };
        bit<8> first = t[0];
        hs all = { {1, 2, 3}, { {1, 2, 3}, {4, 5, 6}, {#}, {#} } };
    }
"""
    )
    m, h, inv, t, first, nested = apply_stmts(c)
    stack = nested.init.components[1]
    assert (
        stack.type == types.Stack(h.init.type, 4)
        and stack.components[1].components[0].const_value == 4
    )
    assert (
        isinstance(stack.components[2], ast.InvalidExpression)
        and stack.components[2].type.name == "h_t"
    )
    assert m.init.type.name == "ms" and m.init.fields[3].value.type == types.Bits(8, True)
    assert h.init.components[2].type == types.Bits(32)
    assert inv.right.type.name == "h_t"
    assert first.init.type == types.Bits(8)


def test_for_loops(control):
    c = control(
        """
    apply {
        for (bit<8> i = 0; i < 4; i = i + 1) { meta.x = meta.x + i; }
        for (bit<8> j in 1 .. 3) { meta.x = j; }
        for (h_t e in hdr.st) { meta.x = e.a; }
        for (bit<16> v in { 1, 2, 300 }) { meta.y = v; }
    }
"""
    )
    loop, rng, each, listed = apply_stmts(c)
    assert [x.type for x in listed.collection.components] == [types.Bits(16)] * 3
    assert loop.cond.type == types.Bool()
    assert rng.collection.low.type == types.Bits(8)
    assert each.decl.p4type.name == "h_t"


def test_deprecated_externs_warn_at_the_use(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """control C(inout ms meta) {
    apply { clone3(CloneType.I2E, 1, meta); }
}
"""
    )
    (warning,) = p.warnings
    assert warning.pos.line == 7 and warning.pos.column == 13
    assert (
        warning.message == "clone3 is deprecated: Please use 'clone_preserving_field_list' instead"
    )
    assert (
        warning.format()
        .splitlines()[0]
        .endswith(
            "prog.p4:7:13: warning: clone3 is deprecated: Please use 'clone_preserving_field_list' instead"
        )
    )


def test_sub_control_instances_with_constructor_arguments(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """control Sub(inout ms meta)(bit<8> step) {
    apply { meta.x = meta.x + step; }
}
control C(inout ms meta) {
    Sub(2) twice;
    Sub(step = 5) five;
    apply { twice.apply(meta); five.apply(meta); }
}
"""
    )
    twice, five = p.declaration("C").locals
    assert twice.p4type.name == "Sub" and twice.args[0].value.type == types.Bits(8)
    assert five.args[0].value.const_value == 5
    call = p.declaration("C").body.components[0].call.call
    assert call.kind is ast.CallKind.CONTROL_APPLY and call.target is twice
    assert call.args[0].ref.name == "meta"


def test_aggregate_constants_fold_in_field_order(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """const ms DEFAULTS = { f = true, x = 1, s = -2, y = 300 };
const tuple<bit<8>, bool> PAIR = { 7, false };
bit<8> pick(in bool b) { if (b) { return 1; } else { return 2; } }
"""
    )
    assert p.declaration("DEFAULTS").value.const_value == (1, 300, True, -2)
    assert p.declaration("PAIR").value.const_value == (7, False)


def test_serializable_enum_meets_ints_as_its_underlying_type(compile_p4, prelude):
    p = compile_p4(
        prelude
        + """enum bit<8> Op { ADD = 1, SUB = 2 }
control C(inout ms meta) {
    apply {
        Op op = Op.ADD;
        meta.f = op == 2;
        meta.x = op + meta.x;
    }
}
"""
    )
    _, cmp, add = p.declaration("C").body.components
    assert cmp.right.type == types.Bool() and cmp.right.right.type == types.Bits(8)
    assert add.right.type == types.Bits(8)


def test_generic_struct_specialisations_are_distinct_types(compile_p4, p4_error, prelude):
    body = """struct pair<T> { T a; T b; }
control C(inout ms meta) {
    apply {
        pair<bit<8>> n = { 1, 2 };
        pair<bit<16>> w = { 300, 2 };
        pair<bit<8>> n2 = n;
        meta.x = n2.a;
        %s
    }
}
"""
    p = compile_p4(prelude + body % "")
    n, w, n2, _ = p.declaration("C").body.components
    assert n.p4type.name == "pair<bit<8>>" and n.p4type.field_type("a") == types.Bits(8)
    assert n2.init.type == n.p4type and w.p4type != n.p4type
    assert p4_error(prelude + body % "w = n;") == (
        "prog.p4:13:13: error: assignment: cannot convert pair<bit<8>> to pair<bit<16>>"
    )


V1_BLOCKS = """
parser P(packet_in b, out hs h, inout ms m, inout standard_metadata_t sm) { state start { transition accept; } }
control VC(inout hs h, inout ms m) { apply { } }
control I(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control E(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs h, inout ms m) { apply { } }
control D(packet_out b, in hs h) { apply { b.emit(h); } }
"""


def test_named_package_arguments_map_by_name_in_any_order(compile_p4, prelude):
    p = compile_p4(prelude + V1_BLOCKS + "V1Switch(ig = I(), dep = D(), p = P(), ck = CC(), eg = E(), vr = VC()) main;\n")
    assert {k: v.name for k, v in p.main_args.items()} == {
        "p": "P", "vr": "VC", "ig": "I", "eg": "E", "ck": "CC", "dep": "D",
    }  # fmt: skip


def test_field_list_takes_named_constants(compile_p4, prelude):
    p = compile_p4(prelude + "const bit<8> KEEP = 3;\nstruct m2 { @field_list(KEEP, KEEP + 1) bit<8> keep; }\n")
    ann = p.declaration("m2").fields[0].annotations[0]
    assert [a.const_value for a in ann.args] == [3, 4]


def test_field_list_rejects_a_value_that_is_not_a_constant(p4_error, prelude):
    message = p4_error(prelude + "struct m2 { @field_list(nowhere) bit<8> keep; }\n")
    assert message.startswith("prog.p4:6:25: error:")


def test_argument_less_mark_to_drop_is_declared_and_deprecated(compile_p4, prelude):
    p = compile_p4(prelude + "control C(inout hs h) { action a() { mark_to_drop(); } apply { a(); } }\n")
    assert any("mark_to_drop is deprecated" in w.message for w in p.warnings)


def test_the_standard_metadata_form_of_mark_to_drop_is_not_deprecated(compile_p4, prelude):
    p = compile_p4(prelude + "control C(inout hs h, inout standard_metadata_t sm) {\n"
                   "  action a() { mark_to_drop(sm); } apply { a(); } }\n")
    assert not [w.message for w in p.warnings if "deprecated" in w.message]


def test_struct_typed_header_fields(compile_p4, p4_error, prelude):
    p = compile_p4(prelude + "struct pr { bit<4> hi; bit<4> lo; }\nheader t_t { bit<8> a; pr p; }\n"
                   "control C(inout t_t t) { apply { t.p.lo = t.p.hi; } }\n")
    assert p.declaration("t_t").p4type.field_type("p").name == "pr"
    message = p4_error(prelude + "struct vb { varbit<8> v; }\nheader t_t { bit<8> a; vb p; }\n")
    assert message == "prog.p4:7:24: error: header field 'p' cannot have type vb"


def test_invalid_header_cast(compile_p4, prelude):
    p = compile_p4(prelude + "control C(inout hs hdr) { apply { hdr.h = (h_t){#}; } }\n")
    cast = p.declaration("C").body.components[0].right
    assert cast.type.name == "h_t" and cast.expr.type.name == "h_t"


@pytest.mark.parametrize(
    ("body", "value", "warning"),
    [
        ("meta.x = 256;", 0, "7:18: assignment: value 256 does not fit in bit<8>; truncated to 0"),
        ("meta.x = 8w300;", 44, "7:18: value 300 does not fit in bit<8>; truncated to 44"),
        ("meta.s = 200;", -56, "7:18: assignment: value 200 does not fit in int<8>; truncated to -56"),
        ("meta.x = -256;", 0, "7:18: assignment: value -256 does not fit in bit<8>; truncated to 0"),
        ("meta.x = -1;", 255, None),
        ("meta.s = (int<8>)4s8;", -8, None),
    ],
)
def test_constants_that_do_not_fit_are_truncated_with_a_warning_as_p4c_does(compile_p4, prelude, body, value,
                                                                             warning):
    p = compile_p4(prelude + "control C(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {\n"
                   + "apply { " + body + " }\n}\n")
    (assign,) = p.declaration("C").body.components
    assert assign.right.const_value == value
    assert [f"{w.pos.line}:{w.pos.column}: {w.message}" for w in p.warnings] == ([warning] if warning else [])
