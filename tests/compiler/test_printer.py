"""compiler/printer.py: every program prints back to source that parses to the same tree."""

import dataclasses
from pathlib import Path

import pytest

from bufferlab.compiler import ast
from bufferlab.compiler.frontend import select_architecture
from bufferlab.compiler.lexer import Token, tokenize
from bufferlab.compiler.parse import parse
from bufferlab.compiler.printer import print_expression, print_program

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted([*(ROOT / "tests" / "p4").glob("*.p4"), *(ROOT / "tests" / "p4" / "tna").glob("*.p4"),
                   *(ROOT / "p4src").glob("*.p4")])


def differences(a, b, path="program"):
    """Where two trees differ, ignoring positions (and tokens' offsets); [] when alike."""
    if isinstance(a, Token):
        return [] if (a.kind, a.text) == (b.kind, b.text) else [f"{path}: {a.text!r} vs {b.text!r}"]
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
        out = []
        for f in dataclasses.fields(a):
            if f.name != "pos" and f.compare:
                out += differences(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} elements"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def parsed(path):
    text, _, _ = select_architecture(path, [path.parent], [], None, None)
    return parse(tokenize(text, str(path)))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_program_round_trips(path, tmp_path):
    # The whole preprocessed program: core.p4, v1model.p4 / tna.p4 and local includes too.
    program = parsed(path)
    out = tmp_path / "printed.p4"
    text = print_program(program, str(path), str(out))
    again = parse(tokenize(text, str(out)))
    assert differences(program, again) == []


def test_included_declarations_keep_their_files(tmp_path):
    path = ROOT / "tests" / "p4" / "basic_l2_forward.p4"
    out = tmp_path / "printed.p4"
    out.write_text(print_program(parsed(path), str(path), str(out)))
    again = parsed(out)
    files = {Path(d.pos.file).name for d in again.declarations}
    assert {"core.p4", "v1model.p4", "printed.p4"} <= files
    own = [d for d in again.declarations if d.pos.file == str(out)]
    # The program's own declarations are the printed file's own lines.
    assert own and all(out.read_text().splitlines()[d.pos.line - 1].strip() for d in own)


def expression(text):
    program = parse(tokenize(f"const bit<8> c = {text};", "e.p4"))
    return program.declarations[0].value


@pytest.mark.parametrize("text,printed", [
    ("(a + b) * c", "(a + b) * c"),
    ("a + (b * c)", "a + b * c"),
    ("a - (b - c)", "a - (b - c)"),
    ("(a - b) - c", "a - b - c"),
    # p4c's grammar: comparisons bind looser than bitwise operators.
    ("(a & b) == c", "a & b == c"),
    ("a & (b == c)", "a & (b == c)"),
    ("(bit<8>) (a + b)", "(bit<8>) (a + b)"),
    ("-(-a)", "- -a"),
    ("a ? b : (c ? d : e)", "a ? b : c ? d : e"),
    ("(a ? b : c) ? d : e", "(a ? b : c) ? d : e"),
    ("h.s[i + 1].f[7:4]", "h.s[i + 1].f[7:4]"),
    ("8w0x0F ++ 4s3", "8w0x0F ++ 4s3"),
    ('f<bit<8>>(x, y = "a\\"b")', 'f<bit<8>>(x, y = "a\\"b")'),
    ("{a = 1, b = {#}}", "{a = 1, b = {#}}"),
])
def test_expressions_print_with_the_parentheses_they_need(text, printed):
    e = expression(text)
    assert print_expression(e) == printed
    assert differences(e, expression(printed)) == []


def if_(cond, then, otherwise=None):
    return ast.IfStatement(pos=None, cond=ast.PathExpression(pos=None, name=cond), then=then, otherwise=otherwise)


@pytest.mark.parametrize("inner", [
    if_("b", ast.ExitStatement(pos=None)),
    # An else-if chain without a final else is open at its end.
    if_("b", ast.ExitStatement(pos=None), if_("c", ast.ExitStatement(pos=None))),
], ids=["if", "else-if chain"])
def test_dangling_else_is_braced(inner):
    outer = if_("a", inner, ast.ReturnStatement(pos=None))
    action = ast.ActionDeclaration(pos=None, name="x", body=ast.BlockStatement(pos=None, components=[outer]))
    text = print_program(ast.Program(pos=None, declarations=[action]))
    reparsed = parse(tokenize(text, "d.p4")).declarations[0].body.components[0]
    # The `else` still belongs to the outer `if`.
    assert isinstance(reparsed.otherwise, ast.ReturnStatement)
    assert differences(reparsed.then.components[0], inner) == []
