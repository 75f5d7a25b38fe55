"""compiler/mutate: each mutation's rewrite of a small program, and the sites it must skip."""

from textwrap import dedent

import pytest

from bufferlab.compiler import frontend
from bufferlab.compiler.mutate import MUTATIONS
from bufferlab.compiler.printer import print_program, print_statement

PROGRAM = """\
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct hs { h_t h; h_t[4] st; }
struct ms { bit<8> x; bit<8> y; }
bit<8> twice(in bit<8> v, out bit<8> w) {
    bit<8> s = v + v;
    w = v;
    return s;
}
bit<8> bump(inout bit<8> i) {
    i = i + 1;
    return i;
}
bit<8> early(in bit<8> v) {
    if (v == 0) {
        return 1;
    }
    return v;
}
parser P(packet_in pkt, out hs hdr, inout ms m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a + hdr.h.b) {
            0 : accept;
            default : accept;
        }
    }
}
control C(inout hs hdr, inout ms m) { apply { } }
control I(inout hs hdr, inout ms m, inout standard_metadata_t sm) {
    apply {
        bit<8> k = 3;
        m.x = hdr.h.a + hdr.h.b * k;
        hdr.h.c |= 16w1;
        hdr.st[bump(m.y) & 3].a -= 8w1;
        m.y = twice(hdr.h.a, m.x);
        m.x = bump(m.y) + (hdr.h.a - k);
        m.y = early(m.x);
        hdr.st[bump(m.x)].b = hdr.st[bump(m.y)].b;
        hdr.st[bump(m.x)].a[3:0] |= 4w2;
    }
}
action mark(inout bit<8> t, bit<8> v) {
    t = v + 1;
}
control E(inout hs hdr, inout ms m, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.a == 1) {
            m.x = 1;
        }
        m.y = hdr.h.a == 2 ? 8w1 : 8w0;
        hdr.st[m.y].a = hdr.h.b > 3 ? 8w1 : 8w0;
        mark(m.x, hdr.h.b);
    }
}
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


@pytest.fixture
def program(tmp_path):
    """The small program, loaded afresh for each test: (file, checked tree)."""
    path = tmp_path / "prog.p4"
    path.write_text(PROGRAM)
    return str(path), frontend.load(path).program


def sites(program, name):
    file, tree = program
    return MUTATIONS[name](tree, file)


def site(program, name, what):
    """Apply the one site of `name` whose description contains `what`, and return it."""
    [chosen] = [s for s in sites(program, name) if what in s.what]
    chosen.rewrite()
    return chosen


def declaration(program, name):
    return print_statement(next(d for d in program[1].declarations if getattr(d, "name", "") == name))


def apply_block(program):
    text = declaration(program, "I")
    return dedent(text[text.index("apply {") + len("apply {\n"):text.rindex("    }")])


def test_introduce_temporaries(program):
    site(program, "introduce_temporaries", "`hdr.h.b * k`")
    assert apply_block(program).splitlines()[:3] == [
        "bit<8> k = 3;",
        "bit<8> mut_tmp_0 = hdr.h.b * k;",
        "m.x = hdr.h.a + mut_tmp_0;",
    ]


def test_introduce_temporaries_for_a_select_key(program):
    site(program, "introduce_temporaries", "`hdr.h.a + hdr.h.b`")
    assert declaration(program, "P").splitlines()[2:5] == [
        "        pkt.extract(hdr.h);",
        "        bit<8> mut_tmp_0 = hdr.h.a + hdr.h.b;",
        "        transition select(mut_tmp_0) {",
    ]


def test_introduce_temporaries_skips_statements_with_calls(program):
    whats = [s.what for s in sites(program, "introduce_temporaries")]
    # `m.x = bump(m.y) + (hdr.h.a - k)` calls a function with an effect, which must stay
    # before `hdr.h.a - k` is read; constants and bare names never move.
    assert not any("hdr.h.a - k" in w for w in whats)
    assert not any(w in ("`k` into a temporary", "`3` into a temporary") for w in whats)
    assert "`hdr.h.b * k` into a temporary" in whats


def test_split_compound_assignment(program):
    site(program, "split_compound_assignments", "`hdr.h.c |= 16w1;`")
    assert "hdr.h.c = hdr.h.c | 16w1;" in apply_block(program).splitlines()


def test_split_compound_assignment_with_an_effectful_index(program):
    site(program, "split_compound_assignments", "`hdr.st[bump(m.y) & 3].a -= 8w1;`")
    lines = apply_block(program).splitlines()
    at = lines.index("bit<8> mut_idx_0 = bump(m.y) & 3;")
    # The index is evaluated once, before the right side, as `-=` evaluates it.
    assert lines[at + 1] == "hdr.st[mut_idx_0].a = hdr.st[mut_idx_0].a - 8w1;"


def test_split_compound_assignment_of_a_slice_with_an_effectful_index(program):
    site(program, "split_compound_assignments", "`hdr.st[bump(m.x)].a[3:0] |= 4w2;`")
    lines = apply_block(program).splitlines()
    assert lines[-2:] == ["bit<8> mut_idx_0 = bump(m.x);",
                          "hdr.st[mut_idx_0].a[3:0] = hdr.st[mut_idx_0].a[3:0] | 4w2;"]


def test_reorder_independent_statements(program):
    [only] = sites(program, "reorder_independent_statements")
    only.rewrite()
    assert apply_block(program).splitlines()[1:3] == ["hdr.h.c |= 16w1;", "m.x = hdr.h.a + hdr.h.b * k;"]


def test_reorder_skips_dependent_statements_and_calls(tmp_path):
    path = tmp_path / "dep.p4"
    path.write_text(PROGRAM.replace("""        bit<8> k = 3;
        m.x = hdr.h.a + hdr.h.b * k;
        hdr.h.c |= 16w1;""", """        bit<8> k = 3;
        m.x = hdr.h.a;
        m.y = m.x;
        hdr.h = hdr.st[0];
        hdr.h.c = 1;
        hdr.st[1].a = 2;
        hdr.st[2].a = 3;
        hdr.h.setValid();
        hdr.h.b = 4;"""))
    found = MUTATIONS["reorder_independent_statements"](frontend.load(path).program, str(path))
    # m.y reads m.x; hdr.h.c is part of hdr.h; elements of a stack are not told apart (one
    # field of two elements conflicts); setValid is a call.
    assert [s.what for s in found] == ["`m.y = m.x;` after `hdr.h = hdr.st[0];`",
                                       "`hdr.h.c = 1;` after `hdr.st[1].a = 2;`"]


def test_inline_function(program):
    site(program, "inline_functions", "`twice(hdr.h.a, m.x)`")
    block = apply_block(program)
    start = block.index("{\n")
    assert block[start:block.index("}\n", start) + 1] == dedent("""\
        {
            bit<8> twice_v_0 = hdr.h.a;
            bit<8> twice_w_0;
            bit<8> twice_s_0 = twice_v_0 + twice_v_0;
            twice_w_0 = twice_v_0;
            bit<8> twice_ret_0 = twice_s_0;
            m.x = twice_w_0;
            m.y = twice_ret_0;
        }""")


def test_inline_action(program):
    site(program, "inline_functions", "`mark(m.x, hdr.h.b)`")
    text = declaration(program, "E")
    assert dedent(text[text.index("        {\n"):text.rindex("    }\n")]) == dedent("""\
        {
            bit<8> mark_t_0 = m.x;
            bit<8> mark_v_0 = hdr.h.b;
            mark_t_0 = mark_v_0 + 1;
            m.x = mark_t_0;
        }
""")


def test_inline_skips_early_returns_and_nested_calls(program):
    # `early` returns from inside an `if`; `bump` is only called inside expressions.
    assert [s.what for s in sites(program, "inline_functions")] == [
        "`twice(hdr.h.a, m.x)` inlined", "`mark(m.x, hdr.h.b)` inlined"]


def test_inline_skips_bodies_a_local_could_hide(tmp_path):
    path = tmp_path / "hide.p4"
    # `bump2` reads the constant K; the control declares a local K that would hide it.
    path.write_text(PROGRAM.replace("bit<8> bump(", "const bit<8> K = 7;\nbit<8> bump2(in bit<8> v) {\n"
                                    "    return v + K;\n}\nbit<8> bump(")
                    .replace("        bit<8> k = 3;\n", "        bit<8> k = 3;\n        bit<8> K = 1;\n"
                             "        m.x = bump2(m.y);\n"))
    found = MUTATIONS["inline_functions"](frontend.load(path).program, str(path))
    assert not [s for s in found if "bump2" in s.what]


def test_negate_condition(program):
    site(program, "negate_conditions", "`if (hdr.h.a == 1)`")
    assert declaration(program, "E").splitlines()[2:7] == [
        "        if (!(hdr.h.a == 1)) {",
        "        }",
        "        else {",
        "            m.x = 1;",
        "        }",
    ]


def test_expand_conditional_assignment(program):
    site(program, "expand_conditional_assignments", "`m.y = hdr.h.a == 2 ? 8w1 : 8w0;`")
    assert declaration(program, "E").splitlines()[5:11] == [
        "        if (hdr.h.a == 2) {",
        "            m.y = 8w1;",
        "        }",
        "        else {",
        "            m.y = 8w0;",
        "        }",
    ]


def test_expand_skips_targets_indexed_at_run_time(program):
    # `hdr.st[m.y].a` would be indexed after the condition instead of before it.
    assert [s.what for s in sites(program, "expand_conditional_assignments")] == [
        "`m.y = hdr.h.a == 2 ? 8w1 : 8w0;` as an if statement"]


def test_name_constant(program):
    site(program, "name_constants", "`16w1` named")
    file, tree = program
    own = [d for d in tree.declarations if d.pos.file == file]
    at = next(i for i, d in enumerate(own) if getattr(d, "name", "") == "I")
    # Declared just before the control that uses it.
    assert print_statement(own[at - 1]) == "const bit<16> mut_const_0 = 16w1;"
    assert "hdr.h.c |= mut_const_0;" in apply_block(program).splitlines()


def test_name_constants_leaves_types_and_annotations_alone(program):
    whats = {s.what for s in sites(program, "name_constants")}
    # `bit<8>` widths and the stack size `h_t[4]` are written types.
    assert "`8` named" not in whats and "`4` named" not in whats
    assert {"`3` named", "`16w1` named", "`8w1` named", "`0` named"} <= whats


def test_split_declaration(program):
    site(program, "split_declarations", "`bit<8> k = 3;`")
    assert apply_block(program).splitlines()[:3] == ["bit<8> k;", "k = 3;", "m.x = hdr.h.a + hdr.h.b * k;"]


def test_rename_local(program):
    site(program, "rename_locals", "`k`")
    lines = apply_block(program).splitlines()
    assert lines[:2] == ["bit<8> k_renamed_0 = 3;", "m.x = hdr.h.a + hdr.h.b * k_renamed_0;"]
    assert "m.x = bump(m.y) + (hdr.h.a - k_renamed_0);" in lines


def test_wrap_in_block(program):
    site(program, "wrap_in_blocks", "`hdr.h.c |= 16w1;`")
    assert apply_block(program).splitlines()[2:5] == ["{", "    hdr.h.c |= 16w1;", "}"]


def test_wrap_skips_declarations(program):
    assert not any("bit<8> k" in s.what for s in sites(program, "wrap_in_blocks"))


def test_swap_commutative_operands(program):
    site(program, "swap_commutative_operands", "`hdr.h.b * k`")
    assert apply_block(program).splitlines()[1] == "m.x = hdr.h.a + k * hdr.h.b;"


def test_swap_skips_operands_with_effects_and_non_commutative_operators(program):
    whats = [s.what for s in sites(program, "swap_commutative_operands")]
    assert not any("bump" in w or " - " in w for w in whats)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_every_site_gives_a_program_that_compiles(name, program, tmp_path):
    file, _ = program
    count = len(sites(program, name))
    assert count > 0
    # Up to ten sites spread over the program (the differential check compiles every one).
    for k in sorted({i * count // 10 for i in range(10)}):
        tree = frontend.load(file).program
        MUTATIONS[name](tree, file)[k].rewrite()
        out = tmp_path / f"{name}-{k}.p4"
        out.write_text(print_program(tree, file, str(out)))
        frontend.load(out)


def test_checksum_controls_and_field_lists_are_left_alone(tmp_path):
    # A v1model checksum control holds only checksum calls (BMv2 has no code there), and an
    # extern's generic argument may name fields read later (clone3's at the end of ingress).
    text = PROGRAM.replace("control C(inout hs hdr, inout ms m) { apply { } }", """\
control C(inout hs hdr, inout ms m) {
    apply {
        update_checksum(hdr.h.isValid(), { hdr.h.a, hdr.h.b }, hdr.h.c, HashAlgorithm.csum16);
    }
}""").replace("        m.y = early(m.x);\n", "        m.y = early(m.x);\n"
                  "        clone3(CloneType.I2E, 32w5, m.x + m.y);\n        truncate((bit<32>) (m.x + 1));\n")
    path = tmp_path / "ck.p4"
    path.write_text(text)
    lines = text.splitlines()
    checksum_line = next(i for i, line in enumerate(lines, 1) if "update_checksum" in line)
    clone_line = next(i for i, line in enumerate(lines, 1) if "clone3" in line)
    tree = frontend.load(path).program
    found = [s for name in MUTATIONS for s in MUTATIONS[name](tree, str(path))
             if name not in ("swap_commutative_operands",)]
    assert not [s for s in found if s.pos.line == checksum_line]
    assert not [s for s in found if s.pos.line == clone_line and s.mutation == "introduce_temporaries"]
    # A value argument of an extern is still taken.
    assert any(s.what == "`m.x + 1` into a temporary" for s in found)


def test_table_keys_written_without_a_name_keep_their_text(tmp_path):
    # A key's control-plane name is its expression as written, unless @name gives one.
    path = tmp_path / "keys.p4"
    path.write_text(PROGRAM.replace("control E(inout hs hdr, inout ms m, inout standard_metadata_t sm) {\n", """\
control E(inout hs hdr, inout ms m, inout standard_metadata_t sm) {
    bit<8> sel = 0;
    table t {
        key = {
            hdr.st[1].a : exact;
            hdr.h.a & hdr.h.b : exact;
            sel : exact;
            hdr.h.b & 0xf : exact @name("low");
        }
        actions = { NoAction; }
    }
""").replace("        mark(m.x, hdr.h.b);\n", "        mark(m.x, hdr.h.b);\n        t.apply();\n"))
    tree = frontend.load(path).program
    key_line = next(i for i, line in enumerate(path.read_text().splitlines(), 1) if "hdr.st[1].a : exact" in line)
    named = [s for s in MUTATIONS["name_constants"](tree, str(path)) if key_line <= s.pos.line <= key_line + 3]
    assert [s.what for s in named] == ["`0xf` named"]
    assert not [s for s in MUTATIONS["swap_commutative_operands"](tree, str(path)) if s.pos.line == key_line + 1]
    assert not [s for s in MUTATIONS["rename_locals"](tree, str(path)) if "`sel`" in s.what]
