"""Generator rate accuracy on a veth pair between two namespaces (needs root).

For each (rate, frame size, scheduling): send for a fixed time and report the rate the
sender achieved (its own send times) and the rate the receiver saw (kernel RX
timestamps), both in line bit/s (frame incl. FCS + 20 bytes), as relative errors against
the target in %, plus the sender's worst lateness behind schedule and the frames lost.
Then the most frames/s the sender reaches back-to-back (no pacing) at 64 bytes.
Prints one JSON line.
"""

import json
import os
import subprocess
import sys
import uuid

from bufferlab.traffic.generate import send
from bufferlab.traffic.receive import Receiver

CASES = [  # (target line bit/s, frame size incl. FCS, SCHED_FIFO priority or None)
    (10e6, 64, None), (10e6, 1518, None), (100e6, 64, None), (100e6, 1518, None),
    (500e6, 1518, None), (1e9, 1518, None), (100e6, 64, 10), (1e9, 1518, 10),
]
BACK_TO_BACK_FRAMES = 200_000
DURATION_S = 2.0
PORT = 5009


def ip(*args):
    """Run ``ip args``, failing on error."""
    subprocess.run(["ip", *args], check=True, capture_output=True)


def rx_rate_bps(frames):
    """Line bit/s between first and last arrival (n frames span n - 1 gaps)."""
    if len(frames) < 2:
        return 0.0
    span = int(frames["rx_ns"].max()) - int(frames["rx_ns"].min())
    bits = ((frames["size_bytes"].astype(float) + 20) * 8).sum()
    return (bits - (frames["size_bytes"][-1] + 20) * 8) * 1e9 / span


def main():
    """Set up the namespaces, measure, clean up, print the JSON line."""
    if os.geteuid() != 0:
        print(json.dumps({"bench": "traffic_generator_rate", "skipped": "needs root"}))
        return 0
    tag = uuid.uuid4().hex[:5]
    tx, rx = f"blb{tag}tx", f"blb{tag}rx"
    results = []
    try:
        ip("netns", "add", tx)
        ip("netns", "add", rx)
        ip("-n", tx, "link", "add", "tx0", "type", "veth", "peer", "name", "rx0", "netns", rx)
        ip("-n", tx, "addr", "add", "10.203.0.1/24", "dev", "tx0")
        ip("-n", rx, "addr", "add", "10.203.0.2/24", "dev", "rx0")
        ip("-n", tx, "link", "set", "tx0", "up")
        ip("-n", rx, "link", "set", "rx0", "up")
        subprocess.run(["ip", "netns", "exec", tx, "ping", "-c1", "-W1", "10.203.0.2"],
                       check=True, capture_output=True)
        for rate, size, priority in CASES:
            with Receiver(PORT, netns=rx) as r:
                r.start(idle_timeout_s=1.0)
                sent = send("10.203.0.2", PORT, frame_size=size, rate_bps=rate,
                            duration_s=DURATION_S, netns=tx, realtime_priority=priority)
                got = r.join()
            results.append({
                "target_bps": rate,
                "frame_size_bytes": size,
                "realtime_priority": priority,
                "sent_frames": sent.sent_frames,
                "lost_frames": sent.sent_frames - len(got.frames),
                "tx_rate_error_pct": round(100 * (sent.rate_bps / rate - 1), 4),
                "rx_rate_error_pct": round(100 * (rx_rate_bps(got.frames) / rate - 1), 4),
                "max_late_us": round(sent.max_late_ns / 1e3, 1),
                "retries": sent.retries,
            })
        with Receiver(PORT, netns=rx) as r:
            r.start(idle_timeout_s=1.0)
            sent = send("10.203.0.2", PORT, frame_size=64, count=BACK_TO_BACK_FRAMES, netns=tx)
            got = r.join()
        back_to_back = {
            "frame_size_bytes": 64,
            "sent_frames": sent.sent_frames,
            "tx_fps": round(sent.sent_frames * 1e9 / sent.span_ns) if sent.span_ns else None,
            "lost_frames": sent.sent_frames - len(got.frames),
        }
    finally:
        subprocess.run(["ip", "netns", "del", rx], capture_output=True)
        subprocess.run(["ip", "netns", "del", tx], capture_output=True)
    print(json.dumps({"bench": "traffic_generator_rate", "duration_s": DURATION_S,
                      "cases": results, "back_to_back_64": back_to_back}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
