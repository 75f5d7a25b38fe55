"""buffer_switch.p4 ECN marking: an ECT frame that finds more than K bytes queued ahead of
it leaves with CE (IPv4 with its checksum updated, IPv6 in its traffic class) and is
counted per (port, queue); not-ECT and already-CE frames pass unchanged; no entry means
no marking; K changes live."""

import pytest
from buffer_switch_helpers import H1, H3, PROGRAM, SLOW_BPS, on_port, outputs
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from test_controller_config import applied

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.config import ConfigError, parse_config
from bufferlab.controller.p4info import P4InfoIndex

HOLD_NS = 1_000_000_000
SLOT_3_0 = 3 * 8  # QUEUE_SLOT(port 3, queue 0)
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3


def frame(ecn: int, size: int = 100, seq: int = 0, dscp: int = 10) -> bytes:
    """An IPv4/UDP frame of `size` bytes with `ecn` in the TOS byte's low two bits."""
    head = Ether(src=H1, dst=H3) / IP(src="10.0.1.1", dst="10.0.1.3", tos=(dscp << 2) | ecn) / UDP(
        sport=1234, dport=5000)
    return bytes(head / Raw(seq.to_bytes(4, "big") + bytes(size - len(head) - 4)))


def frame6(ecn: int, size: int = 100) -> bytes:
    """An IPv6/UDP frame of `size` bytes with `ecn` in the traffic class's low two bits."""
    head = Ether(src=H1, dst=H3) / IPv6(src="fd00::1", dst="fd00::3", tc=(10 << 2) | ecn) / UDP(
        sport=1234, dport=5000)
    return bytes(head / Raw(bytes(size - len(head))))


def held(switch, k_bytes: int | None) -> None:
    """Port 3 held (nothing drains), so each frame finds exactly the bytes sent before it;
    K on (3, 0) if given."""
    if k_bytes is not None:
        switch.table_add("ecn_threshold", {"port": 3, "queue": 0}, "ecn_mark_above",
                         {"k_bytes": k_bytes})
    switch.configure_port(3, rate_bps=SLOW_BPS, num_queues=1)
    switch.pause(3, 0xFF, HOLD_NS)


def sent_out(switch, frames: list[bytes]) -> list[Ether]:
    return held_round(switch, frames, 1000)[0]


def held_round(switch, frames: list[bytes], t0: int) -> tuple[list[Ether], int]:
    """Sends `frames` into port 1 from `t0` while port 3 is held, then lets port 3 go;
    what left by port 3 and when the last of it arrived, ns."""
    for i, f in enumerate(frames):
        switch.send(1, f, t0 + i)
    switch.drain()
    out = outputs(switch)
    return on_port(out, 3), max(t for _p, _f, t in out)


def test_ect_frames_above_k_leave_with_ce_and_a_valid_checksum(switch):
    held(switch, k_bytes=250)
    # Queued ahead on arrival: 0, 100, 200, 300, 400, 500, 600 bytes.
    out = sent_out(switch, [frame(ECT0, seq=i) for i in range(3)]
                   + [frame(ECT0, seq=3), frame(NOT_ECT, seq=4), frame(ECT1, seq=5),
                      frame(CE, seq=6)])
    assert [f[IP].tos & 3 for f in out] == [ECT0, ECT0, ECT0, CE, NOT_ECT, CE, CE]
    assert all(f[IP].tos >> 2 == 10 for f in out), "DSCP untouched"
    for f in out:
        sent_checksum = f[IP].chksum
        del f[IP].chksum
        assert IP(bytes(f[IP]))[IP].chksum == sent_checksum
    # Marked: the ECT(0) and the ECT(1) frame above K, 100 bytes each.
    assert switch.counter_read("ecn_marked", SLOT_3_0) == (2, 200)


def test_ipv6_frames_are_marked_in_their_traffic_class(switch):
    held(switch, k_bytes=0)
    out = sent_out(switch, [frame6(ECT0), frame6(ECT0), frame6(NOT_ECT)])
    assert [f[IPv6].tc & 3 for f in out] == [ECT0, CE, NOT_ECT]
    assert switch.counter_read("ecn_marked", SLOT_3_0) == (1, 100)


def test_without_an_entry_nothing_is_marked(switch):
    held(switch, k_bytes=None)
    out = sent_out(switch, [frame(ECT0, seq=i) for i in range(5)])
    assert [f[IP].tos & 3 for f in out] == [ECT0] * 5
    assert switch.counter_read("ecn_marked", SLOT_3_0) == (0, 0)


def test_k_changes_live(switch):
    held(switch, k_bytes=0)
    handle = switch.table_find("ecn_threshold", {"port": 3, "queue": 0})
    switch.table_modify("ecn_threshold", handle, "ecn_mark_above", {"k_bytes": 150})
    out = sent_out(switch, [frame(ECT0, seq=i) for i in range(4)])
    assert [f[IP].tos & 3 for f in out] == [ECT0, ECT0, CE, CE]


def test_the_controller_sets_k_from_the_config_and_changes_it_live(program_json):
    index = P4InfoIndex(compile_p4(PROGRAM)[1])
    config = parse_config({
        "switch_id": 1, "pool_bytes": 100_000, "ecn_k_bytes": 250,
        "ports": {"1": {"ecn_k_bytes": None}, "3": {}},
        "forwarding": {"l2": [{"mac": H3, "port": 3}, {"mac": H1, "port": 1}]}})
    assert (config.ecn_k_bytes, config.ports[3].ecn_k_bytes, config.ports[1].ecn_k_bytes) == (
        250, 250, None)
    with applied(program_json, index, config) as (engine, switch):
        held(engine, k_bytes=None)
        out, t = held_round(engine, [frame(ECT0, seq=i) for i in range(4)], 1000)
        assert [f[IP].tos & 3 for f in out] == [ECT0, ECT0, ECT0, CE]
        switch.set_ecn_k(3, 0, None)
        engine.pause(3, 0xFF, HOLD_NS)
        out, t = held_round(engine, [frame(ECT0, seq=i) for i in range(4)], t + 1)
        assert [f[IP].tos & 3 for f in out] == [ECT0] * 4
        switch.set_ecn_k(3, 0, 0)
        engine.pause(3, 0xFF, HOLD_NS)
        out, _t = held_round(engine, [frame(ECT0, seq=i) for i in range(2)], t + 1)
        assert [f[IP].tos & 3 for f in out] == [ECT0, CE]


def test_a_bad_k_names_the_key():
    with pytest.raises(ConfigError, match=r"ports\.3\.ecn_k_bytes: must be a whole number"):
        parse_config({"switch_id": 1, "pool_bytes": 1000, "ports": {"3": {"ecn_k_bytes": "1k"}}})
    with pytest.raises(ConfigError, match=r"ecn_k_bytes: -1 is below 0"):
        parse_config({"switch_id": 1, "pool_bytes": 1000, "ecn_k_bytes": -1, "ports": {"3": {}}})
