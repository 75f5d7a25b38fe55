"""Preprocessing with cpp as p4c does, and positions mapped back to original files."""

from bufferlab.compiler import frontend
from bufferlab.compiler.preprocess import P4INCLUDE, preprocess, preprocessor_command


def test_command_line_mirrors_p4c(tmp_path):
    cmd = preprocessor_command(tmp_path / "x.p4", ["inc"], ["FOO=1"])
    assert cmd[1:6] == ["-C", "-undef", "-nostdinc", "-x", "assembler-with-cpp"]
    assert "-D__TARGET_BMV2__" in cmd and "-D__p4c__" in cmd and "-DFOO=1" in cmd
    assert cmd.index(f"-I{P4INCLUDE}") < cmd.index("-Iinc")


def test_target_and_version_macros_are_defined(tmp_path):
    src = tmp_path / "m.p4"
    src.write_text(
        "#if defined(__TARGET_BMV2__) && __p4c_major__ >= 1 && defined(__p4c_version__)\n"
        "const bit<8> ok = 1;\n#endif\n"
    )
    assert frontend.load(src).declaration("ok") is not None


def test_defines_and_include_dirs_pass_through(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "consts.p4").write_text("const bit<16> PORT = WIDTH;\n")
    src = tmp_path / "main.p4"
    src.write_text('#include "consts.p4"\n')
    program = frontend.load(src, include_dirs=[inc], defines=["WIDTH=99"])
    assert program.declaration("PORT").value.const_value == 99


def test_v1model_version_macro_and_constant(tmp_path):
    src = tmp_path / "v.p4"
    src.write_text("#include <v1model.p4>\nconst bit<32> v = __v1model_version;\n")
    program = frontend.load(src)
    assert program.declaration("v").value.const_value == 20180101
    assert program.declaration("register").p4type.type_params == ("T",)
    src.write_text(
        "#define V1MODEL_VERSION 20200408\n#include <v1model.p4>\nconst PortId_t p = 3;\n"
    )
    program = frontend.load(src)
    assert program.declaration("__v1model_version").value.const_value == 20200408
    assert program.declaration("register").p4type.type_params == ("T", "I")
    assert program.declaration("p").p4type.width == 9


def _first_error(src):
    from bufferlab.compiler.diagnostics import CompileError

    try:
        frontend.load(src)
    except CompileError as err:
        return str(err).splitlines()[0]
    return ""


def test_positions_in_included_file_name_that_file(tmp_path):
    (tmp_path / "defs.p4").write_text("\n\nconst bit<8> BAD = nope;\n")
    src = tmp_path / "main.p4"
    src.write_text('#include "defs.p4"\n')
    assert (
        _first_error(src)
        == f"{tmp_path}/defs.p4:3:20: error: unknown name 'nope'"
    )


def test_cpp_error_is_located(tmp_path):
    src = tmp_path / "main.p4"
    src.write_text('\n#include "missing.p4"\n')
    line = _first_error(src)
    assert line.startswith(f"{src}:2:") and "missing.p4" in line


def test_missing_input_file(tmp_path):
    assert _first_error(tmp_path / "nope.p4").endswith("nope.p4: no such file")


def test_preprocessed_text_carries_line_markers(tmp_path):
    src = tmp_path / "a.p4"
    src.write_text("#define N 4\nconst bit<8> x = N;\n")
    text = preprocess(src)
    assert f'"{src}"' in text and "const bit<8> x = 4;" in text


def test_bytes_that_are_not_utf8_are_a_located_error(tmp_path):
    src = tmp_path / "latin1.p4"
    src.write_bytes(b"const bit<8> x = 1; // caf\xe9\nconst bit<8> y = \xff;\n")
    assert _first_error(src) == f"{src}:2:18: error: unexpected character '\ufffd'"
