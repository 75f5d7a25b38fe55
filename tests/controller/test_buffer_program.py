"""Config -> P4Runtime updates for buffer_switch.p4, checked against the P4Info bufferlab-p4c
writes for the program: ids, canonical values, order; and the live changes."""

import json
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.buffer_program import (
    bcn_of,
    bcn_update,
    entry_action,
    entry_match,
    parse_changes,
    pause_of,
    pause_update,
    program_updates,
    queue_cap_update,
    threshold_update,
)
from bufferlab.controller.cli import describe
from bufferlab.controller.config import ConfigError, Threshold, parse_config
from bufferlab.controller.p4info import P4InfoIndex

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "buffer_switch.p4"
MODIFY, INSERT = p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.INSERT

CONFIG = {
    "switch_id": 2,
    "pool_bytes": 1_048_576,
    "priority_queues": 2,
    "alpha": "1/4",
    "classes": {"8": 0, "10": 1, "default": 1},
    "ports": {
        "1": {},
        "4": {"threshold": "50%", "queue_caps_bytes": {"1": 30_000}, "ecn_k_bytes": 97_500,
              "bcn": {"qeq_bytes": 24_000, "sample_bytes": 150_000, "jitter_bytes": 20_000},
              "pause": {"xoff_bytes": 140_800, "xon_bytes": 128_000, "refresh_us": 1677}},
    },
    "forwarding": {
        "l2": [{"mac": "08:00:00:00:02:01", "port": 1}, {"mac": "08:00:00:00:02:04", "port": 4}],
        "routes": [{"prefix": "10.0.4.0/24", "next_hop_mac": "08:00:00:00:04:04", "port": 4}],
    },
}

EXPECTED = [
    "MODIFY switch_config (default) -> set_switch(switch_id=2, pool_bytes=1048576,"
    " port_session_base=1, all_ports_session=511)",
    "MODIFY l2_forward (default) -> flood(group=1)",
    "MODIFY dscp_class (default) -> set_queue(queue=1)",
    "MODIFY buffer_threshold (default) -> dynamic_threshold(alpha_num=1, alpha_shift=2)",
    "MODIFY queue_threshold (default) -> queue_cap(cap_bytes=4294967295)",
    "MODIFY ecn_threshold (default) -> ecn_off()",
    "MODIFY bcn_config (default) -> bcn_disable()",
    "MODIFY pause_config (default) -> pause_disable()",
    "INSERT multicast group 1: ports 1, 4",
    "INSERT clone session 2: ports 1",
    "INSERT clone session 5: ports 4",
    "INSERT clone session 511: ports 1, 4",
    "INSERT l2_forward dst_addr=08:00:00:00:02:01 -> l2_to_port(port=1)",
    "INSERT l2_forward dst_addr=08:00:00:00:02:04 -> l2_to_port(port=4)",
    "INSERT ipv4_lpm dst_addr=10.0.4.0/24 -> ipv4_forward(dst_mac=08:00:00:00:04:04, port=4)",
    "INSERT dscp_class dscp=8 -> set_queue(queue=0)",
    "INSERT dscp_class dscp=10 -> set_queue(queue=1)",
    "INSERT buffer_threshold port=1 -> dynamic_threshold(alpha_num=1, alpha_shift=2)",
    "INSERT buffer_threshold port=4 -> static_threshold(percent=50)",
    "INSERT queue_threshold port=1 queue=0 -> queue_cap(cap_bytes=4294967295)",
    "INSERT queue_threshold port=1 queue=1 -> queue_cap(cap_bytes=4294967295)",
    "INSERT queue_threshold port=4 queue=0 -> queue_cap(cap_bytes=4294967295)",
    "INSERT queue_threshold port=4 queue=1 -> queue_cap(cap_bytes=30000)",
    "INSERT ecn_threshold port=1 queue=0 -> ecn_off()",
    "INSERT ecn_threshold port=1 queue=1 -> ecn_off()",
    "INSERT ecn_threshold port=4 queue=0 -> ecn_mark_above(k_bytes=97500)",
    "INSERT ecn_threshold port=4 queue=1 -> ecn_mark_above(k_bytes=97500)",
    "INSERT bcn_config port=1 queue=0 -> bcn_disable()",
    "INSERT bcn_config port=1 queue=1 -> bcn_disable()",
    "INSERT bcn_config port=4 queue=0 -> bcn_enable(qeq_pages=375, w=2, qsc_pages=0,"
    " sample_bytes=150000, jitter_bytes=20000)",
    "INSERT bcn_config port=4 queue=1 -> bcn_enable(qeq_pages=375, w=2, qsc_pages=0,"
    " sample_bytes=150000, jitter_bytes=20000)",
    "INSERT pause_config port=1 -> pause_disable()",
    "INSERT pause_config port=4 -> pause_enable(xoff_bytes=140800, xon_bytes=128000,"
    " quanta=65535, refresh_us=1677)",
]


@pytest.fixture(scope="module")
def index() -> P4InfoIndex:
    """The P4Info bufferlab-p4c writes for p4src/buffer_switch.p4."""
    _json, p4info = compile_p4(PROGRAM)
    return P4InfoIndex(p4info)


def test_config_becomes_the_documented_updates_in_order(index):
    updates = program_updates(index, parse_config(CONFIG))
    assert [describe(index, u) for u in updates] == EXPECTED


def test_ids_and_values_are_the_p4info_ids_and_canonical_bytestrings(index):
    updates = program_updates(index, parse_config(CONFIG))
    switch_config = updates[0].entity.table_entry
    assert (updates[0].type, switch_config.table_id, switch_config.is_default_action) == (
        MODIFY, 39383542, True)
    assert switch_config.action.action.action_id == 28653310
    assert [(p.param_id, p.value) for p in switch_config.action.action.params] == [
        (1, b"\x02"), (2, b"\x10\x00\x00"), (3, b"\x01"), (4, b"\x01\xff")]
    route = updates[14].entity.table_entry
    assert route.table_id == 34892705 and route.action.action.action_id == 29631509
    (match,) = route.match
    assert (match.field_id, match.lpm.value, match.lpm.prefix_len) == (1, b"\x0a\x00\x04\x00", 24)
    assert [(p.param_id, p.value) for p in route.action.action.params] == [
        (1, b"\x08\x00\x00\x00\x04\x04"), (2, b"\x04")]
    pause = updates[-1].entity.table_entry
    assert (updates[-1].type, pause.table_id, pause.action.action.action_id) == (
        INSERT, 48268239, 24097029)
    assert [(p.param_id, p.value) for p in pause.action.action.params] == [
        (1, b"\x02\x26\x00"), (2, b"\x01\xf4\x00"), (3, b"\xff\xff"), (4, b"\x06\x8d")]
    sessions = [u.entity.packet_replication_engine_entry.clone_session_entry for u in updates[9:12]]
    assert [(s.session_id, [(r.egress_port, r.instance) for r in s.replicas]) for s in sessions] == [
        (2, [(1, 0)]), (5, [(4, 0)]), (511, [(1, 0), (4, 0)])]
    assert all(s.packet_length_bytes == 0 and s.class_of_service == 0 for s in sessions)


def test_runtime_json_entries_are_written_after_the_config_s_own(index, tmp_path):
    (tmp_path / "s2-runtime.json").write_text(json.dumps({"table_entries": [
        {"table": "l2_forward", "default_action": True, "action_name": "drop", "action_params": {}},
        {"table": "l2_forward", "match": {"dst_addr": "08:00:00:00:02:09"},
         "action_name": "l2_to_port", "action_params": {"port": 4}},
    ]}))
    raw = dict(CONFIG, forwarding={"runtime_json": "s2-runtime.json"})
    path = tmp_path / "s2.json"
    path.write_text(json.dumps(raw))
    from bufferlab.controller.config import load_config

    lines = [describe(index, u) for u in program_updates(index, load_config(path))]
    assert lines[8] == "MODIFY l2_forward (default) -> drop()"
    assert lines[13] == "INSERT l2_forward dst_addr=08:00:00:00:02:09 -> l2_to_port(port=4)"
    assert lines[14] == "INSERT dscp_class dscp=8 -> set_queue(queue=0)"


def test_threshold_and_queue_cap_changes_modify_the_port_entry(index):
    update = threshold_update(index, 4, Threshold(percent=None, alpha_num=1, alpha_shift=3))
    assert describe(index, update) == (
        "MODIFY buffer_threshold port=4 -> dynamic_threshold(alpha_num=1, alpha_shift=3)")
    assert describe(index, queue_cap_update(index, 4, 1, None)) == (
        "MODIFY queue_threshold port=4 queue=1 -> queue_cap(cap_bytes=4294967295)")


def test_bcn_change_keeps_the_other_parameters(index):
    current_entry = program_updates(index, parse_config(CONFIG))[29].entity.table_entry
    assert entry_match(index, current_entry) == {"port": 4, "queue": 0}
    current = bcn_of(*entry_action(index, current_entry))
    assert current == {"qeq_bytes": 24_000, "w": 2, "qsc_bytes": 0, "sample_bytes": 150_000,
                       "jitter_bytes": 20_000}
    update = bcn_update(index, 4, 0, current, parse_changes("bcn", ["qeq", "12800", "w", "4"]))
    assert describe(index, update) == (
        "MODIFY bcn_config port=4 queue=0 -> bcn_enable(qeq_pages=200, w=4, qsc_pages=0,"
        " sample_bytes=150000, jitter_bytes=20000)")
    off = bcn_update(index, 4, 0, current, parse_changes("bcn", ["enable", "off"]))
    assert describe(index, off) == "MODIFY bcn_config port=4 queue=0 -> bcn_disable()"
    # A disabled congestion point is enabled with the seed values for what is not given.
    on = bcn_update(index, 1, 0, bcn_of("bcn_disable", {}), {"qeq_bytes": 6400})
    assert describe(index, on) == (
        "MODIFY bcn_config port=1 queue=0 -> bcn_enable(qeq_pages=100, w=2, qsc_pages=0,"
        " sample_bytes=150000, jitter_bytes=20000)")


def test_pause_change_is_checked_against_the_current_values(index):
    current = pause_of("pause_enable", {"xoff_bytes": 140_800, "xon_bytes": 128_000,
                                        "quanta": 65535, "refresh_us": 1677})
    update = pause_update(index, 4, current, parse_changes("pause", ["xoff", "150000"]))
    assert describe(index, update) == (
        "MODIFY pause_config port=4 -> pause_enable(xoff_bytes=150000, xon_bytes=128000,"
        " quanta=65535, refresh_us=1677)")
    pfc = pause_update(index, 4, current, {"mode": "pfc"})
    assert describe(index, pfc).startswith("MODIFY pause_config port=4 -> pfc_enable(")
    off = pause_update(index, 4, current, {"mode": "off"})
    assert describe(index, off) == "MODIFY pause_config port=4 -> pause_disable()"
    with pytest.raises(ConfigError) as info:
        pause_update(index, 4, current, parse_changes("pause", ["xoff", "30000"]))
    assert info.value.errors == [
        "ports.4.pause.xon_bytes: 128000 is above ports.4.pause.xoff_bytes 30000"]
    with pytest.raises(ConfigError) as info:
        pause_update(index, 1, pause_of("pause_disable", {}),
                     {"xoff_bytes": 30000, "xon_bytes": 20000})
    assert info.value.errors == ["ports.1.pause.refresh_us: required (or give link_rate_bps to"
                                 " refresh at half the pause time)"]


@pytest.mark.parametrize(("kind", "words", "message"), [
    ("bcn", [], "bcn: give NAME VALUE pairs (names: enable, qeq, w, qsc, sample, jitter, fb_bits, fb_range, positive_to, qoff_max)"),
    ("bcn", ["qeq"], "bcn: give NAME VALUE pairs (names: enable, qeq, w, qsc, sample, jitter, fb_bits, fb_range, positive_to, qoff_max)"),
    ("bcn", ["depth", "3"], "bcn.depth: unknown (names: enable, qeq, w, qsc, sample, jitter, fb_bits, fb_range, positive_to, qoff_max)"),
    ("bcn", ["qeq", "24k"], "bcn.qeq_bytes: '24k' is not a whole number"),
    ("bcn", ["enable", "maybe"], "bcn.enable: 'maybe' is not on or off"),
    ("bcn", ["fb_bits", "six"], "bcn.fb_bits: 'six' is not a whole number"),
    ("pause", ["xon"], "pause: give NAME VALUE pairs (names: mode, xoff, xon, quanta, refresh)"),
])
def test_bad_live_change_words_are_named(kind, words, message):
    with pytest.raises(ConfigError) as info:
        parse_changes(kind, words)
    assert info.value.errors == [message]


def test_live_changes_name_what_the_congestion_point_sends():
    assert parse_changes("bcn", ["fb_bits", "6", "fb_range", "12800", "positive_to", "any"]) == {
        "fb_bits": 6, "fb_range_bytes": 12800, "positive_to": "any"}
    assert parse_changes("bcn", ["fb_bits", "off"]) == {"fb_bits": None}
    assert parse_changes("bcn", ["qoff_max", "24000"]) == {"qoff_max_bytes": 24000}
    assert parse_changes("bcn", ["qoff_max", "off"]) == {"qoff_max_bytes": None}
