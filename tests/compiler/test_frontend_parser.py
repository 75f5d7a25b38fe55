"""Parser: every P4_16 construct becomes the right AST node, with positions."""

import pytest

from bufferlab.compiler import ast
from bufferlab.compiler.diagnostics import CompileError, SourcePos
from bufferlab.compiler.lexer import tokenize
from bufferlab.compiler.parse import Parser, parse


def prog(text):
    return parse(tokenize(text, "t.p4")).declarations


def expr(text):
    return Parser(tokenize(text, "t.p4")).expression()


def stmt(text):
    return Parser(tokenize(text, "t.p4")).statement()


def syntax_error(text):
    with pytest.raises(CompileError) as info:
        parse(tokenize(text, "t.p4"))
    return str(info.value).splitlines()[0]


# ---------------------------------------------------------------- expressions


def show(e):
    """A compact prefix rendering of an expression tree."""
    if isinstance(e, ast.BinaryExpression):
        return f"({e.op} {show(e.left)} {show(e.right)})"
    if isinstance(e, ast.UnaryExpression):
        return f"({e.op} {show(e.operand)})"
    if isinstance(e, ast.PathExpression):
        return e.name
    if isinstance(e, ast.IntLiteral):
        return str(e.value)
    if isinstance(e, ast.MemberExpression):
        return f"{show(e.expr)}.{e.member}"
    if isinstance(e, ast.TernaryExpression):
        return f"(? {show(e.cond)} {show(e.then)} {show(e.otherwise)})"
    if isinstance(e, ast.CastExpression):
        return f"(cast {show(e.expr)})"
    if isinstance(e, ast.SliceExpression):
        return f"{show(e.expr)}[{show(e.hi)}:{show(e.lo)}]"
    if isinstance(e, ast.IndexExpression):
        return f"{show(e.expr)}[{show(e.index)}]"
    if isinstance(e, ast.MethodCallExpression):
        return f"{show(e.callee)}({', '.join(show(a.value) for a in e.args)})"
    return type(e).__name__


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a + b * c", "(+ a (* b c))"),
        ("a - b - c", "(- (- a b) c)"),
        # P4: comparisons bind looser than bitwise operators (unlike C)
        ("a & b == c", "(== (& a b) c)"),
        ("a | b < c ^ d", "(< (| a b) (^ c d))"),
        ("a << 2 + b", "(<< a (+ 2 b))"),
        ("a >> 2", "(>> a 2)"),
        ("a ++ b + c", "(++ a (+ b c))" if False else "(+ (++ a b) c)"),
        ("a |+| b |-| c", "(|-| (|+| a b) c)"),
        ("!a && b || c", "(|| (&& (! a) b) c)"),
        ("-a * ~b", "(* (- a) (~ b))"),
        ("c ? a : b ? d : e", "(? c a (? b d e))"),
        ("x.y[3].z[7:0]", "x.y[3].z[7:0]"),
        ("f(a, 2)", "f(a, 2)"),
        ("t.apply().hit", "t.apply().hit"),
        ("(bit<8>) a + b", "(+ (cast a) b)"),
        ("(a) + b", "(+ a b)"),
    ],
)
def test_precedence_and_associativity(text, tree):
    assert show(expr(text)) == tree


def test_generic_call_versus_comparison():
    call = expr("f<bit<8>>(x)")
    assert isinstance(call, ast.MethodCallExpression)
    assert isinstance(call.type_args[0], ast.BaseTypeNode) and call.type_args[0].kind == "bit"
    assert show(expr("a < b && c > d")) == "(&& (< a b) (> c d))"
    looked = expr("pkt.lookahead<h_t>().f")
    assert isinstance(looked, ast.MemberExpression) and looked.expr.type_args[0].name == "h_t"


def test_nested_shift_inside_type_arguments_is_two_closers():
    call = expr("f<tuple<bit<8>, bit<16>>>(x)")
    assert isinstance(call.type_args[0], ast.TupleTypeNode)
    assert len(call.type_args[0].elements) == 2


def test_literals_and_special_expressions():
    lit = expr("8w255")
    assert (lit.value, lit.width, lit.signed, lit.text) == (255, 8, False, "8w255")
    assert expr("true").value is True
    assert expr('"s"').value == "s"
    assert isinstance(expr("{#}"), ast.InvalidExpression)
    assert isinstance(expr("_"), ast.DontCareExpression)
    lst = expr("{a, 1, ...}")
    assert isinstance(lst, ast.ListExpression) and len(lst.components) == 2 and lst.has_rest
    st = expr("{f = 1, g = b}")
    assert isinstance(st, ast.StructExpression) and [f.name for f in st.fields] == ["f", "g"]
    assert expr(".glob").is_global
    assert isinstance(expr("error.NoMatch"), ast.MemberExpression)


def test_named_arguments():
    call = expr("f(x = 1, y = b)")
    assert [a.name for a in call.args] == ["x", "y"]


def test_expression_positions():
    e = expr("  a +\n  b")
    assert e.pos == SourcePos("t.p4", 1, 3) and e.right.pos == SourcePos("t.p4", 2, 3)


# ---------------------------------------------------------------- declarations


def test_type_declarations():
    decls = prog(
        """
        const bit<8> C = 3;
        typedef bit<48> mac_t;
        type bit<9> port_t;
        header h_t { bit<4> v; varbit<32> opt; }
        header_union u_t { h_t a; h_t b; }
        struct s_t<T> { T f; h_t[3] stack; tuple<bit<8>, bool> t; }
        enum E { A, B }
        enum bit<8> SE { X = 1, Y = 0x2 }
        error { Oops }
        match_kind { fancy }
        """
    )
    kinds = [type(d).__name__ for d in decls]
    assert kinds == [
        "ConstantDeclaration", "TypedefDeclaration", "TypedefDeclaration", "HeaderDeclaration",
        "HeaderUnionDeclaration", "StructDeclaration", "EnumDeclaration", "SerEnumDeclaration",
        "ErrorDeclaration", "MatchKindDeclaration",
    ]  # fmt: skip
    assert decls[2].is_newtype and not decls[1].is_newtype
    assert decls[5].type_params[0].name == "T"
    assert isinstance(decls[5].fields[1].type_node, ast.HeaderStackTypeNode)
    assert [m.name for m in decls[7].members] == ["X", "Y"]
    assert decls[8].members[0].name == "Oops"


def test_extern_declarations():
    ext, fn = prog(
        """
        extern Reg<T, I> {
            Reg(bit<32> size);
            Reg(bit<32> size, T init);
            T read(in I index);
            void write<V>(in I index, in V value);
            abstract void cb(inout T x);
        }
        extern void hashit<O, D>(out O result, in D data, @optional in bit<8> seed);
        """
    )
    assert [m.name for m in ext.methods] == ["Reg", "Reg", "read", "write", "cb"]
    assert ext.methods[0].is_constructor and ext.methods[4].is_abstract
    assert ext.methods[3].type_params[0].name == "V"
    assert fn.prototype.params[2].annotations[0].name == "optional"
    assert [p.direction for p in fn.prototype.params] == [
        ast.Direction.OUT,
        ast.Direction.IN,
        ast.Direction.IN,
    ]


def test_parser_type_control_type_package():
    p, c, pkg = prog(
        """
        parser P<H>(packet_in b, out H h);
        control Ctl<H>(inout H h);
        package Pkg<H>(P<H> p, Ctl<H> c);
        """
    )
    assert isinstance(p, ast.ParserTypeDeclaration) and isinstance(c, ast.ControlTypeDeclaration)
    assert isinstance(pkg.params[0].type_node, ast.SpecializedTypeNode)


def test_parser_with_states_select_and_value_set():
    (p,) = prog(
        """
        parser MyP(packet_in b, out hs h)(bit<8> k) {
            value_set<bit<16>>(4) pvs;
            bit<8> tmp;
            state start {
                b.extract(h.eth);
                transition select(h.eth.t, h.eth.u) {
                    (0x800, _): v4;
                    (0x86dd &&& 0xffff, 1 .. 5): v6;
                    (pvs, default): accept;
                    default: reject;
                }
            }
            state v4 { transition accept; }
            @name("six") state v6 { }
        }
        """
    )
    assert p.constructor_params[0].name == "k"
    assert [type(x).__name__ for x in p.locals] == ["ValueSetDeclaration", "VariableDeclaration"]
    sel = p.states[0].transition
    assert isinstance(sel, ast.SelectExpression) and len(sel.exprs) == 2
    k0, k1, k2, k3 = (c.keyset for c in sel.cases)
    assert isinstance(k0.components[1], ast.DontCareExpression)
    assert isinstance(k1.components[0], ast.MaskExpression)
    assert isinstance(k1.components[1], ast.RangeExpression)
    assert isinstance(k2.components[1], ast.DefaultExpression)
    assert isinstance(k3, ast.DefaultExpression)
    assert p.states[2].transition is None and p.states[2].annotations[0].name == "name"


def test_control_with_table_properties():
    (c,) = prog(
        """
        control Ing(inout hs h) {
            action a(inout bit<8> x, bit<8> v) { x = v; }
            table t {
                key = { h.f : exact @name("f"); h.g : ternary; }
                actions = { a(h.x); @defaultonly NoAction; }
                const default_action = NoAction();
                size = 1024;
                implementation = action_profile(128);
                my_prop = 7;
                const entries = {
                    (1, 0x10 &&& 0xf0) : a(h.x, 3);
                    priority = 10 : (_, default) : NoAction() @name("e");
                    (2 .. 3, _) : a(h.x, 9);
                }
            }
            apply { t.apply(); }
        }
        """
    )
    action, table = c.locals
    props = {p.name: p for p in table.properties}
    assert [e.match_kind.name for e in props["key"].elements] == ["exact", "ternary"]
    assert props["key"].elements[0].annotations[0].args[0].value == "f"
    assert props["actions"].actions[1].annotations[0].name == "defaultonly"
    assert props["default_action"].is_const
    assert isinstance(props["size"], ast.ValueProperty) and props["size"].value.value == 1024
    assert isinstance(props["implementation"].value, ast.MethodCallExpression)
    assert props["my_prop"].value.value == 7
    entries = props["entries"].entries
    assert props["entries"].is_const and all(e.is_const for e in entries)
    assert entries[1].priority.value == 10 and entries[1].annotations[0].name == "name"
    assert isinstance(entries[0].keyset[1], ast.MaskExpression)
    assert isinstance(entries[2].keyset[0], ast.RangeExpression)


def test_table_with_the_empty_parameter_list_of_early_p4_16():
    (c,) = prog("control Ing(inout hs h) { table t() { actions = { NoAction; } } apply { t.apply(); } }")
    (table,) = c.locals
    assert table.name == "t" and [p.name for p in table.properties] == ["actions"]


def test_non_const_entries_and_table_annotations():
    (c,) = prog(
        """
        control X(inout hs h) {
            @name("T1") table t {
                key = { h.f : lpm; }
                actions = { NoAction; }
                entries = { const 0x0a000000 &&& 0xff000000 : NoAction(); 1 : NoAction(); }
            }
            apply { }
        }
        """
    )
    (table,) = c.locals
    entries = table.property("entries")
    assert not entries.is_const and [e.is_const for e in entries.entries] == [True, False]
    assert table.annotations[0].args[0].value == "T1"


def test_functions_actions_instantiations():
    decls = prog(
        """
        bit<8> max(in bit<8> a, in bit<8> b) { return a > b ? a : b; }
        T id<T>(in T x) { return x; }
        action top() {}
        Pkg(P(), C()) main;
        register<bit<32>>(1024) r;
        """
    )
    assert [type(d).__name__ for d in decls] == [
        "FunctionDeclaration", "FunctionDeclaration", "ActionDeclaration", "Instantiation", "Instantiation",
    ]  # fmt: skip
    assert decls[1].type_params[0].name == "T"
    assert isinstance(decls[4].type_node, ast.SpecializedTypeNode)


def test_instantiation_with_initializer_block():
    (inst,) = prog("E(1) e = { void cb(inout bit<8> x) { x = 1; } };")
    assert isinstance(inst.initializer[0], ast.FunctionDeclaration)


# ---------------------------------------------------------------- statements


def test_statements():
    block = stmt(
        """{
            bit<8> x = 1;
            const bit<8> y = 2;
            h_t[2] st;
            x = y;
            x += 1;
            x >>= 2;
            x |+|= 3;
            f(x);
            if (x == 1) { exit; } else if (x == 2) return; else ;
            switch (t.apply().action_run) {
                a:
                b: { }
                default: { }
            }
            for (bit<8> i = 0; i < 4; i = i + 1) { continue; }
            for (bit<8> i in 0 .. 3) { break; }
            for (h_t e in st) { }
            @atomic { }
        }"""
    )
    kinds = [type(c).__name__ for c in block.components]
    assert kinds == [
        "VariableDeclaration", "ConstantDeclaration", "VariableDeclaration", "AssignmentStatement",
        "AssignmentStatement", "AssignmentStatement", "AssignmentStatement", "MethodCallStatement",
        "IfStatement", "SwitchStatement", "ForStatement", "ForInStatement", "ForInStatement", "BlockStatement",
    ]  # fmt: skip
    assert [c.op for c in block.components[4:7]] == ["+", ">>", "|+|"]
    sw = block.components[9]
    assert [c.body is None for c in sw.cases] == [True, False, False]
    assert isinstance(sw.cases[2].label, ast.DefaultExpression)
    assert isinstance(block.components[11].collection, ast.RangeExpression)
    assert block.components[13].annotations[0].name == "atomic"


def test_declaration_versus_expression_statement():
    block = stmt("{ my_t v; my_t<bit<8>> w; a.b = c; g(h); my_ext(1) inst; }")
    assert [type(c).__name__ for c in block.components] == [
        "VariableDeclaration", "VariableDeclaration", "AssignmentStatement", "MethodCallStatement", "Instantiation",
    ]  # fmt: skip


# ---------------------------------------------------------------- annotations


def test_annotation_forms():
    (d,) = prog(
        """
        @hidden @name("n") @id(7) @my_anno(a + b, "x") @structured[1, "s"] @kv[k = 1, j = "v"]
        @pragma my_pragma 1 2 3
        const bit<8> c = 1;
        """
    )
    a = {x.name: x for x in d.annotations}
    assert a["hidden"].body == [] and a["name"].args[0].value == "n"
    assert a["id"].args[0].value == 7
    assert [t.text for t in a["my_anno"].body] == ["a", "+", "b", ",", '"x"'] and a[
        "my_anno"
    ].args is None
    assert a["structured"].structured and [x.value for x in a["structured"].args] == [1, "s"]
    assert [(kv.key, kv.value.value) for kv in a["kv"].kv] == [("k", 1), ("j", "v")]
    assert [t.text for t in a["my_pragma"].body] == ["1", "2", "3"]


# ---------------------------------------------------------------- syntax errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("const bit<8> x = 1", "t.p4:1:19: error: syntax error: expected ';', found end of file"),
        ("header h { bit<8> }", "t.p4:1:19: error: syntax error: expected a field name, found '}'"),
        ("control c() { }", "t.p4:1:15: error: syntax error: control c has no apply block"),
        (
            "control c() { apply { x = ; } }",
            "t.p4:1:27: error: syntax error: expected an expression, found ';'",
        ),
        (
            "action a() { x + 1; }",
            "t.p4:1:19: error: syntax error: expected '=' or a method call, found ';'",
        ),
        (
            "parser p() { state s { transition 3; } }",
            "t.p4:1:35: error: syntax error: a transition goes to a state name or a select",
        ),
        ("table t { }", "t.p4:1:1: error: a table may only be declared inside a control or parser"),
        (
            "control c() { apply { } bit<8> x; }",
            "t.p4:1:25: error: syntax error: expected '}' ending the control (nothing may follow the apply block), found 'bit'",
        ),
        ("varbit x;", "t.p4:1:1: error: syntax error: varbit needs a maximum width: varbit<W>"),
        ("action a() { f(1; }", "t.p4:1:17: error: syntax error: expected ')' or ',', found ';'"),
        ("struct s {", "t.p4:1:11: error: syntax error: expected a type, found end of file"),
    ],
)
def test_syntax_errors_are_located(text, message):
    assert syntax_error(text) == message


def test_typedef_of_an_inline_declaration_declares_both():
    struct, alias = prog("typedef struct s_t { bit<8> f; } alias_t;")
    assert isinstance(struct, ast.StructDeclaration) and struct.name == "s_t"
    assert alias.name == "alias_t" and alias.type_node.name == "s_t"


def test_annotation_body_may_follow_whitespace():
    (d,) = prog('@name ("spaced") @id (4) const bit<8> c = 1;')
    assert [a.args[0].value for a in d.annotations] == ["spaced", 4]


def test_entry_annotations_may_lead_the_keyset():
    c = prog(
        """
        control Ing(inout hs h) {
            table t {
                key = { h.f : ternary; }
                actions = { NoAction; }
                entries = {
                    @priority(3) 0x10 &&& 0xf0 : NoAction();
                    const @name("late") 1 : NoAction() @hidden;
                }
            }
            apply { t.apply(); }
        }
        """
    )[0]
    first, second = c.locals[0].property("entries").entries
    assert [a.name for a in first.annotations] == ["priority"] and first.annotations[0].args[0].value == 3
    assert isinstance(first.keyset[0], ast.MaskExpression)
    assert second.is_const and [a.name for a in second.annotations] == ["name", "hidden"]
