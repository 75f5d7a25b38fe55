"""Paced UDP traffic generator: Python API and the ``bufferlab-gen`` command.

The pacing loop is Rust (``bufferlab.traffic._generator``); this module validates
parameters, names the units and turns results into Python objects.

Conventions used everywhere in bufferlab's traffic tools:

* **Frame size** = Ethernet frame *including* the 4-byte FCS, as RFC 2544 counts it
  (64..9000 bytes). Linux never sees the FCS, so a 64-byte frame is 60 bytes on the
  socket's interface: 14 Ethernet + 20 IPv4 + 8 UDP + 18 bytes of UDP payload.
* **Rate** = line bit/s: each frame costs ``frame size + 20`` bytes (preamble/SFD 8,
  inter-frame gap 12), i.e. the Linux frame + 24 bytes. So 1 Gbit/s of 64-byte frames
  is 1,488,095 frames/s, RFC 2544's maximum.
* Every frame's UDP payload starts with the data header (magic 0xB1AB, flow, seq,
  tx_ns = CLOCK_REALTIME ns at send); the UDP checksum is 0. Frames to UDP port 47000
  of at least 110 bytes (106 + FCS) are probes: their telemetry block is sent zeroed.

Inside a namespace, either run the command there (``ip netns exec h1 bufferlab-gen ...``,
a Mininet host's ``h1.cmd("bufferlab-gen ...")``) or name it (``--netns h1`` /
``netns="/proc/<pid>/ns/net"``)::

    bufferlab-recv --port 5001 --idle-timeout-s 2 --csv frames.csv      # on the receiver
    bufferlab-gen --dst 10.0.1.2 --rate-bps 100Mbit --frame-size 1518 --duration-s 10
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bufferlab.traffic import _generator
from bufferlab.traffic.records import (
    WIRE_GAP_BYTES,
    tx_stamps_from_sender,
    write_tx_stamps_csv,
)
from bufferlab.traffic.tc import parse_rate_bps

DEFAULT_DATA_PORT = 5001
PROBE_PORT = 47000
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 9000
# Probe = 14 + 20 + 8 + 16 data header + 48 telemetry = 106 bytes on Linux, + 4 FCS.
MIN_PROBE_FRAME_BYTES = 110
# RFC 2544 section 9.1 frame sizes for Ethernet.
RFC2544_FRAME_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)


def max_frame_rate_fps(line_rate_bps: float, frame_size: int) -> float:
    """Theoretical maximum frames/s of a link: line_rate / (8 * (frame_size + 20))."""
    return line_rate_bps / (8 * (frame_size + WIRE_GAP_BYTES))


def line_rate_bps(frames_per_s: float, frame_size: int) -> float:
    """Line bit/s of a frame rate at one frame size (the inverse of max_frame_rate_fps)."""
    return frames_per_s * 8 * (frame_size + WIRE_GAP_BYTES)


def parse_bps(text: str) -> float:
    """Parse a rate in bit/s: a plain number (``1e9``) or tc's form (``100Mbit``)."""
    try:
        return float(text)
    except ValueError:
        return float(parse_rate_bps(text))


def parse_frame_mix(text: str) -> list[tuple[int, float]]:
    """Parse ``64:7,594:4,1518:1`` (frame size bytes incl. FCS : weight) into pairs."""
    mix = []
    for part in text.split(","):
        size, _, weight = part.partition(":")
        try:
            mix.append((int(size), float(weight) if weight else 1.0))
        except ValueError as err:
            raise ValueError(f"frame mix entry {part!r} is not SIZE[:WEIGHT]") from err
    return mix


@dataclass(frozen=True)
class SendResult:
    """What one generator run did; rates in line bit/s, times in ns.

    ``tx_stamp_ids`` says how kernel TX stamps were matched to frames: "explicit" (each
    frame carried its sequence number to the kernel, Linux >= 6.13: exact) or "counter"
    (older kernels: stamps after a retried send may be misattributed; see ``retries``).
    """

    flow: int
    sent_frames: int
    wire_bits: float
    start_realtime_ns: int
    span_ns: int
    rate_bps: float
    retries: int
    max_late_ns: int
    tx_stamps: np.ndarray
    tx_stamp_ids: str | None = None

    def figures(self) -> dict:
        """The scalar figures (everything but the TX timestamps) as a dict."""
        d = asdict(self)
        del d["tx_stamps"]
        d["tx_stamped_frames"] = len(self.tx_stamps)
        return d


def send(
    dst_ip: str,
    dst_port: int = DEFAULT_DATA_PORT,
    frame_size: int = 64,
    frame_mix: Sequence[tuple[int, float]] | None = None,
    rate_bps: float | None = None,
    arrivals: str = "constant",
    link_bps: float | None = None,
    burst_frames: int = 1,
    count: int | None = None,
    duration_s: float | None = None,
    start_realtime_ns: int | None = None,
    dscp: int = 0,
    ecn: int = 0,
    flow: int = 0,
    first_seq: int = 0,
    src_ip: str | None = None,
    src_port: int = 0,
    netns: str | None = None,
    tx_timestamps: bool = False,
    seed: int = 1,
    batch: int = 32,
    spin_ns: int = 50_000,
    realtime_priority: int | None = None,
) -> SendResult:
    """Send paced UDP frames with data headers until ``count`` frames or ``duration_s``.

    ``rate_bps`` is line bit/s (None sends back-to-back, as fast as the stack takes them);
    ``arrivals`` is "constant" or "bernoulli" (geometric gaps in slots of one frame time
    at ``link_bps``); ``burst_frames`` frames leave together and the mean rate is kept;
    ``netns`` is an ``ip netns`` name or a ``/proc/<pid>/ns/net`` path (Mininet host);
    ``realtime_priority`` (1..99, root) runs the sending thread SCHED_FIFO so a busy machine
    cannot hold departures back by milliseconds. Use it when gaps are longer than
    ``spin_ns`` (up to ~20,000 frames/s by default): with shorter gaps the thread spins
    without pause and the kernel's real-time throttling (sched_rt_runtime_us, 95 % of each
    second) stalls it for tens of ms (bench/traffic_generator_rate.py shows both).
    """
    if not 0 <= dscp <= 63:
        raise ValueError(f"dscp must be 0..63, got {dscp}")
    if not 0 <= ecn <= 3:
        raise ValueError(f"ecn must be 0..3, got {ecn}")
    if count is None and duration_s is None:
        raise ValueError("give a frame count or a duration")
    if count is not None and count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    mix = [(int(s), float(w)) for s, w in frame_mix] if frame_mix else [(int(frame_size), 1.0)]
    for size, _ in mix:
        if not MIN_FRAME_BYTES <= size <= MAX_FRAME_BYTES:
            raise ValueError(
                f"frame size {size} bytes is outside {MIN_FRAME_BYTES}..{MAX_FRAME_BYTES} "
                "(sizes include the 4-byte FCS)"
            )
    if count == 0:
        empty = tx_stamps_from_sender(b"", flow)
        return SendResult(flow, 0, 0.0, time.time_ns(), 0, 0.0, 0, 0, empty)
    out = _generator.send(
        dst_ip, dst_port, mix, rate_bps=rate_bps, arrivals=arrivals, link_bps=link_bps,
        burst_frames=burst_frames, count=count, duration_s=duration_s,
        start_realtime_ns=start_realtime_ns, tos=(dscp << 2) | ecn, flow=flow,
        first_seq=first_seq, src_ip=src_ip, src_port=src_port, netns=netns,
        tx_timestamps=tx_timestamps, seed=seed, batch=batch, spin_ns=spin_ns,
        realtime_priority=realtime_priority,
    )
    return SendResult(
        flow=flow,
        sent_frames=out["sent_frames"],
        wire_bits=out["wire_bits"],
        start_realtime_ns=out["start_realtime_ns"],
        span_ns=out["span_ns"],
        rate_bps=out["rate_bps"],
        retries=out["retries"],
        max_late_ns=out["max_late_ns"],
        tx_stamps=tx_stamps_from_sender(out["tx_stamps"], flow),
        tx_stamp_ids=out["tx_stamp_ids"],
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bufferlab-gen",
        description="Paced UDP traffic with bufferlab data headers. Frame sizes include the "
        "4-byte FCS (RFC 2544); rates are line bit/s (frame + 20 B preamble/gap).",
    )
    p.add_argument("--dst", required=True, help="destination IPv4 address")
    p.add_argument("--port", type=int, default=DEFAULT_DATA_PORT, help="destination UDP port")
    p.add_argument("--rate-bps", type=parse_bps,
                   help="line rate, bit/s (1e9 or 1Gbit); omit for back-to-back")
    p.add_argument("--frame-size", type=int, default=64, help="frame size, bytes incl. FCS")
    p.add_argument("--frame-mix", type=parse_frame_mix,
                   help="size mix SIZE:WEIGHT,... in bytes incl. FCS (overrides --frame-size)")
    p.add_argument("--arrivals", choices=["constant", "bernoulli"], default="constant")
    p.add_argument("--link-bps", type=parse_bps,
                   help="slotted link rate for Bernoulli arrivals, bit/s")
    p.add_argument("--burst-frames", type=int, default=1,
                   help="frames sent back-to-back per departure (mean rate kept)")
    p.add_argument("--count", type=int, help="frames to send")
    p.add_argument("--duration-s", type=float, help="seconds to send for")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--start-realtime-ns", type=int, help="CLOCK_REALTIME ns of first frame")
    start.add_argument("--start-in-s", type=float, help="start this many seconds from now")
    p.add_argument("--dscp", type=int, default=0, help="DSCP 0..63")
    p.add_argument("--ecn", type=int, default=0, help="ECN bits 0..3")
    p.add_argument("--flow", type=int, default=0, help="flow id in the data header")
    p.add_argument("--first-seq", type=int, default=0, help="sequence number of the first frame")
    p.add_argument("--src", help="source IPv4 address to bind")
    p.add_argument("--src-port", type=int, default=0, help="source UDP port (0 = any)")
    p.add_argument("--netns", help="network namespace: ip netns name or /proc/PID/ns/net")
    p.add_argument("--tx-stamps-csv", type=Path,
                   help="collect kernel TX timestamps and write them here (flow,seq,kernel_tx_ns)")
    p.add_argument("--seed", type=int, default=1, help="seed for Bernoulli gaps and size mixes")
    p.add_argument("--batch", type=int, default=32, help="most frames per sendmmsg call")
    p.add_argument("--spin-ns", type=int, default=50_000,
                   help="spin instead of sleeping for the last N ns before a departure")
    p.add_argument("--realtime-priority", type=int,
                   help="run the sender SCHED_FIFO at this priority (1..99, root)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``bufferlab-gen``: send, then print one JSON line of figures."""
    args = _parser().parse_args(argv)
    start = args.start_realtime_ns
    if args.start_in_s is not None:
        start = time.time_ns() + int(args.start_in_s * 1e9)
    try:
        result = send(
            args.dst, args.port, frame_size=args.frame_size, frame_mix=args.frame_mix,
            rate_bps=args.rate_bps, arrivals=args.arrivals, link_bps=args.link_bps,
            burst_frames=args.burst_frames, count=args.count, duration_s=args.duration_s,
            start_realtime_ns=start, dscp=args.dscp, ecn=args.ecn, flow=args.flow,
            first_seq=args.first_seq, src_ip=args.src, src_port=args.src_port,
            netns=args.netns, tx_timestamps=args.tx_stamps_csv is not None, seed=args.seed,
            batch=args.batch, spin_ns=args.spin_ns, realtime_priority=args.realtime_priority,
        )
    except (ValueError, OSError) as err:
        print(f"bufferlab-gen: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bufferlab-gen: interrupted", file=sys.stderr)
        return 130
    if args.tx_stamps_csv is not None:
        write_tx_stamps_csv(result.tx_stamps, args.tx_stamps_csv)
    print(json.dumps(result.figures()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
