"""p4c's JSON text layout and hexstr formatting."""

import json

from bufferlab.compiler.bmv2.hexstr import hexstr
from bufferlab.compiler.jsonwriter import dumps


def test_layout_matches_p4c_writer():
    doc = {
        "header_types": [
            {"name": "ethernet_t", "id": 0, "fields": [["dstAddr", 48, False], ["etherType", 16, False]]}
        ],
        "transition_key": [],
        "empty": {},
        "mask": None,
        "order": ["ethernet", "ipv4"],
    }
    expected = (
        "{\n"
        '  "header_types" : [\n'
        "    {\n"
        '      "name" : "ethernet_t",\n'
        '      "id" : 0,\n'
        '      "fields" : [\n'
        '        ["dstAddr", 48, false],\n'
        '        ["etherType", 16, false]\n'
        "      ]\n"
        "    }\n"
        "  ],\n"
        '  "transition_key" : [],\n'
        '  "empty" : {},\n'
        '  "mask" : null,\n'
        '  "order" : ["ethernet", "ipv4"]\n'
        "}\n"
    )
    assert dumps(doc) == expected
    assert json.loads(dumps(doc)) == doc


def test_strings_are_escaped_and_mixed_arrays_break_lines():
    text = dumps({"source_fragment": 'log_msg("x = {}")', "v": [1, [2]]})
    assert '"source_fragment" : "log_msg(\\"x = {}\\")"' in text
    assert '"v" : [\n    1,\n    [2]\n  ]' in text


def test_hexstr_padding_rules():
    assert hexstr(5, 9) == "0x0005"
    assert hexstr(5) == "0x5"
    assert hexstr(0xABA, 12) == "0x0aba"
    assert hexstr(-3) == "-0x3"
    assert hexstr(0, 1) == "0x00"
    assert hexstr(0xFFFFFFFF, 32) == "0xffffffff"
