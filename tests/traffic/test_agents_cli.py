"""`python3 -m bufferlab.traffic.agents` as a student runs it on a host: the data frames it
sends (the lab's destination MAC, the asked size, sequence numbers from 0) and, with
`--bcn`, the rate cut and RLT tag that a BCN frame from the switch side brings."""

import re
import subprocess
import sys
import threading
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers
from bufferlab.traffic.agents.listener import FrameListener
from bufferlab.traffic.generate import DEFAULT_DATA_PORT
from bufferlab.traffic.probe import open_packet_socket

CP = layers.make_cpid(1, 4, 0)
FRAME_BYTES = 500  # with the FCS, as --frame-size takes it
DATA_PORT = DEFAULT_DATA_PORT

#: How long the sender sends, s: the BCN must reach it before it stops, a few ms after its
#: first frames here but 0.5 s on a loaded CI machine (one stalled thread), so 10x that.
SEND_S = 5.0

pytestmark = pytest.mark.root


def _wait_for(condition, what, timeout_s=30.0):
    """Poll `condition` until true; fail naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"no {what} after {timeout_s} s"
        time.sleep(0.01)


def _data(frame):
    """(seq, had an RLT) of a data frame to the data port, else None."""
    bare, cpid = layers.strip_rlt(frame)
    if len(bare) < 50 or bare[36:38] != DATA_PORT.to_bytes(2, "big"):
        return None
    return int.from_bytes(bare[46:50], "big"), cpid, bare


def test_the_host_sender_sends_numbered_frames_and_obeys_bcn(link):
    seen = []
    lock = threading.Lock()

    def on_frame(frame, _rx_ns):
        with lock:
            seen.append(frame)

    def data_seen():
        with lock:
            return [d for d in map(_data, seen) if d is not None]

    switch = open_packet_socket("sw", link, receive=False)
    try:
        with FrameListener("sw", on_frame, link) as tap:
            sender = subprocess.Popen(
                ["ip", "netns", "exec", link, sys.executable, "-m", "bufferlab.traffic.agents",
                 "--dst", "10.0.1.3", "--dev", "ha", "--rate-bps", "2Mbit", "--bcn",
                 "--frame-size", str(FRAME_BYTES), "--duration-s", str(SEND_S)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                _wait_for(lambda: len(data_seen()) >= 5, "the sender's first frames")
                sampled = data_seen()[0][2]
                # Fb = -1000 pages: R = 2 Mbit/s · (1 − 2.6e-4 · 1000) = 1.48 Mbit/s.
                switch.send(bytes(layers.bcn_frame(sampled, 1, 4, 0, 0, 0, -1000)))
                out, err = sender.communicate(timeout=60)
            finally:
                if sender.poll() is None:
                    sender.kill()
            assert sender.returncode == 0, err
            sent = int(re.search(r"sent (\d+) frames of 500 bytes", out).group(1))
            # The listener reads on its own thread, which a loaded machine can hold back
            # past the sender's exit: wait until it has seen every frame sent.
            _wait_for(lambda: len(data_seen()) >= sent, f"all {sent} frames on the tap")
    finally:
        switch.close()
    assert "rate 1.480 Mbit/s" in out, out
    data = data_seen()
    assert tap.kernel_drops == 0
    assert [seq for seq, _, _ in data] == list(range(sent))
    for _, _, bare in data:
        ether = Ether(bare)
        assert ether.dst == "08:00:00:00:01:03"  # the lab's plan for 10.0.1.3
        assert len(bare) == FRAME_BYTES - 4
        assert ether[IP].dst == "10.0.1.3" and ether[UDP].dport == DATA_PORT
    tagged = [cpid for _, cpid, _ in data]
    assert tagged[0] is None and tagged[-1] == CP  # the RP tags frames once it regulates
