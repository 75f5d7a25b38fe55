"""The per-packet trace (BMv2's `--log-level debug|trace` log): its lines for a
tutorials-style router against hand-written expected traces, levels, packet ids of copies,
the BMv2 line form, and that tracing changes no packet (every STF case passes traced)."""

import json
import re
from pathlib import Path

import pytest
from engine_helpers import eth, ipv4

from bufferlab.compiler import compile as compile_p4
from bufferlab.switch import Engine
from bufferlab.switch.errors import InvalidArgumentError
from bufferlab.switch.packet_trace import format_row, format_rows
from bufferlab.switch.stf import main as stf_main
from bufferlab.switch.stf import run_file

ROOT = Path(__file__).resolve().parents[2]
ROUTER = "tests/p4/ipv4_lpm_router.p4"


def router() -> Engine:
    doc, _ = compile_p4(ROOT / ROUTER)
    e = Engine(json.dumps(doc))
    e.table_add("RouterIngress.ipv4_lpm", [("10.0.1.0", 24)], "RouterIngress.ipv4_forward",
                [0x080000000101, 2])
    return e


def texts(rows, packet=None):
    return [r[4] for r in rows if packet is None or r[2] == packet]


PARSE_IPV4 = [
    "Parser 'parser': start",
    "Parser 'parser' entering state 'start'",
    "Extracting header 'ethernet'",
    "Parser state 'start': key is 0800",
    "Parser 'parser' entering state 'parse_ipv4'",
    "Extracting header 'ipv4'",
    "Parser state 'parse_ipv4' has no switch, going to default next state",
    "Verifying checksum 'cksum_0': ok",
    "Parser 'parser': end",
]


def test_a_routed_packet_traces_as_bmv2_at_debug():
    e = router()
    e.set_trace("debug")
    e.send(1, ipv4("10.0.1.1"), 1000)
    e.drain()
    rows, lost = e.take_trace()
    assert lost == 0
    assert {r[1] for r in rows} == {"D"} and {(r[2], r[3]) for r in rows} == {(0, 0)}
    assert texts(rows) == ["Processing packet received on port 1", *PARSE_IPV4,
                           "Pipeline 'ingress': start",
                           "Looking up key:\n* hdr.ipv4.dstAddr : 0a000101\n",
                           "Table 'RouterIngress.ipv4_lpm': hit with handle 0",
                           "Action entry is RouterIngress.ipv4_forward - 80000000101,2,",
                           "Pipeline 'ingress': end",
                           "Egress port is 2",
                           "Pipeline 'egress': start",
                           "Pipeline 'egress': end",
                           "Deparser 'deparser': start",
                           "Updating checksum 'cksum'",
                           "Deparsing header 'ethernet'",
                           "Deparsing header 'ipv4'",
                           "Deparser 'deparser': end",
                           "Transmitting packet of size 41 out of port 2"]
    assert rows[0][0] == 1000


def test_a_dropped_packet_says_why():
    e = router()
    e.set_trace("debug")
    e.send(1, ipv4("10.9.9.9"), 1000)
    e.drain()
    assert texts(e.take_trace()[0])[-5:] == [
        "Table 'RouterIngress.ipv4_lpm': miss",
        "Action entry is RouterIngress.drop -",
        "Pipeline 'ingress': end",
        "Egress port is 511",
        "Dropping packet at the end of ingress",
    ]
    assert e.received() == []


def test_trace_level_adds_conditions_tables_actions_and_primitives_with_source_lines():
    e = router()
    e.set_trace("trace")
    e.send(1, ipv4("10.0.1.1"), 1000)
    e.drain()
    rows = e.take_trace()[0]
    trace_only = [r[4] for r in rows if r[1] == "T"]
    src = ROOT / ROUTER  # as the compiler was given it
    assert trace_only == [
        "Bytes parsed: 34",
        f'{src}(56) Condition "hdr.ipv4.isValid() && standard_metadata.checksum_error == 0"'
        " (node_0) is true",
        "Applying table 'RouterIngress.ipv4_lpm'",
        "Action RouterIngress.ipv4_forward",
        f"{src}(44) Primitive standard_metadata.egress_spec = port;",
        f"{src}(45) Primitive hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;",
        f"{src}(46) Primitive hdr.ethernet.dstAddr = dstAddr;",
        f"{src}(47) Primitive hdr.ipv4.ttl = hdr.ipv4.ttl - 1;",
    ]
    # The debug lines are all there too, as at debug.
    d = router()
    d.set_trace("debug")
    d.send(1, ipv4("10.0.1.1"), 1000)
    d.drain()
    assert [r for r in rows if r[1] == "D"] == d.take_trace()[0]


def test_packets_are_numbered_in_arrival_order():
    e = router()
    e.set_trace("debug")
    for i in range(3):
        e.send(1, ipv4("10.0.1.1"), 1000 * (i + 1))
    e.drain()
    starts = [(r[2], r[3]) for r in e.take_trace()[0]
              if r[4].startswith("Processing packet received")]
    assert starts == [(0, 0), (1, 0), (2, 0)]


def test_off_records_nothing_and_bad_levels_are_refused():
    e = router()
    e.send(1, ipv4("10.0.1.1"), 1000)
    e.set_trace("debug")
    e.set_trace(None)
    e.send(1, ipv4("10.0.1.1"), 2000)
    e.set_trace("info")
    e.send(1, ipv4("10.0.1.1"), 3000)
    e.drain()
    assert e.take_trace() == ([], 0)
    assert len(e.received()) == 3
    with pytest.raises(InvalidArgumentError, match="verbose"):
        e.set_trace("verbose")


def test_tracing_changes_no_packet():
    frames = [ipv4("10.0.1.1"), ipv4("10.9.9.9"), ipv4("10.0.1.7", ttl=1), eth(2, size=60)]
    outputs = []
    for level in (None, "trace"):
        e = router()
        e.set_trace(level)
        for i, f in enumerate(frames):
            e.send(1, f, 1000 * (i + 1))
        e.drain()
        outputs.append((e.received(), e.stats()))
    assert outputs[0] == outputs[1]


STF_CASES = sorted((ROOT / "tests" / "stf").glob("*.stf"))


@pytest.mark.parametrize("case", STF_CASES, ids=[c.stem for c in STF_CASES])
def test_every_stf_case_passes_traced(case):
    # The traced path walks controls node by node and actions primitive by primitive,
    # beside the straight-line form: both must give the same packets.
    program = case.name.split(".", 1)[0]
    lines: list[str] = []
    result = run_file(ROOT / "tests" / "p4" / f"{program}.p4", case, trace_level="trace",
                      trace_sink=lines.append)
    assert result.failures == []
    assert sum("Processing packet received on port" in x for x in lines) >= result.packets_in


LINE = re.compile(r"^\[\d\d:\d\d:\d\d\.\d{3}\] \[bmv2\] \[([TDW])\] \[thread \d+\] "
                  r"\[(\d+)\.(\d+)\] \[cxt 0\] (.*)$", re.S)


def test_lines_have_bmv2s_prefix():
    assert format_row((1_500_000_000, "D", 7, 2, "Egress port is 3"), None, 42) == (
        "[00:00:01.500] [bmv2] [D] [thread 42] [7.2] [cxt 0] Egress port is 3")
    (letter, line), = format_rows([(0, "T", 0, 0, "Bytes parsed: 14")], 0.0)
    m = LINE.match(line)
    assert letter == "T" and m and m.group(1, 2, 3, 4) == ("T", "0", "0", "Bytes parsed: 14")
    warn, _ = format_rows([(0, "D", 0, 0, "x")], None, lost=5)
    assert warn[0] == "W" and "5 trace lines lost" in warn[1]


def test_stf_command_prints_the_trace(capsys):
    status = stf_main(["-L", "debug", str(ROOT / "tests/p4/basic_l2_forward.p4"),
                       str(ROOT / "tests/stf/basic_l2_forward.stf")])
    err = capsys.readouterr().err.splitlines()
    assert status == 0
    assert err[0].endswith("[0.0] [cxt 0] Processing packet received on port 1")
    assert any(line.endswith("Table 'L2Ingress.dmac': hit with handle 0") for line in err)
