"""bench/tna_examples.py on our own TNA programs (tests/p4/tna): one row per program and
target, the case file's expectations checked (ports, frame bytes), the totals agreeing with
the rows, and the errors a user gets for a missing folder or a bad case file."""

import importlib.util
import json
import re
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "p4" / "tna"
spec = importlib.util.spec_from_file_location("bench_tna_examples", ROOT / "bench" / "tna_examples.py")
tna_examples = importlib.util.module_from_spec(spec)
sys.modules["bench_tna_examples"] = tna_examples
spec.loader.exec_module(tna_examples)

# A known destination MAC goes to its port with the bridged header stripped (as in
# tests/stf/tna/l2_forward.stf); queue_telemetry's forward table is left empty, so its
# frame is dropped and the expectation below must be reported as not met.
L2_FRAME = {"eth_dst": "08:00:00:00:01:02", "eth_src": "08:00:00:00:01:01", "ether_type": 0x88B5,
            "size": 64}
CASES = {
    "_comment": "ignored",
    "l2_forward": {
        "note": "unicast to port 2",
        "frame": L2_FRAME,
        "entries": [{"table": "Ingress.l2_forward", "match": {"hdr.ethernet.dst_addr": "08:00:00:00:01:02"},
                     "action": "Ingress.to_port", "params": {"port": 2}}],
        "expect": [2],
        "expect_frame": L2_FRAME,
        # On Tofino 2 the case expects another EtherType: the frame check must fail at byte 13.
        "targets": {"tofino2": {"expect_frame": {**L2_FRAME, "ether_type": 0x88B6}}},
    },
    "queue_telemetry": {"frame": {}, "expect": [2]},
}


def programs_with_main() -> list[str]:
    """The folder's programs, found independently of the tool: files that instantiate main."""
    return sorted(p.stem for p in PROGRAMS.glob("*.p4") if re.search(r"\bmain\s*;", p.read_text()))


def table_rows(text: str) -> dict[tuple[str, str], list[str]]:
    """The per-pair table of the tool's Markdown output, by (program, target)."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1] in ("tofino", "tofino2"):
            rows[(cells[0], cells[1])] = cells
    return rows


def totals(text: str) -> dict[str, list[str]]:
    """The totals table, by target."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] in ("tofino", "tofino2"):
            out[cells[0]] = cells
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> str:
    cases = tmp_path_factory.mktemp("cases") / "cases.json"
    cases.write_text(json.dumps(CASES))
    buf = StringIO()
    with redirect_stdout(buf):
        assert tna_examples.main(["--programs", str(PROGRAMS), "--cases", str(cases)]) == 0
    return buf.getvalue()


def test_every_program_has_a_row_per_target(report):
    rows = table_rows(report)
    names = programs_with_main()
    assert len(names) >= 10
    assert set(rows) == {(n, t) for n in names for t in ("tofino", "tofino2")}


def test_expected_ports_and_frame_bytes_are_checked(report):
    rows = table_rows(report)
    assert rows[("l2_forward", "tofino")][2:] == ["yes", "yes", "ports 2 ✓"]
    tofino2 = rows[("l2_forward", "tofino2")][4]
    assert tofino2.startswith("ports 2 ✗") and "differs from expect_frame at byte 13" in tofino2
    assert rows[("queue_telemetry", "tofino")][4] == "dropped ✗ (ports none, expected [2])"


def test_a_t2na_program_is_skipped_on_tofino_and_tried_on_tofino2(report):
    rows = table_rows(report)
    assert rows[("t2na_ghost", "tofino")][2].startswith("— (T2NA only")
    assert not rows[("t2na_ghost", "tofino2")][2].startswith("—")


def test_totals_agree_with_the_rows(report):
    rows, sums = table_rows(report), totals(report)
    for target in ("tofino", "tofino2"):
        mine = [r for (_, t), r in rows.items() if t == target]
        tried = [r for r in mine if not r[2].startswith("—")]
        compiled = [r for r in tried if r[2] == "yes"]
        loaded = [r for r in compiled if r[3] == "yes"]
        ran = [r for r in loaded if r[4].startswith(("ports", "dropped"))]
        checked = [r for r in ran if "✓" in r[4] or "✗" in r[4]]
        good = [r for r in ran if r[4].endswith("✓")]
        assert sums[target][1:] == [str(len(tried)), str(len(compiled)), str(len(loaded)), str(len(ran)),
                                    f"{len(good)} of {len(checked)}", str(len(mine) - len(tried))]
    assert int(sums["tofino"][6]) >= 1 and sums["tofino2"][6] == "0"  # t2na_ghost: Tofino 2 only


def test_refusals_are_grouped_with_every_failing_pair(report):
    rows = table_rows(report)
    listed = set(re.findall(r"([\w]+)/(tofino2?)\b", report.split("Refusals by reason:")[1]))
    failing = {k for k, r in rows.items()
               if r[2].startswith("no") or r[3].startswith("no") or "✗" in r[4] or ": " in r[4]}
    assert listed == failing
    assert ("queue_telemetry", "tofino") in listed and ("l2_forward", "tofino") not in listed


def test_json_line_has_the_figures(tmp_path, capsys):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES))
    assert tna_examples.main(["--programs", str(PROGRAMS), "--cases", str(cases), "-k", "l2_forward",
                              "--json"]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(line)
    assert figures["benchmark"] == "tna_examples" and figures["programs"] == 1
    assert figures["tofino"] == {"pairs": 1, "skipped": 0, "compiled": 1, "loaded": 1, "ran": 1,
                                 "with_expectation": 1, "as_expected": 1}
    assert figures["tofino2"]["as_expected"] == 0
    assert list(figures["refusals"]) == ["not as expected: frame on port N differs from expect_frame at byte N"]


def test_without_programs_it_says_how_to_get_them(capsys):
    assert tna_examples.main([]) == 2
    err = capsys.readouterr().err
    assert "open-p4studio" in err and "pkgsrc/p4-examples/p4_16_programs" in err


def test_bad_inputs_are_named(tmp_path, capsys):
    assert tna_examples.main(["--programs", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert tna_examples.main(["--programs", str(tmp_path)]) == 2
    assert "no .p4 file instantiating main" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"l2_forward": {"expect": [2], "expekt_frame": {}}}))
    assert tna_examples.main(["--programs", str(PROGRAMS), "--cases", str(bad), "-k", "l2_forward"]) == 2
    assert "case l2_forward: unknown keys ['expekt_frame']" in capsys.readouterr().err
    assert tna_examples.main(["--programs", str(PROGRAMS), "--targets", "tofino3"]) == 2
    assert "unknown ['tofino3']" in capsys.readouterr().err
