"""Live-port ceiling: frames/s and added latency of the raw forwarder between two veths.

Topology (three fresh network namespaces, removed at the end even on failure)::

    h1: h1-eth0 ──veth── fw-eth1 : fw (raw_forwarder) : fw-eth2 ──veth── h2-eth0 :h2

bufferlab's UDP generator sends from h1 to h2 through the forwarder (the example
``raw_forwarder`` of the ``bufferlab-ports`` crate, built in release mode). Per frame
size (64 and 1500 bytes, sizes include the FCS as RFC 2544 counts them, so Linux frames
are 4 bytes shorter):

* throughput: the generator sends a fixed number of frames back-to-back (by count: its
  duration limit does not apply to back-to-back sending); ``forwarded_fps`` is the
  forwarder's count of frames handed to fw-eth2 per second of its own busy span;
  ``kernel_drops`` are frames the kernel dropped at the forwarder's full receive buffer;
* latency: the generator sends 10,000 frames/s for 1 s; added latency is, per frame,
  CLOCK_REALTIME once its batch has been handed to fw-eth2 minus its kernel receive
  timestamp on fw-eth1, reported as nearest-rank p50/p99 in µs.

Each figure is the median of ``REPEATS`` runs: the machine is shared, and a single run
can land on a busy moment. Prints one JSON line. Needs root. Both the generator and the forwarder share the
machine's cores, so the figures are a floor for the ceiling on a busy machine.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bufferlab.traffic.generate import line_rate_bps, send

ROOT = Path(__file__).resolve().parent.parent
FORWARDER = ROOT / "target" / "release" / "examples" / "raw_forwarder"
FRAME_SIZES = (64, 1500)
THROUGHPUT_FRAMES = {64: 400_000, 1500: 200_000}
LATENCY_S = 1.0
LATENCY_LOAD_FPS = 10_000
REPEATS = 3
DST_IP = "10.99.0.2"


def sh(*args: str) -> str:
    """Run a command, return its stdout; raise with its stderr if it fails."""
    proc = subprocess.run(args, capture_output=True, text=True, check=False, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


class Topology:
    """h1 — fw — h2 over two veth pairs, each in its own namespace."""

    def __init__(self) -> None:
        tag = f"blpf{os.getpid() % 100000}"
        self.h1, self.fw, self.h2 = f"{tag}h1", f"{tag}fw", f"{tag}h2"
        self.created: list[str] = []

    def __enter__(self) -> Topology:
        try:
            for ns in (self.h1, self.fw, self.h2):
                sh("ip", "netns", "add", ns)
                self.created.append(ns)
                # No IPv6: the kernel then sends nothing of its own into the measurement.
                for key in ("all", "default"):
                    sh("ip", "netns", "exec", ns, "sysctl", "-qw",
                       f"net.ipv6.conf.{key}.disable_ipv6=1")
            sh("ip", "-n", self.fw, "link", "add", "fw-eth1", "type", "veth",
               "peer", "name", "h1-eth0", "netns", self.h1)
            sh("ip", "-n", self.fw, "link", "add", "fw-eth2", "type", "veth",
               "peer", "name", "h2-eth0", "netns", self.h2)
            for ns, iface in ((self.h1, "h1-eth0"), (self.fw, "fw-eth1"),
                              (self.fw, "fw-eth2"), (self.h2, "h2-eth0")):
                # Offloads off so every frame on the wire is one MTU-sized frame
                # (switch/ports/README.md, "Limits").
                sh("ip", "netns", "exec", ns, "ethtool", "-K", iface, "rx", "off", "tx", "off",
                   "tso", "off", "gso", "off", "gro", "off")
                sh("ip", "-n", ns, "link", "set", iface, "up")
            sh("ip", "-n", self.h1, "addr", "add", "10.99.0.1/24", "dev", "h1-eth0")
            # h2 has no address: frames reach it and are dropped without any reply.
            mac = json.loads(sh("ip", "-n", self.h2, "-j", "link", "show", "h2-eth0"))[0]["address"]
            sh("ip", "-n", self.h1, "neigh", "replace", DST_IP, "lladdr", mac,
               "dev", "h1-eth0", "nud", "permanent")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for ns in reversed(self.created):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self.created.clear()

    def promiscuous(self, iface: str) -> bool:
        """Whether a port (the forwarder's) holds `iface` in promiscuous mode."""
        info = json.loads(sh("ip", "-n", self.fw, "-d", "-j", "link", "show", iface))[0]
        return info.get("promiscuity", 0) > 0


def run_forwarder(topo: Topology, frame_size: int, rate_bps: float | None = None,
                  duration_s: float | None = None,
                  count: int | None = None) -> tuple[dict, dict]:
    """Start the forwarder, send through it, stop it; return (forwarder, sender) figures."""
    fwd = subprocess.Popen(
        ["ip", "netns", "exec", topo.fw, str(FORWARDER), "fw-eth1", "fw-eth2",
         "--duration-s", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        give_up = time.monotonic() + 10
        while not (topo.promiscuous("fw-eth1") and topo.promiscuous("fw-eth2")):
            if fwd.poll() is not None or time.monotonic() > give_up:
                raise RuntimeError(f"raw_forwarder did not start: {fwd.stderr.read()}")
            time.sleep(0.02)
        sent = send(DST_IP, frame_size=frame_size, rate_bps=rate_bps,
                    duration_s=duration_s, count=count, netns=topo.h1, batch=64)
        # Let the last frames drain through the forwarder before stopping it.
        time.sleep(0.2)
        fwd.send_signal(signal.SIGTERM)
        out, err = fwd.communicate(timeout=10)
    finally:
        if fwd.poll() is None:
            fwd.kill()
            fwd.wait()
    if fwd.returncode != 0:
        raise RuntimeError(f"raw_forwarder failed: {err.strip()}")
    return json.loads(out.strip().splitlines()[-1]), sent.figures()


def main() -> int:
    """Build the forwarder, measure both sizes, print one JSON line."""
    if os.geteuid() != 0:
        print("bench/ports_forwarder.py: needs root (namespaces, veth pairs)", file=sys.stderr)
        return 1
    build = ["cargo", "build", "--release", "-q", "-p", "bufferlab-ports",
             "--example", "raw_forwarder"]
    proc = subprocess.run(build, cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"bench/ports_forwarder.py: {' '.join(build)} failed:\n{proc.stderr}",
              file=sys.stderr)
        return proc.returncode

    # SIGTERM (a killed `make bench`) unwinds like Ctrl-C, so the namespaces are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    figures: dict[str, object] = {
        "benchmark": "ports_forwarder",
        "frame_sizes_bytes_incl_fcs": list(FRAME_SIZES),
        "latency_load_fps": LATENCY_LOAD_FPS,
        "repeats": REPEATS,
    }
    with Topology() as topo:
        for size in FRAME_SIZES:
            runs: dict[str, list[float]] = {}
            for _ in range(REPEATS):
                fwd, sent = run_forwarder(topo, size, count=THROUGHPUT_FRAMES[size])
                runs.setdefault("forwarded_fps", []).append(fwd["forwarded_fps"])
                runs.setdefault("offered_fps", []).append(sent["sent_frames"] * 1e9 / sent["span_ns"])
                runs.setdefault("kernel_drops", []).append(fwd["kernel_drops"])
                load_bps = line_rate_bps(LATENCY_LOAD_FPS, size)
                fwd, _ = run_forwarder(topo, size, rate_bps=load_bps, duration_s=LATENCY_S)
                runs.setdefault("added_latency_p50_us", []).append(fwd["added_latency_p50_us"])
                runs.setdefault("added_latency_p99_us", []).append(fwd["added_latency_p99_us"])
            for key, values in runs.items():
                figures[f"{key}_{size}B"] = round(statistics.median(values), 3)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
