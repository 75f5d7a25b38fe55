"""The tutorials' sN-runtime.json: entries, defaults and PRE entries, with located errors."""

import json
from pathlib import Path

import pytest

from bufferlab.controller.runtime_json import RuntimeFileError, load_runtime, parse_runtime

HERE = Path(__file__).parent

RUNTIME = {
    "target": "bmv2",
    "p4info": "small.p4info.txtpb",
    "bmv2_json": "build/small.json",
    "table_entries": [
        {"table": "MyIngress.ipv4_lpm", "default_action": True, "action_name": "MyIngress.drop",
         "action_params": {}},
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
         "action_name": "MyIngress.ipv4_forward",
         "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}},
    ],
    "multicast_group_entries": [
        {"multicast_group_id": 1, "replicas": [{"egress_port": 1, "instance": 1},
                                               {"egress_port": 2, "instance": 1}]}],
    "clone_session_entries": [
        {"clone_session_id": 100, "replicas": [{"egress_port": 3, "instance": 1}],
         "packet_length_bytes": 64}],
}


def test_runtime_file_becomes_defaults_and_inserts_in_file_order(tmp_path):
    path = tmp_path / "s1-runtime.json"
    (tmp_path / "small.p4info.txtpb").write_text((HERE / "small.p4info.txtpb").read_text())
    path.write_text(json.dumps(RUNTIME))
    config = load_runtime(path)
    assert config.bmv2_json == tmp_path / "build/small.json"
    (default,) = config.defaults
    assert default.table_entry.is_default_action
    kinds = [e.WhichOneof("entity") for e in config.inserts]
    assert kinds == ["table_entry", "packet_replication_engine_entry",
                     "packet_replication_engine_entry"]
    clone = config.inserts[2].packet_replication_engine_entry.clone_session_entry
    assert (clone.session_id, clone.packet_length_bytes) == (100, 64)


@pytest.mark.parametrize(
    ("change", "message"),
    [(lambda r: r.update(switch="s1"), "switch: unknown key"),
     (lambda r: r.update(target="tofino3"), "target: 'tofino3' is not one of 'bmv2', 'tofino', 'tofino2'"),
     (lambda r: r["table_entries"][1].update(prio=3), r"table_entries\[1\].prio: unknown key"),
     (lambda r: r["table_entries"][1].pop("table"), r"table_entries\[1\].table: required"),
     (lambda r: r["table_entries"][1]["action_params"].update(port=999),
      r"table_entries\[1\].action_params.port: 999 does not fit in 9 bits"),
     (lambda r: r["table_entries"][1].update(table="MyIngress.nat"),
      r"table_entries\[1\]: no table named 'MyIngress.nat'"),
     (lambda r: r["multicast_group_entries"][0]["replicas"].append({"instance": 1}),
      r"multicast_group_entries\[0\].replicas\[2\]: needs egress_port"),
     (lambda r: r["clone_session_entries"][0].update(clone_session_id=0),
      r"clone_session_entries\[0\]: clone session id must be positive")],
)
def test_bad_runtime_files_name_the_key(change, message):
    data = json.loads(json.dumps(RUNTIME))
    change(data)
    with pytest.raises(RuntimeFileError, match=message):
        parse_runtime(data, HERE)


def test_missing_p4info_file_is_reported(tmp_path):
    with pytest.raises(RuntimeFileError, match="p4info: cannot read small.p4info.txtpb"):
        parse_runtime(RUNTIME, tmp_path)
