"""Receiver with kernel RX timestamps: Python API and the ``bufferlab-recv`` command.

The receive loop is Rust (recvmmsg, SO_TIMESTAMPING software RX stamps, IP_RECVTOS) on a background thread;
the socket is bound when the :class:`Receiver` is created, so frames sent after that are
not lost to a race. A run's end (stop(), its duration, its idle time) is judged by what
arrived, not by when the thread last looked: frames queued when it looks are read first,
and those the kernel stamped before a stop() or the duration's end are kept, so a thread
held back by a loaded machine loses nothing. Records and summaries are in
:mod:`bufferlab.traffic.records`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

import numpy as np

from bufferlab.traffic import _generator
from bufferlab.traffic.generate import DEFAULT_DATA_PORT
from bufferlab.traffic.records import (
    apply_tx_stamps,
    frames_from_receiver,
    read_frames_csv,
    read_tx_stamps_csv,
    summarize,
    write_frames_csv,
)

# Large enough to hold ~0.5 s of 1 Gbit/s while the receive thread is descheduled.
DEFAULT_RCVBUF_BYTES = 64 << 20


@dataclass(frozen=True)
class ReceiveResult:
    """Frames received (records.FRAME_DTYPE, arrival order) and what was not recorded."""

    frames: np.ndarray
    foreign_frames: int
    truncated_frames: int
    no_kernel_timestamp: int


class Receiver:
    """A bound UDP receiver in a namespace; start() it, send, then stop() or join().

    Used as a context manager, the socket is closed when the block ends.
    """

    def __init__(
        self,
        port: int = DEFAULT_DATA_PORT,
        netns: str | None = None,
        bind_ip: str = "0.0.0.0",
        rcvbuf_bytes: int = DEFAULT_RCVBUF_BYTES,
        batch: int = 64,
    ) -> None:
        self._core = _generator.Receiver(port, netns=netns, bind_ip=bind_ip,
                                         rcvbuf_bytes=rcvbuf_bytes, batch=batch)
        self._running = False

    @property
    def port(self) -> int:
        """The bound UDP port."""
        return self._core.port

    def start(
        self,
        max_frames: int | None = None,
        idle_timeout_s: float | None = None,
        duration_s: float | None = None,
    ) -> None:
        """Receive in the background until stop(), or until a limit given here ends it."""
        self._core.start(max_frames=max_frames, idle_timeout_s=idle_timeout_s,
                         duration_s=duration_s)
        self._running = True

    def _result(self, out: dict) -> ReceiveResult:
        self._running = False
        return ReceiveResult(
            frames=frames_from_receiver(out["records"]),
            foreign_frames=out["foreign_frames"],
            truncated_frames=out["truncated_frames"],
            no_kernel_timestamp=out["no_kernel_timestamp"],
        )

    def stop(self) -> ReceiveResult:
        """Stop now (within 20 ms) and return every frame that arrived before this call."""
        return self._result(self._core.stop())

    def join(self) -> ReceiveResult:
        """Wait for a limit given to start() to end the run and return what arrived.

        Ctrl-C interrupts the wait (KeyboardInterrupt) without ending the run: stop() then
        returns everything received so far.
        """
        return self._result(self._core.join())

    def close(self) -> None:
        """Close the socket now (a run in progress is stopped and its frames discarded)."""
        self._core.close()
        self._running = False

    def __enter__(self) -> Receiver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bufferlab-recv",
        description="Receive bufferlab frames with kernel RX timestamps; write per-frame "
        "records (CSV) and print one JSON line of loss/order/latency/throughput figures.",
    )
    p.add_argument("--port", type=int, default=DEFAULT_DATA_PORT, help="UDP port to bind")
    p.add_argument("--bind", default="0.0.0.0", help="IPv4 address to bind")
    p.add_argument("--netns", help="network namespace: ip netns name or /proc/PID/ns/net")
    p.add_argument("--duration-s", type=float, help="stop after this many seconds")
    p.add_argument("--idle-timeout-s", type=float, help="stop after this long without frames")
    p.add_argument("--max-frames", type=int, help="stop after this many frames")
    p.add_argument("--from-csv", type=Path,
                   help="receive nothing: summarise (and re-join, re-write) records from a "
                   "CSV written earlier by --csv")
    p.add_argument("--csv", type=Path, help="write per-frame records here")
    p.add_argument("--tx-stamps-csv", type=Path, action="append", default=[],
                   help="sender's kernel TX timestamps (from bufferlab-gen), read when the "
                   "run ends, so the sender must have finished; repeatable")
    p.add_argument("--sent", action="append", default=[], metavar="FLOW=FRAMES",
                   help="frames the sender reports sent for a flow, for exact loss")
    p.add_argument("--interval-s", type=float, default=1.0,
                   help="throughput interval, seconds")
    return p


def _parse_sent(items: Sequence[str]) -> dict[int, int]:
    sent = {}
    for item in items:
        flow, _, frames = item.partition("=")
        try:
            sent[int(flow)] = int(frames)
        except ValueError as err:
            raise ValueError(f"--sent {item!r} is not FLOW=FRAMES") from err
    return sent


def main(argv: Sequence[str] | None = None) -> int:
    """``bufferlab-recv``: receive until a limit (or read --from-csv), write records, print a
    JSON summary.

    Exit status 0; 2 when nothing could be received (bad arguments, socket errors); 1 when
    frames were received and written but a TX-timestamp file could not be used (those
    frames keep their header send times).
    """
    args = _parser().parse_args(argv)
    if args.from_csv is None and args.duration_s is None and args.idle_timeout_s is None \
            and args.max_frames is None:
        print("bufferlab-recv: error: give --duration-s, --idle-timeout-s, --max-frames or "
              "--from-csv", file=sys.stderr)
        return 2
    try:
        sent = _parse_sent(args.sent)
        if args.from_csv is not None:
            frames = read_frames_csv(args.from_csv)
            result = ReceiveResult(frames, 0, 0, int((frames["rx_kernel"] == 0).sum()))
        else:
            result = _receive(args)
    except (ValueError, OSError) as err:
        print(f"bufferlab-recv: error: {err}", file=sys.stderr)
        return 2
    return _report(args, result, sent)


def _receive(args: argparse.Namespace) -> ReceiveResult:
    """Receive as the command line says; Ctrl-C ends the run early, keeping its frames."""
    rx = Receiver(args.port, netns=args.netns, bind_ip=args.bind)
    rx.start(max_frames=args.max_frames, idle_timeout_s=args.idle_timeout_s,
             duration_s=args.duration_s)
    # One line on stderr once frames are being received: scripts wait for it.
    print(f"bufferlab-recv: receiving on UDP port {rx.port}", file=sys.stderr, flush=True)
    try:
        return rx.join()
    except KeyboardInterrupt:
        return rx.stop()


def _report(args: argparse.Namespace, result: ReceiveResult, sent: dict[int, int]) -> int:
    """Join TX stamps, write the records CSV, print the summary; return the exit status."""
    status = 0
    kernel_tx = 0
    for path in args.tx_stamps_csv:
        # A bad stamps file must not cost the frames already received.
        try:
            kernel_tx += apply_tx_stamps(result.frames, read_tx_stamps_csv(path))
        except (ValueError, OSError) as err:
            print(f"bufferlab-recv: error: TX stamps {path}: {err}", file=sys.stderr)
            status = 1
    if args.csv is not None:
        write_frames_csv(result.frames, args.csv)
    total, per_flow = summarize(result.frames, sent, int(args.interval_s * 1e9))
    print(json.dumps({
        "total": asdict(total),
        "flows": {str(f): asdict(s) for f, s in per_flow.items()},
        "foreign_frames": result.foreign_frames,
        "truncated_frames": result.truncated_frames,
        "no_kernel_timestamp": result.no_kernel_timestamp,
        "kernel_tx_stamped_frames": kernel_tx,
    }))
    return status

if __name__ == "__main__":
    sys.exit(main())
