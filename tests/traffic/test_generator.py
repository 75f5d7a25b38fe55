"""The paced generator on a veth pair between two namespaces: counts, sequence numbers,
bytes on the wire, sizes, DSCP, bursts, start time and kernel TX timestamps."""

import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from bufferlab.traffic import generate
from bufferlab.traffic.receive import Receiver
from bufferlab.traffic.records import apply_tx_stamps, latency_ns, read_tx_stamps_csv

pytestmark = pytest.mark.root

PORT = 5001

# Capture raw frames to a UDP port inside a namespace; prints "ready", then one hex line each.
_CAPTURE = """
import socket, struct, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.settimeout(5)
print("ready", flush=True)
got = 0
while got < count:
    frame, addr = s.recvfrom(65535)
    if addr[2] == socket.PACKET_OUTGOING or len(frame) < 42 or frame[23] != 17:
        continue
    if struct.unpack("!H", frame[36:38])[0] != port:
        continue
    print(frame.hex(), flush=True)
    got += 1
"""


def _receive(pair, send_kwargs, idle_timeout_s=1.0):
    with Receiver(PORT, netns=pair.rx.netns) as rx:
        rx.start(idle_timeout_s=idle_timeout_s)
        sent = generate.send(pair.rx.ip, PORT, netns=pair.tx.netns, **send_kwargs)
        got = rx.join()
    return sent, got


def test_count_sequence_size_and_dscp_arrive_intact(veth_pair):
    sent, got = _receive(veth_pair, dict(frame_size=512, rate_bps=50e6, count=2000, dscp=10,
                                         flow=7))
    assert sent.sent_frames == 2000
    assert sent.wire_bits == 2000 * 8 * (512 + 20)
    f = got.frames
    assert len(f) == 2000
    assert f["seq"].tolist() == list(range(2000))
    assert set(f["flow"].tolist()) == {7}
    assert set(f["size_bytes"].tolist()) == {512}
    assert set(f["dscp"].tolist()) == {10}
    assert got.foreign_frames == 0 and got.no_kernel_timestamp == 0
    # Kernel RX stamps come after the sender's header stamps on the same clock.
    assert (latency_ns(f) > 0).all()


def test_frames_on_the_wire_follow_the_data_header_contract(veth_pair):
    cap = subprocess.Popen(
        ["ip", "netns", "exec", veth_pair.rx.netns, sys.executable, "-c", _CAPTURE, str(PORT),
         "5"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert cap.stdout.readline().strip() == "ready"
        before = time.time_ns()
        sent = generate.send(veth_pair.rx.ip, PORT, frame_size=64, count=5, rate_bps=1e6, dscp=46,
                             ecn=1, flow=0x0102, first_seq=0x10, netns=veth_pair.tx.netns)
        frames = [bytes.fromhex(cap.stdout.readline().strip()) for _ in range(5)]
    finally:
        cap.kill()
        cap.wait()
    assert sent.sent_frames == 5
    for i, frame in enumerate(frames):
        # 64-byte frame incl. FCS = 60 bytes as Linux sees it.
        assert len(frame) == 60
        assert frame[12:14] == b"\x08\x00"
        assert frame[15] == (46 << 2) | 1
        total_len, = struct.unpack("!H", frame[16:18])
        assert total_len == 60 - 14
        sport, dport, udp_len, checksum = struct.unpack("!HHHH", frame[34:42])
        assert (dport, udp_len, checksum) == (PORT, 8 + 18, 0)
        magic, flow, seq, tx_ns = struct.unpack("!HHIQ", frame[42:58])
        assert (magic, flow, seq) == (0xB1AB, 0x0102, 0x10 + i)
        assert before <= tx_ns <= time.time_ns()
        assert frame[58:60] == b"\x00\x00"


def test_probe_sized_frames_to_port_47000_carry_a_zeroed_telemetry_block(veth_pair):
    cap = subprocess.Popen(
        ["ip", "netns", "exec", veth_pair.rx.netns, sys.executable, "-c", _CAPTURE,
         str(generate.PROBE_PORT), "2"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert cap.stdout.readline().strip() == "ready"
        generate.send(veth_pair.rx.ip, generate.PROBE_PORT,
                      frame_size=generate.MIN_PROBE_FRAME_BYTES, count=2, rate_bps=1e6,
                      netns=veth_pair.tx.netns)
        frames = [bytes.fromhex(cap.stdout.readline().strip()) for _ in range(2)]
    finally:
        cap.kill()
        cap.wait()
    for seq, frame in enumerate(frames):
        # 14 + 20 + 8 + 16 data header + 48 telemetry = 106 bytes without the FCS.
        assert len(frame) == 106
        assert struct.unpack("!HHI", frame[42:50]) == (0xB1AB, 0, seq)
        assert frame[58:106] == bytes(48)


def test_mixed_sizes_are_the_mix_and_deterministic_per_seed(veth_pair):
    mix = [(64, 7.0), (594, 4.0), (1518, 1.0)]
    _, first = _receive(veth_pair, dict(frame_mix=mix, rate_bps=100e6, count=600, seed=11))
    _, again = _receive(veth_pair, dict(frame_mix=mix, rate_bps=100e6, count=600, seed=11))
    sizes = first.frames["size_bytes"]
    assert len(sizes) == 600
    assert set(sizes.tolist()) == {64, 594, 1518}
    assert sizes.tolist() == again.frames["size_bytes"].tolist()
    # 7:4:1 over 600 frames: 350 small frames expected, binomial sd ~12.
    assert 300 < (sizes == 64).sum() < 400


def test_jumbo_frames_pass_a_9000_mtu_and_fail_clearly_on_1500(jumbo_veth_pair, veth_pair):
    sent, got = _receive(jumbo_veth_pair, dict(frame_size=9000, rate_bps=100e6, count=50))
    assert sent.sent_frames == 50
    assert got.frames["size_bytes"].tolist() == [9000] * 50
    with pytest.raises(OSError, match="Message too long"):
        generate.send(veth_pair.rx.ip, PORT, frame_size=9000, count=1, netns=veth_pair.tx.netns)


def test_duration_bounds_the_number_of_departures(veth_pair):
    # 64-byte frames at 6.72 Mbit/s leave every 100 us: 0.1 s holds departures 0..999.
    sent, got = _receive(veth_pair, dict(frame_size=64, rate_bps=6.72e6, duration_s=0.1))
    assert sent.sent_frames == 1000
    assert len(got.frames) == 1000


def test_bursts_and_bernoulli_arrivals_deliver_every_frame_in_order(veth_pair):
    sent, got = _receive(veth_pair, dict(frame_size=256, rate_bps=20e6, burst_frames=50,
                                         count=400))
    assert sent.sent_frames == 400
    assert got.frames["seq"].tolist() == list(range(400))
    sent, got = _receive(veth_pair, dict(frame_size=256, rate_bps=20e6, arrivals="bernoulli",
                                         link_bps=100e6, count=400, seed=3))
    assert sent.sent_frames == 400
    assert got.frames["seq"].tolist() == list(range(400))


def test_start_time_holds_the_first_departure(veth_pair):
    start = time.time_ns() + 300_000_000
    sent, got = _receive(veth_pair, dict(frame_size=64, rate_bps=1e6, count=3,
                                         start_realtime_ns=start))
    assert sent.start_realtime_ns == start
    assert (got.frames["tx_ns"] >= start).all()


def test_kernel_tx_timestamps_on_veth_bracket_the_send(veth_pair):
    sent, got = _receive(veth_pair, dict(frame_size=128, rate_bps=10e6, count=300,
                                         tx_timestamps=True, flow=3))
    stamps = sent.tx_stamps
    # Linux 6.13 added SCM_TS_OPT_ID; before it the generator falls back to the counter.
    release = tuple(int(x) for x in os.uname().release.split(".")[:2])
    assert sent.tx_stamp_ids == ("explicit" if release >= (6, 13) else "counter")
    assert len(stamps) == 300
    assert stamps["seq"].tolist() == list(range(300))
    header_tx = got.frames["tx_ns"].copy()
    assert apply_tx_stamps(got.frames, stamps) == 300
    assert (got.frames["tx_kernel"] == 1).all()
    # The kernel stamps after the header is written and before the peer receives it.
    assert (got.frames["tx_ns"] >= header_tx).all()
    assert (got.frames["tx_ns"] <= got.frames["rx_ns"]).all()


def test_realtime_sender_delivers_the_same_frames(veth_pair):
    sent, got = _receive(veth_pair, dict(frame_size=256, rate_bps=20e6, count=500,
                                         realtime_priority=10))
    assert sent.sent_frames == 500
    assert got.frames["seq"].tolist() == list(range(500))


def test_port_unreachable_replies_do_not_stop_a_run(veth_pair):
    # Nobody listens: the receiver's kernel answers with ICMP port unreachable, which the
    # sender's socket reports as failed sends; every frame still goes out exactly once.
    sent = generate.send(veth_pair.rx.ip, PORT + 77, frame_size=64, rate_bps=5e6, count=3000,
                         netns=veth_pair.tx.netns)
    assert sent.sent_frames == 3000
    assert sent.retries >= 1


def test_bad_parameters_are_refused_before_sending(veth_pair):
    with pytest.raises(ValueError, match="outside 64..9000"):
        generate.send(veth_pair.rx.ip, frame_size=63, count=1)
    with pytest.raises(ValueError, match="count or a duration"):
        generate.send(veth_pair.rx.ip, frame_size=64)
    with pytest.raises(ValueError, match="link_bps"):
        generate.send(veth_pair.rx.ip, count=1, rate_bps=1e6, arrivals="bernoulli")
    with pytest.raises(ValueError, match="dscp"):
        generate.send(veth_pair.rx.ip, count=1, dscp=64)
    with pytest.raises(OSError, match="outside 1..=99"):
        generate.send(veth_pair.rx.ip, count=1, realtime_priority=100, netns=veth_pair.tx.netns)
    with pytest.raises(OSError, match="network namespace"):
        generate.send(veth_pair.rx.ip, count=1, netns="blt-no-such-namespace")


def test_command_line_tools_together(veth_pair, tmp_path):
    records = tmp_path / "frames.csv"
    stamps = tmp_path / "tx.csv"
    recv = subprocess.Popen(
        [sys.executable, "-m", "bufferlab.traffic.receive", "--netns", veth_pair.rx.netns,
         "--port", str(PORT), "--idle-timeout-s", "3", "--csv", str(records),
         "--sent", "5=100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert recv.stderr.readline().startswith("bufferlab-recv: receiving on UDP port")
        gen = subprocess.run(
            [sys.executable, "-m", "bufferlab.traffic.generate", "--netns", veth_pair.tx.netns,
             "--dst", veth_pair.rx.ip, "--port", str(PORT), "--rate-bps", "10Mbit",
             "--frame-size", "256", "--count", "100", "--flow", "5", "--dscp", "8",
             "--tx-stamps-csv", str(stamps)],
            capture_output=True, text=True, check=True,
        )
        out, _ = recv.communicate(timeout=30)
    finally:
        recv.kill()
    figures = json.loads(gen.stdout)
    assert figures["sent_frames"] == 100 and figures["tx_stamped_frames"] == 100
    summary = json.loads(out)
    assert summary["total"]["received_frames"] == 100
    assert summary["flows"]["5"]["lost_frames"] == 0
    lines = records.read_text().splitlines()
    assert lines[0] == "flow,seq,size_bytes,dscp,tx_ns,tx_kernel,rx_ns,rx_kernel,latency_ns"
    assert len(lines) == 101 and lines[1].startswith("5,0,256,8,")
    assert np.array_equal(read_tx_stamps_csv(stamps)["seq"], np.arange(100))
