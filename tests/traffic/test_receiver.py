"""The receiver on a veth pair: kernel RX timestamps, classes, duplicates, reordering and
frames that are not bufferlab's."""

import contextlib
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from bufferlab.traffic import generate
from bufferlab.traffic.receive import Receiver
from bufferlab.traffic.records import latency_ns, summarize

pytestmark = pytest.mark.root

PORT = 5002


def test_classes_and_flows_are_kept_apart(veth_pair):
    with Receiver(PORT, netns=veth_pair.rx.netns) as rx:
        rx.start(idle_timeout_s=1.0)
        for flow, dscp in ((1, 0), (2, 10), (3, 46)):
            generate.send(veth_pair.rx.ip, PORT, frame_size=200, rate_bps=20e6, count=100,
                          flow=flow, dscp=dscp, netns=veth_pair.tx.netns)
        got = rx.join()
    f = got.frames
    for flow, dscp in ((1, 0), (2, 10), (3, 46)):
        sel = f[f["flow"] == flow]
        assert len(sel) == 100 and set(sel["dscp"].tolist()) == {dscp}
    total, flows = summarize(f, {1: 100, 2: 100, 3: 100}, interval_ns=10**9)
    assert (total.lost_frames, total.duplicate_frames, total.reordered_frames) == (0, 0, 0)
    assert total.latency.min_ns > 0
    assert sum(i.frames for i in total.throughput) == 300


def test_duplicates_and_reordering_are_seen(veth_pair):
    with Receiver(PORT, netns=veth_pair.rx.netns) as rx:
        rx.start(idle_timeout_s=1.0)
        send = dict(frame_size=64, rate_bps=5e6, flow=9, netns=veth_pair.tx.netns)
        generate.send(veth_pair.rx.ip, PORT, count=10, first_seq=10, **send)
        generate.send(veth_pair.rx.ip, PORT, count=10, first_seq=0, **send)
        generate.send(veth_pair.rx.ip, PORT, count=5, first_seq=15, **send)
        got = rx.join()
    _, flows = summarize(got.frames, {9: 20})
    s = flows[9]
    assert (s.received_frames, s.unique_frames, s.duplicate_frames) == (25, 20, 5)
    assert s.lost_frames == 0
    # 0..9 arrive after 19; the duplicates 15..18 arrive after 19 too (19 itself does not).
    assert s.reordered_frames == 14


def test_foreign_datagrams_are_counted_not_recorded(veth_pair):
    blast = (
        "import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "[s.sendto(b'not a bufferlab frame', (sys.argv[1], int(sys.argv[2]))) for _ in range(3)]"
    )
    with Receiver(PORT, netns=veth_pair.rx.netns) as rx:
        rx.start(idle_timeout_s=1.0)
        subprocess.run(["ip", "netns", "exec", veth_pair.tx.netns, sys.executable, "-c", blast,
                        veth_pair.rx.ip, str(PORT)], check=True)
        generate.send(veth_pair.rx.ip, PORT, count=2, netns=veth_pair.tx.netns)
        got = rx.join()
    assert got.foreign_frames == 3
    assert len(got.frames) == 2


def test_rx_timestamps_are_kernel_times_between_send_and_read(veth_pair):
    with Receiver(PORT, netns=veth_pair.rx.netns) as rx:
        rx.start(max_frames=50, idle_timeout_s=2.0)
        generate.send(veth_pair.rx.ip, PORT, count=50, rate_bps=1e6, frame_size=64,
                      netns=veth_pair.tx.netns)
        got = rx.join()
    assert got.no_kernel_timestamp == 0
    assert (got.frames["rx_kernel"] == 1).all()
    lat = latency_ns(got.frames)
    assert (lat > 0).all()
    # Arrival stamps follow send order on a single veth.
    assert np.all(np.diff(got.frames["rx_ns"].astype(np.int64)) > 0)


def test_port_in_use_and_bad_namespace_are_clear_errors(veth_pair):
    with Receiver(PORT, netns=veth_pair.rx.netns) as held:
        with pytest.raises(OSError, match="bind 0.0.0.0:5002"):
            Receiver(PORT, netns=veth_pair.rx.netns)
    # Leaving the block closed the socket: the port is free again at once.
    Receiver(PORT, netns=veth_pair.rx.netns).close()
    with pytest.raises(RuntimeError, match="closed"):
        held.start()
    with pytest.raises(OSError, match="blt-missing"):
        Receiver(PORT, netns="blt-missing")
    rx = Receiver(0, netns=veth_pair.rx.netns)
    assert rx.port != 0
    with pytest.raises(RuntimeError, match="not running"):
        rx.stop()


@contextlib.contextmanager
def ctrl_c_not_ignored():
    """Children started inside get Ctrl-C's default action, as at a terminal, even when
    this process was started with SIGINT ignored (a shell's background job is: Python then
    never installs its KeyboardInterrupt handler, and the receiver would wait out its run)."""
    was = signal.getsignal(signal.SIGINT)
    if was == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, was)


def test_ctrl_c_ends_the_command_line_receiver_with_its_summary(veth_pair):
    with ctrl_c_not_ignored():
        recv = subprocess.Popen(
            [sys.executable, "-m", "bufferlab.traffic.receive", "--netns",
             veth_pair.rx.netns, "--port", str(PORT), "--duration-s", "600"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
    try:
        assert recv.stderr.readline().startswith("bufferlab-recv: receiving on UDP port")
        generate.send(veth_pair.rx.ip, PORT, count=20, rate_bps=1e6, flow=4,
                      netns=veth_pair.tx.netns)
        recv.send_signal(signal.SIGINT)
        out, _ = recv.communicate(timeout=30)
    finally:
        recv.kill()
    assert recv.returncode == 0
    summary = json.loads(out)
    assert summary["flows"]["4"]["received_frames"] == 20


def test_a_namespace_given_as_a_process_path_like_a_mininet_host(veth_pair):
    # Mininet hosts are processes in unnamed namespaces: /proc/<pid>/ns/net names them.
    holder = subprocess.Popen(["ip", "netns", "exec", veth_pair.rx.netns, "sleep", "60"])
    try:
        path = f"/proc/{holder.pid}/ns/net"
        # `ip netns exec` enters the namespace just after the fork: wait until it has.
        target = os.stat(f"/run/netns/{veth_pair.rx.netns}").st_ino
        while os.stat(path).st_ino != target:
            assert holder.poll() is None
        with Receiver(PORT, netns=path) as rx:
            rx.start(max_frames=7, idle_timeout_s=2.0)
            generate.send(veth_pair.rx.ip, PORT, count=10, rate_bps=1e6, netns=veth_pair.tx.netns)
            got = rx.join()
    finally:
        holder.kill()
        holder.wait()
    # max_frames is exact: the other three stay queued for whoever reads next.
    assert got.frames["seq"].tolist() == list(range(7))


def test_command_line_receiver_joins_tx_stamps_and_survives_a_bad_stamps_file(veth_pair,
                                                                             tmp_path):
    stamps = tmp_path / "tx.csv"
    # The receiver reads the stamps file when its run ends: 2 s after the last frame, long
    # after the generator has written the file.
    recv = subprocess.Popen(
        [sys.executable, "-m", "bufferlab.traffic.receive", "--netns", veth_pair.rx.netns,
         "--port", str(PORT), "--idle-timeout-s", "2",
         "--csv", str(tmp_path / "frames.csv"), "--tx-stamps-csv", str(stamps),
         "--tx-stamps-csv", str(tmp_path / "missing.csv")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert recv.stderr.readline().startswith("bufferlab-recv: receiving on UDP port")
        subprocess.run(
            [sys.executable, "-m", "bufferlab.traffic.generate", "--netns", veth_pair.tx.netns,
             "--dst", veth_pair.rx.ip, "--port", str(PORT), "--count", "30", "--flow", "2",
             "--tx-stamps-csv", str(stamps)],
            check=True, capture_output=True,
        )
        out, err = recv.communicate(timeout=60)
    finally:
        recv.kill()
    # The missing file is reported; the frames and the other file's stamps are kept.
    assert recv.returncode == 1
    assert "missing.csv" in err
    summary = json.loads(out)
    assert summary["kernel_tx_stamped_frames"] == 30
    lines = (tmp_path / "frames.csv").read_text().splitlines()
    assert len(lines) == 31 and all(line.split(",")[5] == "1" for line in lines[1:])
