"""Lexer: literals, keywords, punctuation and line markers."""

import pytest

from bufferlab.compiler.diagnostics import CompileError
from bufferlab.compiler.lexer import IntValue, tokenize


def kinds(text):
    return [t.kind for t in tokenize(text, "f.p4")[:-1]]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", IntValue(42, None, False)),
        ("8w5", IntValue(5, 8, False)),
        ("4s3", IntValue(3, 4, True)),
        ("0xFF", IntValue(255, None, False)),
        ("16w0x0800", IntValue(0x800, 16, False)),
        ("0b1010", IntValue(10, None, False)),
        ("0o17", IntValue(15, None, False)),
        ("0d99", IntValue(99, None, False)),
        ("1_000_000", IntValue(1000000, None, False)),
        ("32w0xdead_beef", IntValue(0xDEADBEEF, 32, False)),
    ],
)
def test_integer_literals(text, value):
    (tok,) = tokenize(text, "f.p4")[:-1]
    assert tok.kind == "INT" and tok.value == value


def test_malformed_integer_is_located():
    with pytest.raises(CompileError) as info:
        tokenize("x = 0x;", "f.p4")
    assert str(info.value).startswith("f.p4:1:5: error: malformed integer literal")


def test_operators_take_longest_match_and_keep_single_angle_brackets():
    assert kinds("a &&& b |+| c |-| d ++ e .. f >> g >= h") == [
        "IDENT", "&&&", "IDENT", "|+|", "IDENT", "|-|", "IDENT", "++", "IDENT", "..", "IDENT",
        ">", ">", "IDENT", ">=", "IDENT",
    ]  # fmt: skip


def test_soft_keywords_are_identifiers_hard_keywords_are_not():
    assert kinds("key actions state apply priority table control") == [
        "IDENT", "IDENT", "IDENT", "IDENT", "IDENT", "table", "control",
    ]  # fmt: skip


def test_dontcare_and_underscore_names():
    assert kinds("_ _x x_") == ["_", "IDENT", "IDENT"]


def test_string_literal_unescaped():
    (tok,) = tokenize('"a\\"b\\n"', "f.p4")[:-1]
    assert tok.kind == "STRING" and tok.value == 'a"b\n'


def test_comments_are_skipped_and_lines_counted():
    toks = tokenize("/* one\n two */ a // three\nb", "f.p4")
    assert [(t.text, t.pos.line, t.pos.column) for t in toks[:-1]] == [("a", 2, 9), ("b", 3, 1)]


def test_line_markers_move_positions_to_the_original_file():
    text = '# 1 "main.p4"\na\n# 7 "inc/h.p4" 1\n  b\n# 3 "main.p4" 2\nc\n'
    toks = tokenize(text, "pre.i")[:-1]
    assert [(t.text, t.pos.file, t.pos.line, t.pos.column) for t in toks] == [
        ("a", "main.p4", 1, 1),
        ("b", "inc/h.p4", 7, 3),
        ("c", "main.p4", 3, 1),
    ]


def test_unknown_character_is_located():
    with pytest.raises(CompileError) as info:
        tokenize("a = $b;", "f.p4")
    assert str(info.value).splitlines()[0] == "f.p4:1:5: error: unexpected character '$'"


def test_unterminated_string_and_comment():
    with pytest.raises(CompileError, match="unterminated string"):
        tokenize('x = "abc', "f.p4")
    with pytest.raises(CompileError, match="unterminated comment"):
        tokenize("/* abc", "f.p4")


@pytest.mark.parametrize("char", ["\u00e9", "\u0663", "\u00b2"])
def test_non_ascii_letters_and_digits_are_rejected_not_crashed_on(char):
    with pytest.raises(CompileError) as info:
        tokenize(f"const bit<8> {char}x = 1;", "u.p4")
    assert str(info.value).splitlines()[0] == f"u.p4:1:14: error: unexpected character {char!r}"
