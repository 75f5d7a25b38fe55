"""Helpers for the front-end tests: compile P4 text from a temporary file."""

import pytest

from bufferlab.compiler import frontend
from bufferlab.compiler.diagnostics import CompileError

# Five lines every control-level test starts from, so errors in the text that
# follows are on line 6 and later.
PRELUDE = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<32> c; }
struct hs { h_t h; h_t[4] st; }
struct ms { bit<8> x; bit<16> y; bool f; int<8> s; }
"""


@pytest.fixture
def prelude():
    """The shared five-line prelude (headers `hs`, metadata `ms`)."""
    return PRELUDE


@pytest.fixture
def compile_p4(tmp_path):
    """Compile P4 text; returns the CheckedProgram."""

    def run(text, name="prog.p4", **kwargs):
        path = tmp_path / name
        path.write_text(text)
        return frontend.load(path, **kwargs)

    return run


@pytest.fixture
def p4_error(tmp_path):
    """Compile P4 text that must fail; returns the first diagnostic line with the temp dir removed."""

    def run(text, name="prog.p4", **kwargs):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(CompileError) as info:
            frontend.load(path, **kwargs)
        return str(info.value).splitlines()[0].replace(f"{tmp_path}/", "")

    return run


@pytest.fixture
def control(compile_p4, prelude):
    """Compile a control `C` whose text (locals + apply) starts on line 7; returns the declaration."""

    def run(body):
        program = compile_p4(
            prelude
            + "control C(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {\n"
            + body
            + "\n}\n"
        )
        return program.declaration("C")

    return run


@pytest.fixture
def control_error(p4_error, prelude):
    """Like `control`, for a body that must fail; returns the first diagnostic line."""

    def run(body):
        return p4_error(
            prelude
            + "control C(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {\n"
            + body
            + "\n}\n"
        )

    return run


def _load_tna_programs():
    """tna_programs.py beside this file (test modules are imported by path, not as a package)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("tna_programs", Path(__file__).with_name("tna_programs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tna():
    """Helpers building TNA test programs (`tna.tna_program(...)`, `tna.line_of`, `tna.TNA_DIR`)."""
    return _load_tna_programs()
