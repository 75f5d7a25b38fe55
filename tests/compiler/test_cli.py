"""bufferlab-p4c command line: outputs, p4c-bm2-ss options, errors and exit status."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from p4.config.v1 import p4info_pb2

from bufferlab.compiler.cli import run

P4 = Path(__file__).resolve().parents[1] / "p4"

SKELETON = """
#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; }}
struct headers_t {{ h_t h; }}
struct meta_t {{ bit<8> x; }}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control C(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    apply {{
{body}
    }}
}}
control D(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


def program(tmp_path, body, name="prog.p4"):
    path = tmp_path / name
    path.write_text(SKELETON.format(body=body))
    return path


def test_outputs_like_p4c_bm2_ss(tmp_path):
    out = tmp_path / "l2.json"
    txt = tmp_path / "l2.p4.p4info.txtpb"
    binary = tmp_path / "l2.p4info.bin"
    status = run([str(P4 / "basic_l2_forward.p4"), "-o", str(out), "--p4runtime-files", f"{txt},{binary}",
                  "--std", "p4-16", "--arch", "v1model"])
    assert status == 0
    doc = json.loads(out.read_text())
    assert doc["program"] == str(P4 / "basic_l2_forward.p4")
    assert out.read_text().startswith('{\n  "header_types" : [\n')
    assert txt.read_text().startswith("# proto-file: p4/config/v1/p4info.proto\n")
    info = p4info_pb2.P4Info.FromString(binary.read_bytes())
    assert [t.preamble.name for t in info.tables] == ["L2Ingress.dmac"]


def test_defines_and_include_dirs(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "port.p4").write_text("const bit<9> OUT_PORT = 3;\n")
    src = program(tmp_path, "#ifdef USE_PORT\n sm.egress_spec = OUT_PORT;\n#endif\n")
    src.write_text('#include "port.p4"\n' + src.read_text())
    out = tmp_path / "o.json"
    assert run([str(src), "-o", str(out), "-I", str(inc), "-DUSE_PORT"]) == 0
    prims = [p for a in json.loads(out.read_text())["actions"] for p in a["primitives"]]
    assert prims[0]["parameters"][1] == {"type": "hexstr", "value": "0x0003"}
    assert run([str(src), "-o", str(out), "-I", str(inc)]) == 0
    assert json.loads(out.read_text())["actions"] == []


def test_unknown_option_is_a_clear_error(tmp_path, capsys):
    assert run([str(P4 / "basic_l2_forward.p4"), "--emit-magic"]) == 2
    err = capsys.readouterr().err
    assert "bufferlab-p4c: error:" in err and "--emit-magic" in err


def test_unsupported_architecture_and_std(capsys):
    assert run([str(P4 / "basic_l2_forward.p4"), "--arch", "psa"]) == 2
    assert "--arch psa: known architectures are v1model, tna, t2na" in capsys.readouterr().err
    assert run([str(P4 / "basic_l2_forward.p4"), "--target", "tofino3"]) == 2
    assert "--target tofino3: known targets are" in capsys.readouterr().err
    assert run([str(P4 / "basic_l2_forward.p4"), "--std", "p4-14"]) == 2


def test_unsupported_construct_is_named_with_its_source_line(tmp_path, capsys):
    src = program(tmp_path, "        for (bit<8> i = 0; i < 2; i = i + 1) {\n            return;\n        }")
    assert run([str(src), "-o", str(tmp_path / "x.json")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{src}:13:9: error: ")
    assert "a for loop" in err[0] and "not supported" in err[0]
    assert err[1].strip() == "for (bit<8> i = 0; i < 2; i = i + 1) {"
    assert err[2].rstrip().endswith("^")
    assert not (tmp_path / "x.json").exists()


def test_header_width_not_multiple_of_8(tmp_path, capsys):
    src = program(tmp_path, "")
    src.write_text(src.read_text().replace("bit<8> b;", "bit<7> b;"))
    assert run([str(src), "-o", str(tmp_path / "x.json")]) == 1
    assert "not a multiple of 8" in capsys.readouterr().err


def test_syntax_error_and_missing_file(tmp_path, capsys):
    src = program(tmp_path, "        sm.egress_spec = ;")
    assert run([str(src), "-o", str(tmp_path / "x.json")]) == 1
    assert f"{src}:13:" in capsys.readouterr().err
    assert run([str(tmp_path / "absent.p4")]) == 1
    assert "absent.p4" in capsys.readouterr().err


def test_bad_p4runtime_suffix(tmp_path, capsys):
    assert run([str(P4 / "basic_l2_forward.p4"), "-o", str(tmp_path / "o.json"),
                "--p4runtime-files", str(tmp_path / "x.yaml")]) == 1
    assert "suffix" in capsys.readouterr().err


def test_console_script_exit_status(tmp_path):
    script = shutil.which("bufferlab-p4c") or str(Path(sys.executable).parent / "bufferlab-p4c")
    ok = subprocess.run([script, str(P4 / "basic_l2_forward.p4"), "-o", str(tmp_path / "o.json")],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and (tmp_path / "o.json").exists()
    bad = subprocess.run([script, str(P4 / "basic_l2_forward.p4"), "--nope"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--nope" in bad.stderr


def test_p4runtime_entries_files(tmp_path):
    from p4.v1 import p4runtime_pb2

    out = tmp_path / "entries.bin"
    assert run([str(P4 / "range_match_l4_ports.p4"), "-o", str(tmp_path / "o.json"),
                "--p4runtime-entries-files", f"{out},{tmp_path / 'entries.txtpb'}"]) == 0
    request = p4runtime_pb2.WriteRequest.FromString(out.read_bytes())
    assert len(request.updates) == 3
    assert request.updates[0].entity.table_entry.match[0].range.high == b"\x03\xff"
    assert (tmp_path / "entries.txtpb").read_text().startswith("# proto-file: p4/v1/p4runtime.proto\n")


def test_older_single_p4runtime_file_form(tmp_path):
    out = tmp_path / "info.txt"
    assert run([str(P4 / "basic_l2_forward.p4"), "-o", str(tmp_path / "o.json"),
                "--p4runtime-file", str(out), "--p4runtime-format", "text"]) == 0
    assert out.read_text().startswith("# proto-file: p4/config/v1/p4info.proto\n")
    binary = tmp_path / "info.pb"
    assert run([str(P4 / "basic_l2_forward.p4"), "-o", str(tmp_path / "o.json"), "--p4runtime-file", str(binary)]) == 0
    assert p4info_pb2.P4Info.FromString(binary.read_bytes()).tables[0].preamble.name == "L2Ingress.dmac"


def test_internal_errors_end_in_a_message_not_a_traceback(tmp_path, capsys, monkeypatch):
    import bufferlab.compiler.cli as cli

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(cli, "compile_program", broken)
    assert run([str(P4 / "basic_l2_forward.p4"), "-o", str(tmp_path / "o.json")]) == 3
    err = capsys.readouterr().err
    assert "internal compiler error (KeyError" in err and "Traceback" not in err


def test_tutorial_command_line_and_output_directory(tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    info = build / "basic_l2_forward.p4.p4info.txtpb"
    assert run(["--p4v", "16", "--p4runtime-files", str(info), "-o", str(build / "basic_l2_forward.json"),
                str(P4 / "basic_l2_forward.p4")]) == 0
    assert (build / "basic_l2_forward.json").exists() and info.exists()
    (build / "basic_l2_forward.json").unlink()
    assert run(["--target", "bmv2", "--arch", "v1model", "-o", str(build), str(P4 / "basic_l2_forward.p4")]) == 0
    assert (build / "basic_l2_forward.json").exists()
    assert run(["--p4v", "14", str(P4 / "basic_l2_forward.p4")]) == 2
