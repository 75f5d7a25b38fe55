"""The JIT's switches and reports: `--no-jit` on bufferlab-switch and bufferlab-stf,
`Engine(jit=False)`, `Engine.jit_info()` and the banner line that reports it. (That the
machine code computes what the interpreter does is shown by `switch/src/jit/*_tests.rs`
and the STF suite, which runs every case in both modes.)"""

from engine_helpers import FIXTURES

from bufferlab.switch import Engine
from bufferlab.switch.cli import parse_args
from bufferlab.switch.process import jit_summary
from bufferlab.switch.stf import main

L3 = (FIXTURES / "l3.json").read_text()
ROUTE = "add ipv4_lpm ipv4.dstAddr:0x0a000200/24 ipv4_forward(dstAddr:0xabc, port:3)\n"
FRAME = "000000000002 000000000001 0800 4500001400000000401100000a0000010a000207\n"


def test_no_jit_is_a_target_option_and_the_jit_the_default():
    assert parse_args(["x.json"]).jit is True
    assert parse_args(["x.json", "--", "--no-jit", "--cpu-port", "255"]).jit is False


def test_jit_info_counts_the_blocks_and_the_interpreter_reports_none():
    info = Engine(L3).jit_info()
    # l3.json: 4 actions and the ingress control (its egress is empty); its
    # checksums' conditions are validity bits, read without a block.
    assert info["enabled"] is True
    assert (info["compiled"], info["interpreted"], info["fallbacks"]) == (5, 0, [])
    assert info["compile_us"] > 0
    off = Engine(L3, jit=False).jit_info()
    assert off == {"enabled": False, "compiled": 0, "interpreted": 0, "fallbacks": [], "compile_us": 0,
                   "tables_in_place": 0, "parser_states": 0, "deparser_headers": 0}


def test_jit_info_counts_the_tables_applied_in_place():
    # l3.json: the 48-bit exact dmac and the LPM ipv4_lpm with its direct counters.
    assert Engine(L3).jit_info()["tables_in_place"] == 2
    # A keyless table with a settable default, exact ones of 16, 9, 48 and 12
    # bits and an LPM one of 51.
    info = Engine(FIXTURES / "in_place_tables.json").jit_info()
    assert (info["tables_in_place"], info["interpreted"]) == (6, 0)


def test_jit_info_counts_the_parse_states_compiled():
    # l3.json: Ethernet, then IPv4 on ether type 0x0800.
    assert Engine(L3).jit_info()["parser_states"] == 2
    # parser.json's start has a value set, and most states extract into
    # stacks or varbits: the states of fixed headers compile.
    info = Engine(FIXTURES / "parser.json").jit_info()
    assert info["parser_states"] == 3


def test_jit_info_counts_the_headers_the_compiled_deparser_emits():
    # l3.json: Ethernet and IPv4.
    assert Engine(L3).jit_info()["deparser_headers"] == 2
    # parser.json: every header it emits but the one with a varbit field.
    info = Engine(FIXTURES / "parser.json").jit_info()
    assert info["deparser_headers"] == 17


def test_both_modes_route_the_same_frame():
    frame = bytes.fromhex(FRAME.replace(" ", "").strip())
    outs = []
    for jit in (True, False):
        e = Engine(L3, jit=jit)
        e.table_add("MyIngress.ipv4_lpm", [("10.0.2.0", 24)], "MyIngress.ipv4_forward", [0xABC, 3])
        e.send(1, frame, 0)
        e.drain()
        outs.append(e.received())
    assert outs[0] == outs[1]
    assert [(port, data[5], data[22]) for port, data, _ in outs[0]] == [(3, 0xBC, 63)]


def test_the_banner_line_says_how_the_pipeline_runs():
    assert jit_summary(Engine(L3, jit=False).jit_info()) == "pipeline: interpreted (--no-jit)"
    line = jit_summary(Engine(L3).jit_info())
    assert line.startswith("pipeline: 5 of 5 blocks (actions, controls, checksum conditions), "
                           "2 parse states and 2 deparser headers compiled to machine code in ")
    assert line.endswith(" ms")
    partial = {"enabled": True, "compiled": 3, "interpreted": 1, "compile_us": 2500,
               "parser_states": 0, "deparser_headers": 0,
               "fallbacks": [("action a", "field slot 9 out of range")]}
    assert jit_summary(partial) == ("pipeline: 3 of 4 blocks (actions, controls, checksum "
                                    "conditions), 0 parse states and 0 deparser headers compiled "
                                    "to machine code in "
                                    "2.5 ms; interpreted: action a (field slot 9 out of range)")


def test_bufferlab_stf_runs_a_case_interpreted(tmp_path, capsys):
    case = tmp_path / "c.stf"
    case.write_text(ROUTE + "packet 1 " + FRAME + "expect 3 000000000abc\n")
    assert main(["--no-jit", str(FIXTURES / "l3.json"), str(case)]) == 0
    case.write_text(ROUTE + "packet 1 " + FRAME + "expect 2\n")
    assert main(["--no-jit", str(FIXTURES / "l3.json"), str(case)]) == 1
    assert "FAIL" in capsys.readouterr().out
