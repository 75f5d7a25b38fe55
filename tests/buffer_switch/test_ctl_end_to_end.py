"""bufferlab-ctl end to end: the real P4Runtime server in front of the engine; the controller
applies a config, changes a threshold live, and the change shows on traffic, in the counters
and registers it reads back, and in the tables it dumps."""

import json

import pytest
from buffer_switch_helpers import PROGRAM, SLOW_BPS, on_port, outputs, seq_of, udp_frame
from google.protobuf import text_format
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.cli import EXIT_USAGE, main
from bufferlab.controller.client import SwitchConnection
from bufferlab.switch import Engine
from bufferlab.switch.p4runtime import serve
from bufferlab.switch.target import EngineTarget

POOL_BYTES = 10_240
H1, H3 = "08:00:00:00:01:01", "08:00:00:00:01:03"


@pytest.fixture
def running(tmp_path):
    """A P4Runtime server on a free port with an engine behind it, and the build files."""
    document, p4info = compile_p4(PROGRAM)
    (tmp_path / "buffer_switch.json").write_text(json.dumps(document))
    (tmp_path / "buffer_switch.p4.p4info.txtpb").write_text(text_format.MessageToString(p4info))
    # The engine starts with the program too; apply's SetForwardingPipelineConfig replaces it.
    json_text = json.dumps(document)
    engine = Engine(json_text, seed=1, pool_bytes=POOL_BYTES)
    server = serve(EngineTarget(engine, json_text), 0, "127.0.0.1:0")
    yield engine, f"127.0.0.1:{server.port}", tmp_path
    server.stop(0)


def ctl(capsys, address, *argv):
    status = main(["--grpc-addr", address, *argv])
    out, err = capsys.readouterr()
    return status, out, err


def ect_frame(seq: int) -> bytes:
    """A 1024-byte IPv4/UDP frame from H1 to H3 marked ECT(0), `seq` in its payload."""
    head = Ether(src=H1, dst=H3) / IP(src="10.0.1.1", dst="10.0.1.3", tos=2) / UDP(
        sport=1234, dport=5000)
    return bytes(head / Raw(seq.to_bytes(4, "big") + bytes(1024 - len(head) - 4)))


def send_1024s(engine, seqs, t0):
    for seq in seqs:
        engine.send(1, udp_frame(H1, H3, 1024, seq=seq), t0 + seq)


def test_apply_then_a_live_threshold_change_shows_on_traffic(capsys, running):
    engine, address, build = running
    config = build / "s1.json"
    config.write_text(json.dumps({
        "switch_id": 1, "pool_bytes": POOL_BYTES,
        "ports": {"1": {}, "2": {}, "3": {"threshold": "50%"}},
        "forwarding": {"l2": [{"mac": H1, "port": 1}, {"mac": H3, "port": 3}]}}))
    status, out, err = ctl(capsys, address, "--p4info", str(build / "buffer_switch.p4.p4info.txtpb"),
                           "--json", str(build / "buffer_switch.json"), "apply", str(config))
    assert (status, err) == (0, "")
    assert out == (f"applied {config} to {address} (device 0): pipeline buffer_switch.json"
                   " and 30 updates\n")  # 8 defaults, 5 PRE, 2 L2, 5 × 3 per port

    engine.configure_port(3, rate_bps=SLOW_BPS)
    engine.pause(3, 0xFF, 10**9)  # hold port 3: the occupancy is exactly what was admitted
    send_1024s(engine, range(8), 1000)  # 50 % of 10,240 B: five frames
    status, out, _err = ctl(capsys, address, "read", "register", "port_occupancy", "3")
    assert (status, out) == (0, "port_occupancy[3] = 5120\n")

    status, out, err = ctl(capsys, address, "set", "3", "threshold", "100%")
    assert (status, err) == (0, "")
    assert out == "buffer_threshold port=3 -> static_threshold(percent=100)\n"
    send_1024s(engine, range(8, 16), 2000)  # five more fit now
    status, out, _err = ctl(capsys, address, "read", "counter", "port_drops", "3")
    assert (status, out) == (0, "port_drops[3]: 6 packets, 6144 bytes\n")
    status, out, _err = ctl(capsys, address, "read", "counter", "port_drops")
    assert out == "port_drops[3]: 6 packets, 6144 bytes\n"  # only the non-zero cells
    engine.drain()
    assert [seq_of(f) for f in on_port(outputs(engine), 3)] == [*range(5), *range(8, 13)]


def test_live_bcn_and_pause_changes_are_checked_and_dumped(capsys, running):
    engine, address, build = running
    config = build / "s1.json"
    config.write_text(json.dumps({
        "switch_id": 1, "pool_bytes": POOL_BYTES, "ports": {"1": {}, "3": {}},
        "pause": {"xoff_bytes": 8000, "xon_bytes": 6000, "refresh_us": 500}}))
    pipeline = ["--p4info", str(build / "buffer_switch.p4.p4info.txtpb"),
                "--json", str(build / "buffer_switch.json")]
    assert ctl(capsys, address, *pipeline, "apply", str(config))[0] == 0

    status, out, err = ctl(capsys, address, "set", "3", "bcn", "qeq", "12800", "w", "4")
    assert (status, err) == (0, "")
    assert out == ("bcn_config port=3 queue=0 -> bcn_enable(qeq_pages=200, w=4, qsc_pages=0,"
                   " sample_bytes=150000, jitter_bytes=20000)\n")
    status, _out, err = ctl(capsys, address, "set", "3", "pause", "xoff", "5000")
    assert status == EXIT_USAGE
    assert err == "bufferlab-ctl: error: ports.3.pause.xon_bytes: 6000 is above ports.3.pause.xoff_bytes 5000\n"
    status, _out, err = ctl(capsys, address, "set", "7", "threshold", "10%")
    assert status == EXIT_USAGE
    assert err == ("bufferlab-ctl: error: ports.7: port 7 has no buffer_threshold entry (add the"
                   " port to the config's ports and apply it)\n")
    status, out, _err = ctl(capsys, address, "set", "3", "alpha", "3/4")
    assert (status, out) == (0, "buffer_threshold port=3 -> dynamic_threshold(alpha_num=3,"
                                " alpha_shift=2)\n")
    status, out, _err = ctl(capsys, address, "set", "3", "queue-cap", "0", "2048")
    assert (status, out) == (0, "queue_threshold port=3 queue=0 -> queue_cap(cap_bytes=2048)\n")
    assert engine.table_entries("queue_threshold")[1]["data"] == [2048]
    status, out, _err = ctl(capsys, address, "set", "3", "pause", "mode", "pfc", "xon", "4000")
    assert status == 0
    status, out, _err = ctl(capsys, address, "dump", "pause_config")
    assert out == (
        "pause_config port=1 -> pause_enable(xoff_bytes=8000, xon_bytes=6000, quanta=65535,"
        " refresh_us=500)\n"
        "pause_config port=3 -> pfc_enable(xoff_bytes=8000, xon_bytes=4000, quanta=65535,"
        " refresh_us=500)\n"
        "pause_config (default) -> pause_enable(xoff_bytes=8000, xon_bytes=6000, quanta=65535,"
        " refresh_us=500)\n")
    assert engine.table_default("bcn_config") == ("bcn_disable", [])


def test_a_live_ecn_k_change_marks_traffic_and_none_stops_it(capsys, running):
    engine, address, build = running
    config = build / "s1.json"
    config.write_text(json.dumps({
        "switch_id": 1, "pool_bytes": POOL_BYTES, "ports": {"1": {}, "3": {}},
        "forwarding": {"l2": [{"mac": H1, "port": 1}, {"mac": H3, "port": 3}]}}))
    pipeline = ["--p4info", str(build / "buffer_switch.p4.p4info.txtpb"),
                "--json", str(build / "buffer_switch.json")]
    assert ctl(capsys, address, *pipeline, "apply", str(config))[0] == 0
    status, out, err = ctl(capsys, address, "set", "3", "ecn-k", "0", "1500")
    assert (status, err) == (0, "")
    assert out == "ecn_threshold port=3 queue=0 -> ecn_mark_above(k_bytes=1500)\n"

    def ect_round() -> list[int]:
        """Four 1024-byte ECT(0) frames into port 3 held for a second: the ECN field each
        left with."""
        engine.configure_port(3, rate_bps=SLOW_BPS)
        t0 = engine.now() + 1000
        engine.pause(3, 0xFF, 10**9)
        for seq in range(4):
            engine.send(1, ect_frame(seq), t0 + seq)
        engine.drain()
        return [f[IP].tos & 3 for f in on_port(outputs(engine), 3)]

    # Each frame finds the ones before it: 0, 1024, 2048, 3072 bytes; above 1500, the last two.
    assert ect_round() == [2, 2, 3, 3]
    status, out, _err = ctl(capsys, address, "read", "counter", "ecn_marked", "24")
    assert (status, out) == (0, "ecn_marked[24]: 2 packets, 2048 bytes\n")
    status, out, _err = ctl(capsys, address, "set", "3", "ecn-k", "0", "none")
    assert (status, out) == (0, "ecn_threshold port=3 queue=0 -> ecn_off()\n")
    assert ect_round() == [2, 2, 2, 2]
    status, _out, err = ctl(capsys, address, "set", "2", "ecn-k", "0", "100")
    assert status == EXIT_USAGE
    assert err == ("bufferlab-ctl: error: ports.2: port 2 queue 0 has no ecn_threshold entry (add"
                   " the port to the config's ports and apply it)\n")


def test_commands_on_a_switch_without_a_pipeline_say_so(capsys, running):
    _engine, address, _build = running
    status, out, err = ctl(capsys, address, "dump", "l2_forward")
    assert (status, out) == (EXIT_USAGE, "")
    assert err == f"bufferlab-ctl: error: the switch at {address} has no pipeline: run apply first\n"


def test_a_backup_controller_may_read_but_not_write(capsys, running):
    _engine, address, build = running
    config = build / "s1.json"
    config.write_text(json.dumps({"switch_id": 1, "pool_bytes": POOL_BYTES, "ports": {"1": {}}}))
    pipeline = ["--p4info", str(build / "buffer_switch.p4.p4info.txtpb"),
                "--json", str(build / "buffer_switch.json")]
    with SwitchConnection(address, 0, (0, 9)) as primary:
        assert primary.connect()
        status, out, err = ctl(capsys, address, *pipeline, "apply", str(config))
        assert (status, out) == (EXIT_USAGE, "")
        assert err == (f"bufferlab-ctl: error: election id 0,1 is not primary on {address}:"
                       " another controller has a higher one\n")
        status, out, _err = ctl(capsys, address, "--election-id", "0,10", *pipeline,
                                "apply", str(config))
        assert status == 0
        status, out, _err = ctl(capsys, address, "dump", "buffer_threshold")  # as a backup
        assert (status, out) == (0, "buffer_threshold port=1 -> static_threshold(percent=100)\n"
                                    "buffer_threshold (default) -> static_threshold(percent=100)\n")
