"""Computed values in checksum data: concatenations and zero extensions stay fields and
constants of the calculation; other computed data of update_checksum is a temporary the
egress pipeline computes (tests/stf/checksum_computed_data.stf runs it); computed data of
verify_checksum is refused with the reason."""

from pathlib import Path

import pytest

from bufferlab.compiler import compile_program
from bufferlab.compiler.diagnostics import CompileError

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "p4" / "checksum_computed_data.p4"


def test_concatenation_and_zero_extension_are_fields_and_constants():
    doc = compile_program(PROGRAM).json
    (calc,) = doc["calculations"]
    assert calc["input"][:4] == [
        {"type": "field", "value": ["h", "lo"]},
        {"type": "field", "value": ["h", "hi"]},
        {"type": "hexstr", "value": "0x0000", "bitwidth": 16},
        {"type": "field", "value": ["h", "proto"]},
    ]
    # `len - 4` and `len[15:8]` are temporaries, then the 8 zero bits of `++ 8w0`.
    assert [i["value"][0] for i in calc["input"][4:6]] == ["scalars", "scalars"]
    assert calc["input"][6] == {"type": "hexstr", "value": "0x00", "bitwidth": 8}


def test_egress_computes_the_temporaries_last_and_before_exit():
    doc = compile_program(PROGRAM).json
    temporaries = {i["value"][1] for i in doc["calculations"][0]["input"][4:6]}
    egress = doc["pipelines"][1]
    actions = {a["name"]: a for a in doc["actions"]}

    def written(action: dict) -> set[str]:
        return {p["parameters"][0]["value"][1] for p in action["primitives"]
                if p["op"] == "assign" and p["parameters"][0]["value"][0] == "scalars"}

    last = next(t for t in egress["tables"] if t["base_default_next"] is None
                and all(n is None for n in t["next_tables"].values()))
    assert written(actions[last["actions"][0]]) == temporaries
    exiting = [a for a in doc["actions"] if any(p["op"] == "exit" for p in a["primitives"])]
    assert exiting
    for action in exiting:
        ops = [p["op"] for p in action["primitives"]]
        assert written(action) == temporaries
        assert ops.index("exit") > max(i for i, p in enumerate(action["primitives"])
                                       if p["op"] == "assign" and p["parameters"][0]["value"][0] == "scalars")


def test_computed_verify_checksum_data_is_refused_with_the_reason(tmp_path):
    source = PROGRAM.read_text().replace(
        "control VC(inout hs hdr, inout ms meta) { apply { } }",
        "control VC(inout hs hdr, inout ms meta) { apply {\n"
        "    verify_checksum(true, { hdr.h.len + 1 }, hdr.h.csum, HashAlgorithm.csum16); } }")
    path = tmp_path / "verify.p4"
    path.write_text(source)
    with pytest.raises(CompileError) as refused:
        compile_program(path)
    message = str(refused.value)
    assert "verify.p4:16:" in message
    assert "computed data in verify_checksum is not supported" in message


def test_verify_checksum_takes_concatenations_and_zero_extensions(tmp_path):
    source = PROGRAM.read_text().replace(
        "control VC(inout hs hdr, inout ms meta) { apply { } }",
        "control VC(inout hs hdr, inout ms meta) { apply {\n"
        "    verify_checksum(true, { hdr.h.lo ++ hdr.h.hi, (bit<24>)hdr.h.proto }, hdr.h.csum,"
        " HashAlgorithm.csum16); } }")
    path = tmp_path / "verify_ok.p4"
    path.write_text(source)
    doc = compile_program(path).json
    verify = next(c for c in doc["checksums"] if c["verify"])
    calc = next(c for c in doc["calculations"] if c["name"] == verify["calculation"])
    assert [i["type"] for i in calc["input"]] == ["field", "field", "hexstr", "field"]


def test_a_call_in_update_checksum_data_is_refused(tmp_path):
    source = PROGRAM.read_text().replace(
        "control C(inout hs hdr, inout ms meta) {",
        "bit<16> twice(in bit<16> v) { return v + v; }\ncontrol C(inout hs hdr, inout ms meta) {").replace(
        "hdr.h.len - 4,", "twice(hdr.h.len),")
    path = tmp_path / "call.p4"
    path.write_text(source)
    with pytest.raises(CompileError) as refused:
        compile_program(path)
    assert "a call in the data of update_checksum" in str(refused.value)
