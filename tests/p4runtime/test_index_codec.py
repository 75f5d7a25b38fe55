"""Bytestring codec, P4Info ↔ BMv2 JSON name resolution, and the index over programs compiled
by bufferlab-p4c (every test program and the project's own p4src programs)."""

import json
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from bufferlab.compiler import compile
from bufferlab.compiler.jsonwriter import dumps
from bufferlab.switch.p4runtime import codec
from bufferlab.switch.p4runtime import target as tgt
from bufferlab.switch.p4runtime.p4info_index import P4InfoIndex, resolve_name
from bufferlab.switch.p4runtime.status import P4RuntimeError

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "tests" / "p4").glob("*.p4")) + sorted((ROOT / "p4src").glob("*.p4"))


def test_bytestrings_accept_padded_and_short_forms_and_reply_canonically():
    # Spec "Bytestrings" table: bit<16> 99 is \x63 canonically, \x00\x63 also accepted.
    assert codec.decode(b"\x63", 16, "f") == b"\x00\x63"
    assert codec.decode(b"\x00\x00\x00\x63", 16, "f") == b"\x00\x63"
    assert codec.canonical(b"\x00\x63") == b"\x63"
    assert codec.canonical(b"\x00\x00") == b"\x00"
    with pytest.raises(P4RuntimeError) as error:
        codec.decode(b"\x10\x63", 12, "f")  # bit 12 set in a bit<12>
    assert error.value.code == "OUT_OF_RANGE"
    with pytest.raises(P4RuntimeError) as error:
        codec.decode(b"", 8, "f")
    assert error.value.code == "INVALID_ARGUMENT"
    assert codec.decode(b"\x01\xff", 9, "port") == b"\x01\xff"


def test_json_names_resolve_exactly_or_by_unique_dotted_suffix():
    assert resolve_name("MyIngress.t", ["MyIngress.t", "t"], "table") == "MyIngress.t"
    assert resolve_name("t", ["MyIngress.t", "tbl_act"], "table") == "MyIngress.t"
    assert resolve_name("MyIngress.t", ["t"], "table") == "t"
    with pytest.raises(P4RuntimeError) as error:
        resolve_name("t", ["A.t", "B.t"], "table")
    assert error.value.code == "INVALID_ARGUMENT"
    with pytest.raises(P4RuntimeError):
        resolve_name("MyIngress.missing", ["MyIngress.t"], "table")


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_index_cross_references_compiled_programs(path):
    document, p4info = compile(path)
    index = P4InfoIndex(p4info, dumps(document))
    json_tables = {t["name"]: t for pipe in document["pipelines"] for t in pipe["tables"]}
    for table in index.tables.values():
        assert table.json_name in json_tables
        for action_name in table.action_json_names.values():
            assert action_name in json_tables[table.json_name]["actions"]
    learn_lists = {entry["name"] for entry in document.get("learn_lists", [])}
    for digest in index.digests.values():
        assert digest.json_name in learn_lists
        assert all(member.bitwidth > 0 for member in digest.members)
    for register in index.registers.values():
        assert register.bitwidth > 0


def test_compiled_program_through_the_server(stub, open_stream, target, helpers):
    document, p4info = compile(ROOT / "tests" / "p4" / "packet_io_controller_header.p4")
    stream = open_stream((0, 1))
    assert stream.recv().arbitration.status.code == 0
    stub.SetForwardingPipelineConfig(helpers.pipeline_request(p4info, device_json=dumps(document)))
    assert json.loads(target.loaded[0]) == document

    table = next(t for t in p4info.tables if t.preamble.name == "IoIngress.punt")
    action = next(a for a in p4info.actions if a.preamble.name == "IoIngress.send_to_cpu")
    entity = p4runtime_pb2.Entity()
    entity.table_entry.table_id = table.preamble.id
    entity.table_entry.match.add(field_id=1).exact.value = b"\x88\xb5"
    entity.table_entry.action.action.action_id = action.preamble.id
    stub.Write(helpers.write_request((p4runtime_pb2.Update.INSERT, entity)))
    assert target.calls[-1] == (
        "table_add", "IoIngress.punt",
        tgt.TableEntry((tgt.MatchParam("exact", b"\x88\xb5"),),
                       tgt.ActionCall("IoIngress.send_to_cpu"), 0))

    out = p4runtime_pb2.StreamMessageRequest()
    out.packet.payload = b"frame"
    out.packet.metadata.add(metadata_id=1, value=b"\x02")  # egress_port 2, then 7 pad bits
    stream.send(out)
    target.packet_in_handler(b"\x00\x80hello")  # ingress_port 1
    packet = stream.recv().packet
    assert packet.payload == b"hello" and packet.metadata[0].value == b"\x01"
    # Stream messages are handled in order: once the next one's error is back, the
    # PacketOut has reached the target.
    sync = p4runtime_pb2.StreamMessageRequest()
    sync.packet.metadata.add(metadata_id=9, value=b"\x01")
    stream.send(sync)
    assert stream.recv().error.canonical_code == 3  # INVALID_ARGUMENT
    assert target.packets_out == [b"\x01\x00frame"]
