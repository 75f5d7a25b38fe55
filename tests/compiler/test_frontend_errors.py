"""Bad programs are rejected with `file:line:col: error: message` by the phase that must reject them."""

import pytest


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # unknown names and types
        ("apply { meta.x = nope; }", "prog.p4:7:18: error: unknown name 'nope'"),
        ("apply { nope_t v; }", "prog.p4:7:9: error: unknown type 'nope_t'"),
        ("apply { meta.zz = 1; }", "prog.p4:7:9: error: ms has no field 'zz'"),
        ("apply { meta.x = Color.RED; }", "prog.p4:7:18: error: unknown name 'Color'"),
        ("apply { meta.x = error.Nope; }", "prog.p4:7:18: error: unknown error 'error.Nope'"),
        (
            "apply { meta = hdr.h.b; }",
            "prog.p4:7:16: error: assignment: cannot convert bit<16> to ms",
        ),
        # widths and literals
        (
            "apply { meta.x = hdr.h.b; }",
            "prog.p4:7:18: error: assignment: cannot convert bit<16> to bit<8>",
        ),
        (
            "apply { meta.x = meta.x + hdr.h.b; }",
            "prog.p4:7:18: error: '+' cannot combine bit<8> and bit<16>: cast one side",
        ),
        (
            "apply { meta.x = 9w300; }",
            "prog.p4:7:18: error: assignment: cannot convert bit<9> to bit<8>",
        ),
        ("apply { meta.f = 1; }", "prog.p4:7:18: error: assignment: cannot convert int to bool"),
        (
            "apply { meta.x = meta.x << meta.s; }",
            "prog.p4:7:28: error: the shift amount must be unsigned, not int<8>",
        ),
        (
            "apply { bit<8> v = hdr.h.a[8:1]; }",
            "prog.p4:7:28: error: slice [8:1] is out of range for bit<8>",
        ),
        (
            "apply { meta.x = meta.x[hdr.h.a:0]; }",
            "prog.p4:7:25: error: slice bound must be a compile-time integer constant",
        ),
        (
            "apply { if (meta.x) { } }",
            "prog.p4:7:13: error: an if condition must be a bool, not bit<8>",
        ),
        (
            "apply { meta.x = meta.f ? 1 : 2; }",
            "prog.p4:7:18: error: the width of '?:' with two int branches cannot be inferred; cast a branch",
        ),
        ("apply { meta.x = meta.x / 0; }", "prog.p4:7:27: error: division by zero"),
        # casts
        (
            "apply { meta.s = (int<8>)hdr.h.b; }",
            "prog.p4:7:18: error: cannot cast bit<16> to int<8>",
        ),
        ("apply { meta.f = (bool)meta.x; }", "prog.p4:7:18: error: cannot cast bit<8> to bool"),
        ("apply { meta.x = (bit<8>)hdr.h; }", "prog.p4:7:18: error: cannot cast h_t to bit<8>"),
        # l-values and directions
        (
            "apply { 3 = meta.x; }",
            "prog.p4:7:9: error: cannot assign: this expression is not an l-value",
        ),
        (
            "apply { hdr.h.isValid() = true; }",
            "prog.p4:7:9: error: cannot assign: this expression is not an l-value",
        ),
        (
            "action a(in bit<8> v) { v = 1; } apply { }",
            "prog.p4:7:25: error: cannot assign: parameter 'v' has direction in and cannot be written",
        ),
        (
            "action a(bit<8> v) { v = 1; } apply { }",
            "prog.p4:7:22: error: cannot assign: parameter 'v' has no direction and cannot be written",
        ),
        (
            "const bit<8> K = 1; apply { K = 2; }",
            "prog.p4:7:29: error: cannot assign: 'K' is a constant and cannot be written",
        ),
        (
            "apply { mark_to_drop(sm.egress_spec); }",
            "prog.p4:7:22: error: argument 'standard_metadata' of mark_to_drop: cannot convert bit<9> to standard_metadata_t",
        ),
        (
            "register<bit<8>>(4) r; apply { r.read(meta.x + 1, 0); }",
            "prog.p4:7:39: error: argument 'result' of read has direction out and needs an l-value: this expression is not an l-value",
        ),
        (
            "apply { hash(meta.x, HashAlgorithm.crc16, 0, { hdr.h.a }, 10); }",
            "prog.p4:7:43: error: argument 'base' of hash: cannot infer a width for the integer 0; cast it, e.g. (bit<8>)",
        ),
        (
            "apply { clone_preserving_field_list(CloneType.I2E, 1, meta.x); }",
            "prog.p4:7:55: error: argument 'index' of clone_preserving_field_list has no direction and must be a compile-time constant",
        ),
        (
            "register<bit<8>>(hdr.h.c) r; apply { }",
            "prog.p4:7:18: error: argument 'size' of register constructor has no direction and must be a compile-time constant",
        ),
        (
            "apply { verify(meta.f, error.NoMatch); }",
            "prog.p4:7:9: error: verify may only be called in a parser state",
        ),
        # argument counts
        (
            "apply { mark_to_drop(sm, sm); }",
            "prog.p4:7:9: error: wrong number of arguments to mark_to_drop: expected 0 or 1, got 2",
        ),
        (
            "register<bit<8>>(4) r; apply { r.write(1); }",
            "prog.p4:7:32: error: wrong number of arguments to write: expected 2, got 1",
        ),
        (
            "register<bit<8>>() r; apply { }",
            "prog.p4:7:1: error: wrong number of arguments to the constructor of register: expected 1, got 0",
        ),
        (
            "action a(bit<8> v) { } apply { a(); }",
            "prog.p4:7:32: error: wrong number of arguments to a: expected 1, got 0",
        ),
        ("apply { hdr.h.setValid(1); }", "prog.p4:7:9: error: setValid() takes no arguments"),
        (
            "apply { log_msg(x = 1); }",
            "prog.p4:7:9: error: wrong number of arguments to log_msg: expected 1 or 2, got 1",
        ),
        # duplicates
        (
            "apply { bit<8> v; bit<16> v; }",
            "prog.p4:7:19: error: duplicate declaration of 'v' (first declared at prog.p4:7:9)",
        ),
        (
            "action a() { } action a() { } apply { }",
            "prog.p4:7:16: error: duplicate declaration of 'a' (first declared at prog.p4:7:1)",
        ),
        # tables
        (
            "table t { key = { meta.x : fuzzy; } actions = { NoAction; } } apply { }",
            "prog.p4:7:28: error: unknown name 'fuzzy'",
        ),
        (
            "table t { key = { meta.x : exact; } actions = { nope; } } apply { }",
            "prog.p4:7:49: error: unknown action 'nope'",
        ),
        (
            "action a() { } table t { key = { meta.x : exact; } actions = { NoAction; } default_action = a(); } apply { }",
            "prog.p4:7:93: error: default action a is not in the actions of table t",
        ),
        (
            "table t { key = { meta.x : exact; } actions = { NoAction; } const entries = { (1, 2) : NoAction(); } } apply { }",
            "prog.p4:7:79: error: entry has 2 key values but table t has 1 keys",
        ),
        (
            "table t { key = { meta.x : exact; } actions = { NoAction; } size = meta.x; } apply { }",
            "prog.p4:7:68: error: table size must be a non-negative compile-time integer",
        ),
        (
            "table t { key = { meta.x : exact; } } apply { }",
            "prog.p4:7:1: error: table t has no actions property",
        ),
        (
            "action a(bit<8> v) { } table t { key = { meta.x : exact; } actions = { a; } default_action = a(); } apply { }",
            "prog.p4:7:94: error: wrong number of arguments to action a: expected 1, got 0",
        ),
        (
            "table t { key = { meta.x : exact; } actions = { NoAction; } } action a() { t.apply(); } apply { }",
            "prog.p4:7:76: error: a table may only be applied in a control's apply block",
        ),
        (
            "action a() { } action b() { } table t { key = { meta.x : exact; } actions = { a; } } apply { switch (t.apply().action_run) { b: { } } }",
            "prog.p4:7:126: error: 'b' is not an action of table t",
        ),
        (
            "table t { key = { meta.x : exact; } actions = { NoAction; } counters = meta; } apply { }",
            "prog.p4:7:72: error: table property counters must be an extern instance, not ms",
        ),
        ("apply { int v = 3; }", "prog.p4:7:9: error: a variable cannot have type int"),
        # statements
        (
            "apply { return 1; }",
            "prog.p4:7:16: error: return with a value is only allowed in a function with a result",
        ),
        ("apply { break; }", "prog.p4:7:9: error: break outside a for loop"),
        (
            "apply { switch (meta.x) { 1: { } 1: { } } }",
            "prog.p4:7:34: error: duplicate switch label",
        ),
        (
            "apply { switch (meta.x) { default: { } 1: { } } }",
            "prog.p4:7:27: error: default must be the last switch label",
        ),
        (
            "apply { bit<8> v = hdr.st.next.a; }",
            "prog.p4:7:20: error: 'next' of a header stack may only be used in a parser",
        ),
        (
            "apply { bit<8> v = hdr.st[4].a; }",
            "prog.p4:7:27: error: index 4 is out of range for a stack of size 4",
        ),
        (
            "action a(bit<8> d, inout bit<8> x) { } apply { }",
            "prog.p4:7:20: error: action a: directional parameter 'x' must come before action data",
        ),
        (
            # `_` takes its parameter's type: a type variable bound by nothing else is unknown.
            "apply { random(_, 8w0, 8w7); hash(_, HashAlgorithm.crc16, 8w0, { meta.x }, 8w4); }",
            "prog.p4:7:35: error: argument 'result' of hash: cannot infer the type of '_'; "
            "give hash a type argument",
        ),
        (
            "apply { counter(4, CounterType.packets) c; }",
            "prog.p4:7:9: error: instance 'c' must be declared in a control or parser, not in a block",
        ),
    ],
)
def test_control_errors(control_error, body, expected):
    assert control_error(body) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("header h { bit<8> a; bit<8> a; }", "prog.p4:6:22: error: duplicate field 'a' in h"),
        ("header h { hs m; }", "prog.p4:6:12: error: header field 'm' cannot have type hs"),
        ("struct s { int i; }", "prog.p4:6:12: error: struct field 'i' cannot have type int"),
        (
            "header h { varbit<8> a; varbit<8> b; }",
            "prog.p4:6:25: error: header h has more than one varbit field",
        ),
        (
            "header_union u { bit<8> a; }",
            "prog.p4:6:18: error: header_union member 'a' must be a header, not bit<8>",
        ),
        (
            "struct s { ms[2] m; }",
            "prog.p4:6:12: error: a stack holds headers or header unions, not ms",
        ),
        (
            "struct s { h_t[0] m; }",
            "prog.p4:6:16: error: header stack size must be positive, not 0",
        ),
        ("enum bit<4> E { A = 16 }", "prog.p4:6:21: error: value 16 of E.A does not fit in bit<4>"),
        ("enum E { A, A }", "prog.p4:6:13: error: duplicate member 'A' in enum E"),
        (
            "control K(inout bit<8> x)(bit<8> c) { apply { x = c; } }"
            " control C2(inout ms m) { apply { K.apply(m.x); } }",
            "prog.p4:6:91: error: K has constructor parameters: instantiate it to apply it",
        ),
        (
            "control K(inout bit<8> x); control C2(inout ms m) { apply { K.apply(m.x); } }",
            "prog.p4:6:61: error: K is only declared: a K.apply() needs its definition",
        ),
        ("error { NoError }", "prog.p4:6:9: error: duplicate error 'error.NoError'"),
        ("const bit<8> c = meta;", "prog.p4:6:18: error: unknown name 'meta'"),
        (
            "bit<8> g;",
            "prog.p4:6:1: error: variable 'g' cannot be declared at the top level; use const",
        ),
        (
            "const bit<8> c = 1; const bit<16> c = 2;",
            "prog.p4:6:21: error: duplicate declaration of 'c' (first declared at prog.p4:6:1)",
        ),
        (
            "const bit<(ms)> x = 1;",
            "prog.p4:6:12: error: width of bit must be a compile-time integer constant",
        ),
        (
            "parser P(packet_in b) { state s { transition accept; } }",
            "prog.p4:6:1: error: parser P has no 'start' state",
        ),
        (
            "parser P(packet_in b) { state start { transition nowhere; } }",
            "prog.p4:6:50: error: unknown state 'nowhere'",
        ),
        (
            "parser P(packet_in b) { state accept { transition start; } state start { } }",
            "prog.p4:6:25: error: state 'accept' is built in and cannot be declared",
        ),
        (
            "parser P(packet_in b, out hs h) { state start { transition select(h.h.a) { (1, 2): accept; } } }",
            "prog.p4:6:76: error: select keyset: cannot convert a list expression to bit<8>",
        ),
        (
            "parser P(packet_in b, out hs h) { state start { b.extract(h.h); exit; } }",
            "prog.p4:6:65: error: exit is not allowed in a state",
        ),
        (
            "parser P(packet_in b, out hs h) { value_set<bit<8>>(2) vs; state start { transition select(h.h.a, h.h.b) { (vs, 1): accept; } } }",
            "prog.p4:6:109: error: a value_set must be the whole keyset, not part of a tuple",
        ),
        (
            "parser P(packet_in b, out hs h) { value_set<bit<8>>(2) vs; state start { transition select(h.h.a, h.h.b) { vs: accept; } } }",
            "prog.p4:6:108: error: a value_set matching (bit<8>, bit<16>) needs a struct of those field types, not bit<8>",
        ),
        (
            "bit<8> f(in bit<8> a) { if (a > 1) { return a; } }",
            "prog.p4:6:1: error: function f does not return a value on every path",
        ),
        (
            "parser P(packet_in b, out hs hdr) { state start { b.extract(hdr); transition accept; } }",
            "prog.p4:6:61: error: extract needs a header, not hs",
        ),
        (
            "bit<8> f(in bit<8> a) { return; }",
            "prog.p4:6:25: error: return needs a value of type bit<8>",
        ),
        ("@name(3) const bit<8> c = 1;", "prog.p4:6:1: error: @name takes one string argument"),
        ('@id("x") const bit<8> c = 1;', "prog.p4:6:1: error: @id takes one integer argument"),
        ("@hidden(1) const bit<8> c = 1;", "prog.p4:6:1: error: @hidden takes no arguments"),
        (
            "extern E { E(); void m(); void m(); }",
            "prog.p4:6:27: error: duplicate method m with 0 parameters",
        ),
        ("extern E { F(); }", "prog.p4:6:12: error: constructor F of extern E must be named E"),
        (
            "control C() { apply { } } C() main;",
            "prog.p4:6:27: error: 'main' must be a package instance, not C",
        ),
    ],
)
def test_declaration_errors(p4_error, prelude, text, expected):
    assert p4_error(prelude + text + "\n") == expected


PIPELINE = """parser P(packet_in b, out hs h, inout ms m, inout standard_metadata_t sm) { state start { transition accept; } }
control VC(inout hs h, inout ms m) { apply { } }
control I(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs h, inout ms m) { apply { } }
control D(packet_out b, in hs h) { apply { } }
control Bad(inout h_t h, inout ms m, inout standard_metadata_t sm) { apply { } }
control BadDir(out hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
// Only reads what Egress may write: accepted, as p4c does.
control ReadOnly(in hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
"""


@pytest.mark.parametrize(
    ("main", "expected"),
    [
        (
            "V1Switch(P(), VC(), I(), I(), CC()) main;",
            "prog.p4:15:1: error: wrong number of arguments to V1Switch: expected 6, got 5",
        ),
        (
            "V1Switch(P(), VC(), I(), Bad(), CC(), D()) main;",
            "prog.p4:11:13: error: argument 'eg' of V1Switch: parameter 'h' of Bad has type h_t, Egress<H, M> needs hs",
        ),
        (
            "V1Switch(P(), VC(), I(), BadDir(), CC(), D()) main;",
            "prog.p4:12:16: error: argument 'eg' of V1Switch: parameter 'h' of BadDir has direction out, Egress<H, M> needs inout",
        ),
        (
            "V1Switch(VC(), VC(), I(), I(), CC(), D()) main;",
            "prog.p4:15:10: error: argument 'p' of V1Switch: expected a parser of type Parser<H, M>, got VC",
        ),
        (
            "V1Switch(P(), VC(), I(), I(), CC(), D(), D()) main;",
            "prog.p4:15:1: error: wrong number of arguments to V1Switch: expected 6, got 7",
        ),
    ],
)
def test_package_errors(p4_error, prelude, main, expected):
    assert p4_error(prelude + PIPELINE + main + "\n") == expected


def test_a_block_that_only_reads_an_inout_parameter_fits(compile_p4, prelude):
    compile_p4(prelude + PIPELINE + "V1Switch(P(), VC(), I(), ReadOnly(), CC(), D()) main;\n")


def test_syntax_error_in_full_program_is_located(p4_error, prelude):
    assert p4_error(prelude + "control C() {\n  apply {\n    x = = 1;\n  }\n}\n") == (
        "prog.p4:8:9: error: syntax error: expected an expression, found '='"
    )


def test_error_shows_source_line_and_caret(tmp_path, prelude):
    from bufferlab.compiler import frontend
    from bufferlab.compiler.diagnostics import CompileError

    src = tmp_path / "prog.p4"
    src.write_text(prelude + "const bit<4> big = nope;\n")
    with pytest.raises(CompileError) as info:
        frontend.load(src)
    assert str(info.value).splitlines() == [
        f"{src}:6:20: error: unknown name 'nope'",
        "const bit<4> big = nope;",
        "                   ^",
    ]
