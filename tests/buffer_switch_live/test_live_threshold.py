"""buffer_switch.p4 on a live bufferlab-switch: the controller configures a small pool and a low
threshold on the receiver's port, a burst from two senders is cut to what the threshold
admits and port C's drop counter accounts for every missing frame; a live threshold change
(no restart) lets the same burst through whole, and the drop counter stays where it was."""

from __future__ import annotations

import json
import os

import pytest
from buffer_live_lab import (
    PORT_A,
    PORT_B,
    PORT_C,
    SWITCH_FRAME_BYTES,
    BufferLab,
    BurstResult,
    live,
)

from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.config import parse_config, port_threshold

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for namespaces and veth pairs"),
]

#: Frames each sender puts in one burst.
FRAMES_PER_SENDER = 20
#: The program's shared pool, bytes: holds both bursts whole (40 × 996 B = 39,840 B).
POOL_BYTES = 48_000
#: Port C's low share, percent of the pool: 4,800 B, i.e. four 996-byte frames.
LOW_PERCENT = 10
#: Frames of one burst that always fit under the low threshold (the queue starts empty).
LOW_FRAMES = POOL_BYTES * LOW_PERCENT // 100 // SWITCH_FRAME_BYTES


def config_doc(threshold_c: str) -> dict:
    """A config for the three hosts: L2 entries, the pool and port C's threshold."""
    return {
        "switch_id": 1, "pool_bytes": POOL_BYTES,
        "ports": {str(PORT_A): {}, str(PORT_B): {}, str(PORT_C): {"threshold": threshold_c}},
        "forwarding": {"l2": [{"mac": live.host_mac(n), "port": n}
                              for n in (PORT_A, PORT_B, PORT_C)]},
    }


def check_sequences(result: BurstResult, first_seq: int) -> None:
    """C got each frame at most once, only frames that were sent, and each flow in order."""
    assert len(set(result.received)) == len(result.received)
    for flow in result.sent:
        seqs = [seq for f, seq in result.received if f == flow]
        assert seqs == sorted(seqs)
        assert all(first_seq <= seq < first_seq + result.sent[flow] for seq in seqs)
    assert {f for f, _ in result.received} <= set(result.sent)


def check_drained(lab: BufferLab) -> None:
    """Every admitted frame left: the program's occupancy registers are back to 0."""
    assert lab.register("pool_occupancy", 0) == 0
    assert lab.register("port_occupancy", PORT_C) == 0
    assert lab.register("queue_occupancy", PORT_C * 8) == 0


def test_ctl_threshold_cuts_a_burst_and_a_live_change_lets_it_through(lab: BufferLab):
    config = lab.work_dir / "s1.json"
    config.write_text(json.dumps(config_doc(f"{LOW_PERCENT}%")))
    applied = lab.ctl("--p4info", str(lab.build.p4info_path), "--json", str(lab.build.json_path),
                      "apply", str(config))
    assert (applied.returncode, applied.stderr) == (0, ""), lab.log()
    # 8 defaults, 5 PRE entries, 3 L2 entries, 5 parameter entries for each of the 3 ports.
    assert applied.stdout == (f"applied {config} to {lab.address} (device 0): pipeline"
                              " buffer_switch.json and 31 updates\n")
    total = 2 * FRAMES_PER_SENDER

    # Low threshold: the burst overfills port C's share; what is missing was tail-dropped.
    cut = lab.burst(FRAMES_PER_SENDER, first_seq=0)
    assert cut.sent == {1: FRAMES_PER_SENDER, 2: FRAMES_PER_SENDER}
    check_sequences(cut, 0)
    dropped, dropped_bytes = lab.counter("port_drops", PORT_C)
    received = len(cut.received)
    assert LOW_FRAMES <= received < total, lab.log()
    assert received + dropped == total, (received, dropped, lab.log())
    assert sum(len(seqs) for seqs in cut.missing(0).values()) == dropped
    assert dropped_bytes == dropped * SWITCH_FRAME_BYTES
    assert lab.counter("queue_drops", PORT_C * 8) == (dropped, dropped_bytes)
    assert lab.counter("port_drops", PORT_A) == lab.counter("port_drops", PORT_B) == (0, 0)
    check_drained(lab)
    read = lab.ctl("read", "counter", "port_drops", str(PORT_C))
    assert (read.returncode, read.stdout) == (
        0, f"port_drops[{PORT_C}]: {dropped} packets, {dropped_bytes} bytes\n")

    # Live change, same switch process: the whole pool is port C's now.
    changed = lab.ctl("set", str(PORT_C), "threshold", "100%")
    assert (changed.returncode, changed.stderr) == (0, "")
    assert changed.stdout == f"buffer_threshold port={PORT_C} -> static_threshold(percent=100)\n"
    whole = lab.burst(FRAMES_PER_SENDER, first_seq=FRAMES_PER_SENDER)
    assert whole.sent == {1: FRAMES_PER_SENDER, 2: FRAMES_PER_SENDER}
    check_sequences(whole, FRAMES_PER_SENDER)
    assert whole.missing(FRAMES_PER_SENDER) == {1: set(), 2: set()}, lab.log()
    assert len(whole.received) == total
    assert lab.counter("port_drops", PORT_C) == (dropped, dropped_bytes)
    check_drained(lab)
    assert lab.switch is not None and lab.switch.process.poll() is None  # never restarted


def test_in_process_controller_lowers_the_threshold_live(lab: BufferLab):
    config = parse_config(config_doc("100%"))
    with SwitchConnection(lab.address, 0, (0, 1)) as connection:
        assert connection.connect()
        switch = BufferSwitch(connection, lab.build.index)
        assert switch.apply(config, lab.build.json_path.read_bytes()) == 31  # as counted above
        total = 2 * FRAMES_PER_SENDER

        whole = lab.burst(FRAMES_PER_SENDER, first_seq=0)
        check_sequences(whole, 0)
        assert len(whole.received) == total, lab.log()
        assert lab.counter("port_drops", PORT_C) == (0, 0)

        switch.set_threshold(PORT_C, port_threshold("threshold", f"{LOW_PERCENT}%",
                                                    f"ports.{PORT_C}"))
        cut = lab.burst(FRAMES_PER_SENDER, first_seq=FRAMES_PER_SENDER)
        check_sequences(cut, FRAMES_PER_SENDER)
        dropped, dropped_bytes = lab.counter("port_drops", PORT_C)
        assert LOW_FRAMES <= len(cut.received) < total, lab.log()
        assert len(cut.received) + dropped == total
        assert dropped_bytes == dropped * SWITCH_FRAME_BYTES
        check_drained(lab)


def test_a_failing_test_leaves_no_switch_and_no_namespace(build, tmp_path):
    lab = BufferLab(build, tmp_path)
    with pytest.raises(RuntimeError, match="a failing step"):
        with lab:
            assert lab.switch is not None and lab.switch.process.poll() is None
            raise RuntimeError("a failing step")
    assert lab.switch.process.poll() is not None
    assert lab.hosts.leftovers() == []
