"""Real p4runtime-shell 0.0.6 drives the server: pipeline push, table insert and read back,
multicast group, counter read, PacketOut and PacketIn."""

import json
import subprocess
import sys
import threading
from pathlib import Path

from bufferlab.switch.p4runtime import target as tgt

SHELL_CLIENT = Path(__file__).with_name("shell_client.py")


def test_p4runtime_shell_session(server, target, helpers, tmp_path):
    p4info_path = tmp_path / "tiny.p4.p4info.txtpb"
    p4info_path.write_text(helpers.P4INFO_TEXT)
    json_path = tmp_path / "tiny.json"
    json_path.write_text(helpers.DEVICE_JSON)
    process = subprocess.Popen(
        [sys.executable, str(SHELL_CLIENT), f"127.0.0.1:{server.port}", str(p4info_path),
         str(json_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # A hung client must fail the test, not block it: kill it after a generous bound.
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    try:
        line = process.stdout.readline()
        assert line, process.stderr.read()
        inserted = json.loads(line)
        assert target.loaded == [helpers.DEVICE_JSON]
        key = (tgt.MatchParam("exact", b"\x00\x00\x00\x00\x00\x01"),)
        assert target.tables["MyIngress.l2_fwd"][(key, 0)].action == tgt.ActionCall(
            "MyIngress.set_port", (b"\x00\x03",))
        assert inserted["entries"] == [{"mac": "01", "action_id": 16777218, "port": "03"}]
        assert inserted["acl_priorities"] == [7]
        assert inserted["groups"] == [[1, 2]]
        assert target.mc == {1: (tgt.Replica(1, 0), tgt.Replica(2, 0))}

        target.counters[("MyIngress.port_counter", 2)] = tgt.CounterValue(5, 640)
        process.stdin.write("go\n")
        process.stdin.flush()
        counter = json.loads(process.stdout.readline())
        assert counter == {"step": "counter", "cells": [[2, 5, 640]]}

        assert json.loads(process.stdout.readline())["step"] == "packet_out_sent"
        # egress_port 3 (9 bits), mcast_grp 258 (16 bits), 7 pad bits, then the payload.
        arrived = threading.Event()
        while not target.packets_out and process.poll() is None:
            arrived.wait(0.01)
        assert target.packets_out == [b"\x01\x80\x81\x00from-shell"]
        target.packet_in_handler(b"\x02\x80to-shell")  # ingress_port 5
        packet_in = json.loads(process.stdout.readline())
        assert packet_in == {"step": "packet_in", "payload": b"to-shell".hex(),
                             "metadata": [[1, "05"], [2, "00"]]}
        assert process.wait(timeout=60) == 0, process.stderr.read()
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
