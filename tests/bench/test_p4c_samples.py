"""bench/p4c_samples.py on a directory built from our own programs: a sample that passes,
one that does not compile, one whose STF fails, the figures agreeing; and a JSON the
switch's BMv2-strict loader refuses counted as not loaded (issue 30)."""

import importlib.util
import json
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
spec = importlib.util.spec_from_file_location("bench_p4c_samples", ROOT / "bench" / "p4c_samples.py")
p4c_samples = importlib.util.module_from_spec(spec)
sys.modules["bench_p4c_samples"] = p4c_samples
spec.loader.exec_module(p4c_samples)


def test_figures_for_passing_failing_and_refused_samples(tmp_path):
    for name in ("empty_select", "default_parameters"):
        shutil.copy(ROOT / "tests" / "p4" / f"{name}.p4", tmp_path / f"{name}.p4")
        shutil.copy(ROOT / "tests" / "stf" / f"{name}.stf", tmp_path / f"{name}.stf")
    # A flipped expected byte: compiles and loads, the STF run fails.
    stf = tmp_path / "default_parameters.stf"
    stf.write_text(stf.read_text().replace("expect 1 15 11", "expect 1 16 11"))
    (tmp_path / "broken.p4").write_text("control C( { }\n")
    (tmp_path / "broken.stf").write_text("packet 0 00\n")
    out = StringIO()
    with redirect_stdout(out):
        assert p4c_samples.main([str(tmp_path), "-j", "1"]) == 0
    lines = out.getvalue().splitlines()
    figures = json.loads(lines[-1])
    assert (figures["samples"], figures["compiled"], figures["loaded"], figures["stf_passed"]) == (3, 2, 2, 1)
    assert (figures["compile_pct"], figures["load_pct"], figures["stf_pass_pct"]) == (66.7, 66.7, 33.3)
    assert "load (BMv2-strict): 2/3 (66.7 %)" in lines


def test_a_json_refused_at_load_is_a_load_failure(tmp_path):
    doc_path = tmp_path / "enc.json"
    subprocess.run([str(BIN / "bufferlab-p4c"), str(ROOT / "tests" / "p4" / "bmv2_encodings.p4"),
                    "-o", str(doc_path)], check=True, capture_output=True)
    doc = json.loads(doc_path.read_text())
    for state in doc["parsers"][0]["parse_states"]:
        for op in state["parser_ops"]:
            if op["op"] == "extract_VL":
                op["parameters"][1] = {"type": "hexstr", "value": "0x10"}
    doc_path.write_text(json.dumps(doc))
    done = subprocess.run([str(BIN / "bufferlab-stf"), str(doc_path), str(ROOT / "tests" / "stf" / "bmv2_encodings.stf")],
                          capture_output=True, text=True)
    outcome = p4c_samples.stf_failure("enc", doc_path, done.returncode, done.stdout, done.stderr)
    assert outcome.stage == "load"
    assert outcome.message.endswith(
        "Parser 'extract_VL' operation has invalid length type 'hexstr', expected 'expression'")
    assert str(doc_path) not in outcome.message
    # A frame that differs is an STF failure, not a load failure.
    frame = p4c_samples.stf_failure("x", doc_path, 1, "FAIL x.stf:2: port 1: expected 01, got 02\n", "")
    assert (frame.stage, frame.message) == ("stf", "FAIL x.stf:2: port 1: expected 01, got 02")
