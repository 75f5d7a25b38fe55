"""Live switch vs. the raw forwarder: frames/s and added latency between two veth ports.

Same topology, generator, frame sizes and latency load as ``bench/ports_forwarder.py``
(whose set-up this reuses)::

    h1: h1-eth0 ──veth── fw-eth1 : fw (bufferlab-switch, forward.p4) : fw-eth2 ──veth── h2-eth0 :h2

bufferlab-switch runs p4src/forward.p4 (compiled by bufferlab's compiler) in namespace fw
with one l2_forward entry (h2's MAC → port 2) written through its runtime CLI, and
``--pcap``: the captures give the switch's own figures.

* ``switch_fps_<size>B``: frames the switch sent out of fw-eth2 per second, between the
  first and the last (``_out.pcap`` timestamps), while the generator sends a fixed count
  back-to-back;
* ``switch_added_latency_p50_us/_p99_us_<size>B``: at 10,000 frames/s for 1 s, per frame,
  its ``_out.pcap`` timestamp (CLOCK_REALTIME when the switch handed it to fw-eth2) minus
  its ``_in.pcap`` timestamp (kernel receive time on fw-eth1): the raw forwarder's
  definition;
* the raw forwarder's figures from ``ports_forwarder.run_forwarder`` on the same topology,
  and ``ratio_fps_<size>B`` = switch / raw.

Each figure is the median of ``REPEATS`` runs. Prints one JSON line. Needs root. Writing the
pcaps costs the switch a copy per frame; the figures include it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scapy.utils import RawPcapReader

from bufferlab.compiler import compile as compile_p4
from bufferlab.traffic.generate import line_rate_bps, send

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import ports_forwarder as raw  # noqa: E402 - the sibling benchmark whose set-up is reused

FRAME_SIZES = raw.FRAME_SIZES
THROUGHPUT_FRAMES = {64: 100_000, 1500: 50_000}
REPEATS = 3


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pcap_records(path: Path) -> list[tuple[int, bytes]]:
    """(timestamp ns, frame) of every record of a nanosecond pcap."""
    with RawPcapReader(str(path)) as reader:
        return [(meta.sec * 1_000_000_000 + meta.usec, data) for data, meta in reader]


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    rank = max(1, int(-(-p * len(sorted_values) // 1)))
    return sorted_values[rank - 1]


def run_switch(topo: raw.Topology, json_path: Path, pcap_dir: Path, frame_size: int,
               rate_bps: float | None = None, duration_s: float | None = None,
               count: int | None = None) -> dict:
    """Start the switch in fw, program it, send through it, stop it; its figures."""
    for old in pcap_dir.glob("*.pcap"):
        old.unlink()
    thrift = free_port()
    # The switch's servers listen on fw's loopback, which the shared set-up leaves down.
    raw.sh("ip", "-n", topo.fw, "link", "set", "lo", "up")
    log = tempfile.TemporaryFile()
    switch = subprocess.Popen(
        ["ip", "netns", "exec", topo.fw, sys.executable, "-m", "bufferlab.switch.cli",
         "-i", "1@fw-eth1", "-i", "2@fw-eth2", "--pcap", str(pcap_dir), str(json_path),
         "--thrift-port", str(thrift), "--", "--grpc-server-addr", f"127.0.0.1:{free_port()}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        h2_mac = json.loads(raw.sh("ip", "-n", topo.h2, "-j", "link", "show", "h2-eth0"))[0]["address"]
        command = f"table_add l2_forward l2_to_port {h2_mac} => 2\n"
        give_up = time.monotonic() + 20
        while True:
            programmed = subprocess.run(
                ["ip", "netns", "exec", topo.fw, sys.executable, "-m",
                 "bufferlab.switch.runtime_cli.client", "--thrift-port", str(thrift)],
                input=command, capture_output=True, text=True, check=False)
            if programmed.returncode == 0:
                break
            if switch.poll() is not None or time.monotonic() > give_up:
                log.seek(0)
                raise RuntimeError(f"switch did not start: {programmed.stderr}\n{log.read().decode()}")
            time.sleep(0.2)
        sent = send(raw.DST_IP, frame_size=frame_size, rate_bps=rate_bps, duration_s=duration_s,
                    count=count, netns=topo.h1, batch=64)
        time.sleep(0.5)
    finally:
        os.killpg(switch.pid, signal.SIGTERM)
        try:
            switch.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(switch.pid, signal.SIGKILL)
            switch.wait()
    received = pcap_records(pcap_dir / "fw-eth1_in.pcap")
    forwarded = pcap_records(pcap_dir / "fw-eth2_out.pcap")
    arrival_ns: dict[bytes, int] = {}
    for t, frame in received:
        arrival_ns.setdefault(frame, t)
    latencies_us = sorted((t - arrival_ns[f]) / 1e3 for t, f in forwarded if f in arrival_ns)
    span_ns = forwarded[-1][0] - forwarded[0][0] if len(forwarded) > 1 else 0
    return {
        "offered_frames": sent.figures()["sent_frames"],
        "forwarded_frames": len(forwarded),
        "forwarded_fps": (len(forwarded) - 1) * 1e9 / span_ns if span_ns else 0.0,
        "added_latency_p50_us": percentile(latencies_us, 0.50) if latencies_us else None,
        "added_latency_p99_us": percentile(latencies_us, 0.99) if latencies_us else None,
    }


def main() -> int:
    """Measure the raw forwarder and the switch, both sizes, print one JSON line."""
    if os.geteuid() != 0:
        print("bench/switch_live_forwarding.py: needs root (namespaces, veth pairs)", file=sys.stderr)
        return 1
    build = ["cargo", "build", "--release", "-q", "-p", "bufferlab-ports", "--example",
             "raw_forwarder"]
    proc = subprocess.run(build, cwd=raw.ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"{' '.join(build)} failed:\n{proc.stderr}", file=sys.stderr)
        return proc.returncode
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    figures: dict[str, object] = {
        "benchmark": "switch_live_forwarding",
        "program": "p4src/forward.p4",
        "frame_sizes_bytes_incl_fcs": list(FRAME_SIZES),
        "latency_load_fps": raw.LATENCY_LOAD_FPS,
        "repeats": REPEATS,
    }
    with tempfile.TemporaryDirectory(prefix="bl-bench-switch-") as tmp, raw.Topology() as topo:
        json_path = Path(tmp) / "forward.json"
        document, _ = compile_p4(raw.ROOT / "p4src" / "forward.p4")
        json_path.write_text(json.dumps(document))
        pcap_dir = Path(tmp) / "pcaps"
        pcap_dir.mkdir()
        for size in FRAME_SIZES:
            runs: dict[str, list[float]] = {}
            load_bps = line_rate_bps(raw.LATENCY_LOAD_FPS, size)
            for _ in range(REPEATS):
                fwd, _ = raw.run_forwarder(topo, size, count=THROUGHPUT_FRAMES[size])
                runs.setdefault("raw_fps", []).append(fwd["forwarded_fps"])
                fwd, _ = raw.run_forwarder(topo, size, rate_bps=load_bps, duration_s=raw.LATENCY_S)
                runs.setdefault("raw_added_latency_p50_us", []).append(fwd["added_latency_p50_us"])
                runs.setdefault("raw_added_latency_p99_us", []).append(fwd["added_latency_p99_us"])
                sw = run_switch(topo, json_path, pcap_dir, size, count=THROUGHPUT_FRAMES[size])
                runs.setdefault("switch_fps", []).append(sw["forwarded_fps"])
                runs.setdefault("switch_forwarded_share", []).append(
                    sw["forwarded_frames"] / max(1, sw["offered_frames"]))
                sw = run_switch(topo, json_path, pcap_dir, size, rate_bps=load_bps,
                                duration_s=raw.LATENCY_S)
                runs.setdefault("switch_added_latency_p50_us", []).append(sw["added_latency_p50_us"])
                runs.setdefault("switch_added_latency_p99_us", []).append(sw["added_latency_p99_us"])
            for key, values in runs.items():
                figures[f"{key}_{size}B"] = round(statistics.median(v for v in values if v is not None), 3)
            figures[f"ratio_fps_{size}B"] = round(
                figures[f"switch_fps_{size}B"] / max(1e-9, figures[f"raw_fps_{size}B"]), 3)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
