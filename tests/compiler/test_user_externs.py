"""User-declared extern objects and functions: compiled as p4c-bm2-ss compiles them with
`--emit-externs`, refused without it (as p4c), and refused at load by the switch, as
simple_switch refuses an extern type it does not know."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler import compile_program
from bufferlab.compiler.cli import run
from bufferlab.compiler.diagnostics import CompileError
from bufferlab.switch import Engine, LoadError

PROGRAM = Path(__file__).parent / "programs" / "user_externs.p4"


@pytest.fixture(scope="module")
def document() -> dict:
    """The program compiled with --emit-externs."""
    return compile_program(PROGRAM, emit_externs=True).json


def primitives(doc: dict) -> list[dict]:
    """Every primitive of every action."""
    return [p for a in doc["actions"] for p in a["primitives"]]


def function_only_program(tmp_path: Path) -> Path:
    """The program without the extern object: only the extern function is left."""
    source = PROGRAM.read_text().replace('    Tally(16w1024, "ingress tally") tally;\n', "").replace(
        "        tally.add(hdr.h.a, hdr.h.b + 1);\n        tally.fill(meta.m);\n", "")
    path = tmp_path / "fn_only.p4"
    path.write_text(source)
    return path


def test_instance_is_an_extern_instances_entry_with_its_constructor_arguments(document):
    assert document["extern_instances"] == [{
        "name": "I.tally", "id": 0, "type": "Tally",
        "attribute_values": [
            {"name": "size", "type": "hexstr", "value": "0x400"},
            {"name": "label", "type": "string", "value": "ingress tally"},
        ],
    }]


def test_method_calls_are_type_method_primitives_naming_the_instance(document):
    by_op = {p["op"]: p["parameters"] for p in primitives(document)}
    add = by_op["_Tally_add"]
    assert add[0] == {"type": "extern", "value": "I.tally"}
    assert add[1] == {"type": "field", "value": ["h", "a"]}
    # A computed argument is an expression, as for any primitive.
    assert add[2]["type"] == "expression"
    assert add[2]["value"]["value"]["op"] == "&"
    assert by_op["_Tally_fill"] == [{"type": "extern", "value": "I.tally"},
                                    {"type": "field", "value": ["scalars", "userMetadata.m"]}]


def test_extern_function_call_is_a_primitive_named_after_it(document):
    by_op = {p["op"]: p["parameters"] for p in primitives(document)}
    assert by_op["trace_value"] == [{"type": "field", "value": ["h", "b"]}]


def test_without_emit_externs_the_instance_is_refused_where_it_is_declared():
    with pytest.raises(CompileError) as refused:
        compile_program(PROGRAM)
    message = str(refused.value)
    assert "user_externs.p4:21:5: error: unknown extern instance Tally" in message
    assert "--emit-externs" in message


def test_without_emit_externs_an_extern_function_is_refused(tmp_path):
    path = function_only_program(tmp_path)
    with pytest.raises(CompileError) as refused:
        compile_program(path)
    assert "unknown extern function trace_value" in str(refused.value)
    assert compile_program(path, emit_externs=True).json["extern_instances"] == []


def test_cli_takes_emit_externs(tmp_path, capsys):
    out = tmp_path / "x.json"
    assert run([str(PROGRAM), "-o", str(out)]) == 1
    assert "unknown extern instance Tally" in capsys.readouterr().err
    assert run([str(PROGRAM), "--emit-externs", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["extern_instances"][0]["type"] == "Tally"


def test_switch_refuses_the_extern_type_as_simple_switch_does(document):
    with pytest.raises(LoadError) as refused:
        Engine(json.dumps(document))
    assert "Invalid reference to extern type 'Tally'" in str(refused.value)


def test_switch_refuses_an_unknown_extern_function_primitive(tmp_path):
    path = function_only_program(tmp_path)
    doc = compile_program(path, emit_externs=True).json
    with pytest.raises(LoadError) as refused:
        Engine(json.dumps(doc))
    assert "Unknown primitive action: trace_value" in str(refused.value)


def test_a_constructor_argument_that_is_not_a_constant_is_refused(tmp_path):
    source = PROGRAM.read_text().replace('extern Tally {\n    Tally(bit<16> size, string label);',
                                         'extern Tally {\n    Tally(bit<16> size, bool label);').replace(
        'Tally(16w1024, "ingress tally") tally;', "Tally(16w1024, true) tally;")
    path = tmp_path / "bool_arg.p4"
    path.write_text(source)
    with pytest.raises(CompileError) as refused:
        compile_program(path, emit_externs=True)
    assert "constructor argument label must be an integer constant or a string" in str(refused.value)
