"""The tools' own latency on a bare veth pair (no device in between), needs root.

What the generator and receiver add to every latency they report: kernel TX stamp at the
sender's veth to kernel RX stamp at the peer (the "kernel" figures), and the sender's
user-space header stamp to the kernel RX stamp (the "header" figures, what a run without
TX stamps reports). Subtract these floors from latencies measured through a device.
Prints one JSON line, latencies in ns.
"""

import json
import os
import subprocess
import sys
import uuid

import numpy as np

from bufferlab.traffic.generate import send
from bufferlab.traffic.receive import Receiver
from bufferlab.traffic.records import apply_tx_stamps, latency_ns, latency_stats

FRAMES = 20_000
RATE_BPS = 20e6
FRAME_SIZE = 512
PORT = 5010


def ip(*args):
    """Run ``ip args``, failing on error."""
    subprocess.run(["ip", *args], check=True, capture_output=True)


def stats(lat):
    """The latency figures reported, ns."""
    s = latency_stats(lat)
    return {"min_ns": s.min_ns, "p50_ns": s.p50_ns, "p99_ns": s.p99_ns, "p999_ns": s.p999_ns,
            "max_ns": s.max_ns}


def main():
    """Set up the namespaces, measure, clean up, print the JSON line."""
    if os.geteuid() != 0:
        print(json.dumps({"bench": "traffic_latency_floor", "skipped": "needs root"}))
        return 0
    tag = uuid.uuid4().hex[:5]
    tx, rx = f"blf{tag}tx", f"blf{tag}rx"
    try:
        ip("netns", "add", tx)
        ip("netns", "add", rx)
        ip("-n", tx, "link", "add", "tx0", "type", "veth", "peer", "name", "rx0", "netns", rx)
        ip("-n", tx, "addr", "add", "10.204.0.1/24", "dev", "tx0")
        ip("-n", rx, "addr", "add", "10.204.0.2/24", "dev", "rx0")
        ip("-n", tx, "link", "set", "tx0", "up")
        ip("-n", rx, "link", "set", "rx0", "up")
        subprocess.run(["ip", "netns", "exec", tx, "ping", "-c1", "-W1", "10.204.0.2"],
                       check=True, capture_output=True)
        with Receiver(PORT, netns=rx) as r:
            r.start(idle_timeout_s=1.0)
            sent = send("10.204.0.2", PORT, frame_size=FRAME_SIZE, rate_bps=RATE_BPS,
                        count=FRAMES, netns=tx, tx_timestamps=True)
            got = r.join()
    finally:
        subprocess.run(["ip", "netns", "del", rx], capture_output=True)
        subprocess.run(["ip", "netns", "del", tx], capture_output=True)
    frames = got.frames
    header = latency_ns(frames)
    apply_tx_stamps(frames, sent.tx_stamps)
    kernel = latency_ns(frames)[frames["tx_kernel"] == 1]
    print(json.dumps({
        "bench": "traffic_latency_floor",
        "frames": int(len(frames)),
        "frame_size_bytes": FRAME_SIZE,
        "rate_bps": RATE_BPS,
        "kernel_tx_to_kernel_rx": stats(kernel),
        "header_tx_to_kernel_rx": stats(header),
        "kernel_stamped_fraction": float(np.mean(frames["tx_kernel"])),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
