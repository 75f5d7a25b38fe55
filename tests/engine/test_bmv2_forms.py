"""The engine's loader refuses every operand encoding real BMv2 refuses (issue 30, item 4).

simple_switch's loader (behavioral-model `src/bm_sim/P4Objects.cpp`) takes each operand
only in the encodings it dispatches on; the engine refuses the others with BMv2's own
message, so a compiler writing a form BMv2 would not load fails here too. Each case
damages one operand of a compiled program and names the message BMv2 gives for it; the
forms BMv2 takes still load.
"""

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine, LoadError

PROGRAM = Path(__file__).parents[1] / "p4" / "bmv2_encodings.p4"


@pytest.fixture(scope="module")
def document() -> dict:
    """The compiled program every case starts from (it loads as compiled)."""
    doc, _ = compile_p4(PROGRAM)
    Engine(json.dumps(doc))
    return doc


def parser_op(doc: dict, op: str, nth: int = 0) -> dict:
    """The `nth` parser op named `op` in the document's parser."""
    ops = [o for s in doc["parsers"][0]["parse_states"] for o in s["parser_ops"] if o["op"] == op]
    return ops[nth]


def set_with_source(doc: dict, kind: str) -> dict:
    """The first parser `set` whose source has encoding `kind`."""
    ops = [o for s in doc["parsers"][0]["parse_states"] for o in s["parser_ops"]
           if o["op"] == "set" and o["parameters"][1]["type"] == kind]
    return ops[0]


def first_action_with_primitives(doc: dict) -> dict:
    """The first action that has a primitive."""
    return next(a for a in doc["actions"] if a["primitives"])


def field(header: str, name: str) -> dict:
    """A `field` operand."""
    return {"type": "field", "value": [header, name]}


def op_node(op: str, left: dict | None, right: dict | None) -> dict:
    """An operator node (the value of an `expression` operand)."""
    return {"op": op, "left": left, "right": right}


LEN_BYTES = field("len", "bytes")
SUM = field("scalars", "userMetadata.sum")


def extract_vl_length(kind: str) -> Callable[[dict], None]:
    """`extract_VL`'s length given directly as a `kind` operand."""
    def damage(doc: dict) -> None:
        length = {"hexstr": {"type": "hexstr", "value": "0x10"}, "field": LEN_BYTES}[kind]
        parser_op(doc, "extract_VL")["parameters"][1] = length
    return damage


def set_stack_field_destination(doc: dict) -> None:
    parser_op(doc, "set")["parameters"][0] = {"type": "stack_field", "value": ["tags", "v"]}


def set_stack_field_source(doc: dict) -> None:
    parser_op(doc, "set")["parameters"][1] = {"type": "stack_field", "value": ["tags", "v"]}


def set_bare_operator_source(doc: dict) -> None:
    # An `expression` whose value is the operator node itself, not a typed operand.
    parser_op(doc, "set")["parameters"][1] = {
        "type": "expression", "value": op_node("+", LEN_BYTES, {"type": "hexstr", "value": "0x01"})}


def set_runtime_data_source(doc: dict) -> None:
    parser_op(doc, "set")["parameters"][1] = {"type": "runtime_data", "value": 0}


def extract_vl_one_parameter(doc: dict) -> None:
    del parser_op(doc, "extract_VL")["parameters"][1]


def extract_header_target(doc: dict) -> None:
    parser_op(doc, "extract")["parameters"][0]["type"] = "header"


def advance_by_lookahead(doc: dict) -> None:
    parser_op(doc, "advance")["parameters"][0] = {"type": "lookahead", "value": [0, 8]}


def advance_two_parameters(doc: dict) -> None:
    op = parser_op(doc, "advance")
    op["parameters"].append({"type": "hexstr", "value": "0x08"})


def unknown_parser_op(doc: dict) -> None:
    parser_op(doc, "verify")["op"] = "jump"


def transition_key_expression(doc: dict) -> None:
    state = doc["parsers"][0]["parse_states"][0]
    state["transition_key"] = [{"type": "expression", "value": op_node("&", LEN_BYTES, LEN_BYTES)}]


def verify_lookahead_operand(doc: dict) -> None:
    cond = parser_op(doc, "verify")["parameters"][0]
    cond["value"]["left"] = {"type": "lookahead", "value": [0, 8]}


def verify_bare_operator(doc: dict) -> None:
    op = parser_op(doc, "verify")
    op["parameters"][0] = op["parameters"][0]["value"]


def verify_twice_wrapped_operand(doc: dict) -> None:
    cond = parser_op(doc, "verify")["parameters"][0]
    cond["value"] = {"type": "expression", "value": cond["value"]}


def action_expression_runtime_data(doc: dict) -> None:
    prim = first_action_with_primitives(doc)["primitives"][0]
    prim["parameters"][1] = {"type": "expression", "value": {
        "type": "expression", "value": op_node("+", {"type": "runtime_data", "value": 0}, SUM)}}


def action_expression_union_stack_field(doc: dict) -> None:
    prim = first_action_with_primitives(doc)["primitives"][0]
    prim["parameters"][1] = {"type": "expression", "value": {
        "type": "union_stack_field", "value": ["u", "a", "f"]}}


def primitive_local_parameter(doc: dict) -> None:
    first_action_with_primitives(doc)["primitives"][0]["parameters"][1] = {"type": "local", "value": 0}


def primitive_bool_parameter(doc: dict) -> None:
    first_action_with_primitives(doc)["primitives"][0]["parameters"][1] = {"type": "bool", "value": True}


def primitive_runtime_data_out_of_range(doc: dict) -> None:
    action = first_action_with_primitives(doc)
    action["runtime_data"] = []
    action["primitives"][0]["parameters"][1] = {"type": "runtime_data", "value": 0}


def unknown_primitive(doc: dict) -> None:
    first_action_with_primitives(doc)["primitives"][0]["op"] = "assign_field"


def primitive_with_a_parameter_too_many(doc: dict) -> None:
    first_action_with_primitives(doc)["primitives"][0]["parameters"].append({"type": "hexstr", "value": "0x1"})


def parser_primitive_lookahead_parameter(doc: dict) -> None:
    prim = parser_op(doc, "primitive")["parameters"][0]
    prim["parameters"][1] = {"type": "lookahead", "value": [0, 8]}


def calculation_expression_input(doc: dict) -> None:
    doc["calculations"].append({"name": "calc_x", "id": 99, "algo": "crc16", "input": [
        {"type": "expression", "value": {"type": "expression", "value": op_node("^", SUM, SUM)}}]})


def field_list_expression_element(doc: dict) -> None:
    doc["field_lists"].append({"name": "fl", "id": 99, "elements": [
        {"type": "expression", "value": {"type": "expression", "value": op_node("^", SUM, SUM)}}]})


def conditional_untyped_operand(doc: dict) -> None:
    pipeline = doc["pipelines"][0]
    pipeline["conditionals"].append({
        "name": "node_x", "id": 99, "true_next": None, "false_next": None,
        "expression": {"type": "expression", "value": op_node("==", {"value": ["len", "bytes"]}, SUM)}})


def checksum_condition_register_array(doc: dict) -> None:
    doc["checksums"].append({"name": "ck", "id": 99, "target": ["len", "skip"], "type": "generic",
                             "calculation": "calc_x", "verify": True, "update": False,
                             "if_cond": {"type": "register_array", "value": "r"}})


def deparser_primitive_lookahead(doc: dict) -> None:
    doc["deparsers"][0]["primitives"] = [
        {"op": "assign", "parameters": [SUM, {"type": "lookahead", "value": [0, 8]}]}]


def user_extern_instance(doc: dict) -> None:
    # What p4c-bm2-ss --emit-externs writes for a user-declared extern; simple_switch
    # registers no extern type.
    doc["extern_instances"] = [{"name": "I.tally", "id": 0, "type": "Tally", "attribute_values": []}]


def user_extern_function_primitive(doc: dict) -> None:
    first_action_with_primitives(doc)["primitives"][0] = {
        "op": "trace_value", "parameters": [SUM]}


# Each damage and the message BMv2's loader gives for it (the engine adds where it is).
REFUSALS = [
    (extract_vl_length("hexstr"),
     "Parser 'extract_VL' operation has invalid length type 'hexstr', expected 'expression'"),
    (extract_vl_length("field"),
     "Parser 'extract_VL' operation has invalid length type 'field', expected 'expression'"),
    (extract_vl_one_parameter, "Expected 'parameters' to be a JSON array of size 2 but array has size 1"),
    (extract_header_target, "Extract type 'header' not supported"),
    (set_stack_field_destination,
     "Parser 'set' operation has invalid destination type 'stack_field', expected 'field'"),
    (set_stack_field_source, "Parser 'set' operation has unsupported source type 'stack_field'"),
    (set_runtime_data_source, "Parser 'set' operation has unsupported source type 'runtime_data'"),
    (set_bare_operator_source, "Invalid 'type' in expression: ''"),
    (advance_by_lookahead, "Parser 'advance' operation has unsupported parameter type 'lookahead'"),
    (advance_two_parameters, "Parser 'advance' operation has invalid number of arguments, expected 1"),
    (unknown_parser_op, "Parser op 'jump'not supported"),
    (transition_key_expression, "Invalid entry in parse state key"),
    (verify_lookahead_operand, "Invalid 'type' in expression: 'lookahead'"),
    (verify_bare_operator, "Invalid 'type' in expression: ''"),
    (verify_twice_wrapped_operand, "an 'expression' whose value has no 'op'"),
    (action_expression_runtime_data, "Invalid 'type' in expression: 'runtime_data'"),
    (action_expression_union_stack_field, "Invalid 'type' in expression: 'union_stack_field'"),
    (unknown_primitive, "Unknown primitive action: assign_field"),
    (primitive_with_a_parameter_too_many,
     "Invalid number of parameters for primitive action assign: expected 2 but got 3"),
    (primitive_local_parameter, "Parameter type 'local' not supported"),
    (primitive_bool_parameter, "Parameter type 'bool' not supported"),
    (primitive_runtime_data_out_of_range,
     "trying to use parameter at offset 0 but action only has 0 parameter(s)"),
    (parser_primitive_lookahead_parameter, "Parameter type 'lookahead' not supported"),
    (calculation_expression_input, "Unsupported input type 'expression' for calculation 'calc_x'"),
    (field_list_expression_element, "Invalid entry type 'expression' in field list"),
    (conditional_untyped_operand, "Invalid 'type' in expression: ''"),
    (checksum_condition_register_array, "Invalid 'type' in expression: 'register_array'"),
    (deparser_primitive_lookahead, "Parameter type 'lookahead' not supported"),
    (user_extern_instance, "Invalid reference to extern type 'Tally'"),
    (user_extern_function_primitive, "Unknown primitive action: trace_value"),
]


@pytest.mark.parametrize(("damage", "message"), REFUSALS, ids=[d.__name__ for d, _ in REFUSALS])
def test_refuses_what_bmv2_refuses(document, damage, message):
    doc = copy.deepcopy(document)
    damage(doc)
    with pytest.raises(LoadError) as refused:
        Engine(json.dumps(doc))
    assert message in str(refused.value)


def extract_vl_length_of_a_field(doc: dict) -> None:
    parser_op(doc, "extract_VL")["parameters"][1] = {"type": "expression", "value": LEN_BYTES}


def set_from_lookahead(doc: dict) -> None:
    parser_op(doc, "set")["parameters"][1] = {"type": "lookahead", "value": [0, 8]}


def set_from_wrapped_stack_field(doc: dict) -> None:
    parser_op(doc, "set")["parameters"][1] = {
        "type": "expression", "value": {"type": "stack_field", "value": ["tags", "v"]}}


def advance_by_constant(doc: dict) -> None:
    parser_op(doc, "advance")["parameters"][0] = {"type": "hexstr", "value": "0x00000008"}


def unary_operator_without_left(doc: dict) -> None:
    cond = parser_op(doc, "verify")["parameters"][0]
    parser_op(doc, "verify")["parameters"][0] = {"type": "expression", "value": op_node("not", None, cond)}


ACCEPTED = [extract_vl_length_of_a_field, set_from_lookahead, set_from_wrapped_stack_field,
            advance_by_constant, unary_operator_without_left]


@pytest.mark.parametrize("change", ACCEPTED, ids=[c.__name__ for c in ACCEPTED])
def test_loads_the_forms_bmv2_takes(document, change):
    doc = copy.deepcopy(document)
    change(doc)
    Engine(json.dumps(doc))


def test_the_compiler_writes_the_forms_bmv2_takes(document):
    """The encodings the compiled program uses for the cases above are the strict ones."""
    vl = parser_op(document, "extract_VL")["parameters"][1]
    assert vl["type"] == "expression" and vl["value"]["type"] == "expression"
    assert set_with_source(document, "expression")["parameters"][1]["value"]["type"] in (
        "expression", "stack_field")
    assert not any(
        o["op"] == "set" and o["parameters"][0]["type"] != "field"
        for s in document["parsers"][0]["parse_states"] for o in s["parser_ops"])
    advance = parser_op(document, "advance")["parameters"][0]
    assert advance["type"] == "expression" and "type" in advance["value"]


def test_a_default_case_is_taken_only_when_no_other_case_matches():
    """BMv2 tries a state's value cases in order and falls back on its default (the last
    one given) wherever the default stands: a `default` listed first does not hide the
    cases after it, unlike P4's own order (the compiler never writes one there)."""
    doc, _ = compile_p4(PROGRAM.parent / "empty_select.p4")
    state = next(s for s in doc["parsers"][0]["parse_states"] if s["name"] == "take_first")
    state["transition_key"] = [{"type": "field", "value": ["first", "a"]}]
    state["transitions"] = [
        {"type": "default", "value": None, "mask": None, "next_state": "take_first"},
        {"type": "default", "value": None, "mask": None, "next_state": None},
        {"type": "hexstr", "value": "0x01", "mask": None, "next_state": "take_second"},
    ]
    engine = Engine(json.dumps(doc))
    engine.send(0, bytes([1, 2, 3]), 0)
    engine.send(0, bytes([7, 2, 3]), 1)
    engine.drain()
    # 0x01 matches its case: second is extracted and incremented. 0x07 matches none: the
    # last default (accept), not the first (a loop back to take_first).
    assert [f for _, f, _ in engine.received()] == [bytes([1, 3, 3]), bytes([7, 2, 3])]
