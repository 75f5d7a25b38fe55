"""The STF runner: the cases in tests/stf against tests/p4 programs compiled by
bufferlab-p4c, and the runner's own failure reporting."""

from pathlib import Path

import pytest
from engine_helpers import FIXTURES

from bufferlab.switch import Engine
from bufferlab.switch.stf import (
    Runner,
    StfError,
    load_program,
    main,
    matches,
    packet_bytes,
    parse_masked,
)

ROOT = Path(__file__).resolve().parents[2]

#: Cases that cannot pass yet, each with the reason (tests/stf/README.md has details).
EXPECTED_FAILURES: dict[str, str] = {}


def _case_param(case: Path):
    reason = EXPECTED_FAILURES.get(case.stem)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.stem, marks=marks)


# `prog.stf` and `prog.<variant>.stf` both run against tests/p4/prog.p4.
CASES = [_case_param(c) for c in sorted((ROOT / "tests" / "stf").glob("*.stf"))]


@pytest.mark.parametrize("case", CASES)
def test_stf_case_passes(case):
    """Each case passes with the program as machine code and interpreted (`--no-jit`),
    compiled once for both."""
    program = case.name.split(".", 1)[0]
    json_text = load_program(ROOT / "tests" / "p4" / f"{program}.p4", [])
    for jit in (True, False):
        engine = Engine(json_text, jit=jit)
        info = engine.jit_info()
        assert info["enabled"] == jit
        assert (info["compiled"] > 0) == jit, info
        result = Runner(engine, json_text, str(case)).run(case.read_text())
        assert result.failures == [], f"jit={jit}"
        assert result.packets_in > 0 and result.packets_out > 0


def l3_runner():
    json_text = (FIXTURES / "l3.json").read_text()
    return Runner(Engine(json_text), json_text, "case.stf")


ROUTE = "add ipv4_lpm ipv4.dstAddr:0x0a000200/24 ipv4_forward(dstAddr:0xabc, port:3)\n"
FRAME = "000000000002 000000000001 0800 4500001400000000401100000a0000010a000207\n"


def test_wrong_expectation_is_reported_with_line():
    result = l3_runner().run(ROUTE + "packet 1 " + FRAME + "expect 3 000000000abc ffff$\n")
    assert not result.passed
    assert result.failures[0].startswith("case.stf:3: port 3: expected 000000000abcffff$")


def test_wildcards_and_unexpected_port():
    result = l3_runner().run(ROUTE + "packet 1 " + FRAME + "expect 3 000000000abc 0000000000** 0800\n")
    assert result.passed
    two = ROUTE + "packet 1 " + FRAME + "packet 1 " + FRAME
    result = l3_runner().run(two + "expect 3 000000000abc\n")
    assert [f.split(":")[0] for f in result.failures] == ["port 3"]
    assert result.failures[0].startswith("port 3: unexpected frame 000000000abc")


def test_ports_the_file_never_names_are_not_checked():
    # p4c's runner opens an interface only for the ports its packet and expect lines name.
    result = l3_runner().run(ROUTE + "packet 1 " + FRAME + "expect 4 000000000abc\n")
    assert result.failures == ["case.stf:3: port 4: expected frame never came"]
    assert (result.packets_out, result.packets_unheard) == (0, 1)


def test_a_lone_last_hex_digit_is_a_byte_of_its_own():
    assert packet_bytes("ab c") == bytes([0xAB, 0x0C])
    assert packet_bytes("00 01 0") == bytes([0, 1, 0])
    assert packet_bytes("0a0b") == bytes([0x0A, 0x0B])


def test_check_counter():
    ok = l3_runner().run(ROUTE + "packet 1 " + FRAME + "expect 3\ncheck_counter port_bytes(3) packets == 1\n")
    assert ok.passed
    bad = l3_runner().run(ROUTE + "packet 1 " + FRAME + "expect 3\ncheck_counter port_bytes(3) bytes > 100\n")
    assert bad.failures == ["case.stf:4: counter MyIngress.port_bytes(3) bytes is 34, expected > 100"]


def test_malformed_statement_names_line():
    with pytest.raises(StfError, match=r"case.stf:2: .*Unknown command 'frobnicate'"):
        l3_runner().run(ROUTE + "frobnicate 1 2\n")
    with pytest.raises(StfError, match=r"case.stf:1: table 'nope' does not exist"):
        l3_runner().run("add nope x:1 NoAction()\n")


def test_masked_values():
    assert parse_masked("0x0a**", 16) == (0x0A00, 0xFF00)
    assert parse_masked("0b1*0", 3) == (0b100, 0b101)
    assert parse_masked("7", 8) == (7, 0xFF)
    assert parse_masked("0x0a00&&&0xff00", 16) == (0x0A00, 0xFF00)
    assert matches("ab**", "abcdef", False) and not matches("ab**", "abcdef", True)


def test_cli_exit_status(tmp_path, capsys):
    case = tmp_path / "c.stf"
    case.write_text(ROUTE + "packet 1 " + FRAME + "expect 3\n")
    assert main([str(FIXTURES / "l3.json"), str(case)]) == 0
    case.write_text(ROUTE + "packet 1 " + FRAME + "expect 2\n")
    assert main([str(FIXTURES / "l3.json"), str(case)]) == 1
    assert "FAIL" in capsys.readouterr().out
