"""Diagnostics: p4c-style `file:line:col: error:` text with the source line and a caret."""

from bufferlab.compiler.diagnostics import CompileError, CompileWarning, SourcePos


def test_error_names_position_and_shows_caret_under_column(tmp_path):
    src = tmp_path / "a.p4"
    src.write_text("const bit<8> x = 1;\n    bogus y;\n")
    err = CompileError(SourcePos(str(src), 2, 5), "unknown type 'bogus'")
    assert str(err).splitlines() == [
        f"{src}:2:5: error: unknown type 'bogus'",
        "    bogus y;",
        "    ^",
    ]


def test_caret_keeps_tabs_so_it_lines_up(tmp_path):
    src = tmp_path / "t.p4"
    src.write_text("\tx = 1;\n")
    lines = CompileError(SourcePos(str(src), 1, 2), "m").format().splitlines()
    assert lines[2] == "\t^"


def test_warning_uses_warning_word(tmp_path):
    src = tmp_path / "w.p4"
    src.write_text("a\n")
    text = CompileWarning(SourcePos(str(src), 1, 1), "careful").format()
    assert text.splitlines()[0] == f"{src}:1:1: warning: careful"


def test_unreadable_file_gives_only_the_first_line():
    err = CompileError(SourcePos("<nowhere>", 3, 4), "boom")
    assert str(err) == "<nowhere>:3:4: error: boom"


def test_error_without_position():
    assert str(CompileError(None, "no input")) == "error: no input"
