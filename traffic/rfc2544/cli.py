"""``bufferlab-rfc2544``: run RFC 2544 tests from N source namespaces into one sink and
write the reporting tables (CSV per test, one Markdown report)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bufferlab.traffic.generate import (
    DEFAULT_DATA_PORT,
    RFC2544_FRAME_SIZES,
    parse_bps,
)
from bufferlab.traffic.rfc2544.procedures import back_to_back, frame_loss, latency, throughput
from bufferlab.traffic.rfc2544.report import markdown_tables, write_csv
from bufferlab.traffic.rfc2544.tester import SourcePort, Tester

TESTS = ("throughput", "latency", "back-to-back", "frame-loss")
_TITLES = {
    "throughput": "Throughput (RFC 2544 26.1)",
    "latency": "Latency (RFC 2544 26.2)",
    "back-to-back": "Back-to-back frames (RFC 2544 26.4)",
    "frame-loss": "Frame loss rate (RFC 2544 26.3)",
}


def parse_source(text: str) -> SourcePort:
    """``NETNS`` or ``NETNS:SRC_IP`` (NETNS: ip netns name or /proc/PID/ns/net)."""
    netns, _, src_ip = text.partition(":")
    return SourcePort(netns or None, src_ip or None)


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def _tests(text: str) -> list[str]:
    tests = [t for t in text.split(",") if t]
    for t in tests:
        if t not in TESTS:
            raise argparse.ArgumentTypeError(f"unknown test {t!r}; choose from {', '.join(TESTS)}")
    return tests


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bufferlab-rfc2544",
        description="RFC 2544 throughput, latency, back-to-back and frame loss through the "
        "device between the source namespaces and the sink. Frame sizes include the FCS; "
        "loads are %% of one source port's line rate.",
    )
    p.add_argument("--source", action="append", type=parse_source, required=True,
                   metavar="NETNS[:SRC_IP]", help="a source port (repeat for N-into-one)")
    p.add_argument("--sink-ip", required=True, help="IPv4 address of the sink")
    p.add_argument("--sink-netns", help="namespace of the sink's receiver")
    p.add_argument("--port", type=int, default=DEFAULT_DATA_PORT, help="UDP port at the sink")
    p.add_argument("--line-rate-bps", type=parse_bps, default=1e9,
                   help="nominal line rate of one source port, bit/s")
    p.add_argument("--frame-sizes", type=_sizes, default=list(RFC2544_FRAME_SIZES),
                   help="comma-separated frame sizes, bytes incl. FCS")
    p.add_argument("--tests", type=_tests, default=list(TESTS),
                   help=f"comma-separated subset of {','.join(TESTS)}")
    p.add_argument("--dscp", type=int, default=0, help="DSCP of the test frames")
    p.add_argument("--realtime-priority", type=int,
                   help="run the senders SCHED_FIFO at this priority (1..99, root)")
    p.add_argument("--max-late-ms", type=float,
                   help="repeat throughput trials whose senders ran later than this")
    p.add_argument("--confirm-losses", type=int, default=0,
                   help="count a throughput load as lossy only if this many more trials lose too")
    p.add_argument("--trial-s", type=float, default=60.0,
                   help="throughput and frame-loss trial duration, s")
    p.add_argument("--wait-s", type=float, default=2.0,
                   help="wait for stragglers after each trial, s")
    p.add_argument("--settle-s", type=float, default=5.0,
                   help="idle time before each trial, s (RFC 2544: at least 5)")
    p.add_argument("--resolution-pct", type=float, default=0.1,
                   help="throughput search resolution, %% of line rate")
    p.add_argument("--latency-trial-s", type=float, default=120.0, help="latency trial, s")
    p.add_argument("--latency-trials", type=int, default=20, help="latency trials per size")
    p.add_argument("--latency-load-pct", type=float,
                   help="load for latency, %% of line rate (default: the measured throughput)")
    p.add_argument("--b2b-max-frames", type=int, default=10_000,
                   help="longest burst tried, frames per port")
    p.add_argument("--b2b-repetitions", type=int, default=50, help="back-to-back repetitions")
    p.add_argument("--b2b-trial-s", type=float, default=2.0, help="back-to-back trial, s")
    p.add_argument("--loss-step-pct", type=float, default=10.0,
                   help="frame-loss load step, %% of line rate")
    p.add_argument("--learning-frames", type=int, default=3,
                   help="learning frames per port before the tests")
    p.add_argument("--out-dir", type=Path, default=Path("results/rfc2544"),
                   help="where the CSV tables and report.md go")
    return p


def run(args: argparse.Namespace) -> dict[str, list[dict]]:
    """Run the selected tests for every frame size; return rows per test."""
    tester = Tester(args.source, args.sink_ip, sink_netns=args.sink_netns,
                    sink_port=args.port, line_rate_bps=args.line_rate_bps, dscp=args.dscp,
                    realtime_priority=args.realtime_priority, settle_s=args.settle_s)
    if args.learning_frames:
        tester.learn(args.learning_frames)
    rows: dict[str, list[dict]] = {t: [] for t in args.tests}
    for size in args.frame_sizes:
        measured = None
        if "throughput" in args.tests:
            res = throughput(tester, size, trial_s=args.trial_s,
                             resolution=args.resolution_pct / 100, wait_s=args.wait_s,
                             max_late_s=None if args.max_late_ms is None
                             else args.max_late_ms / 1e3,
                             confirm_losses=args.confirm_losses)
            measured = res.load
            rows["throughput"].append(res.row())
        if "latency" in args.tests:
            load = args.latency_load_pct / 100 if args.latency_load_pct is not None else measured
            if not load:
                raise ValueError("latency needs --latency-load-pct or a throughput test with a "
                                 "non-zero result")
            rows["latency"].append(latency(tester, size, load, trial_s=args.latency_trial_s,
                                           trials=args.latency_trials, wait_s=args.wait_s).row())
        if "back-to-back" in args.tests:
            rows["back-to-back"].append(back_to_back(
                tester, size, args.b2b_max_frames, repetitions=args.b2b_repetitions,
                trial_s=args.b2b_trial_s).row())
        if "frame-loss" in args.tests:
            rows["frame-loss"] += [p.row() for p in frame_loss(
                tester, size, trial_s=args.trial_s, step=args.loss_step_pct / 100,
                wait_s=args.wait_s)]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run, write ``<test>.csv`` and ``report.md`` into --out-dir, print rows as JSON."""
    args = _parser().parse_args(argv)
    try:
        rows = run(args)
    except (ValueError, OSError, RuntimeError) as err:
        print(f"bufferlab-rfc2544: error: {err}", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    sections = [f"# RFC 2544 report\n\nSources: {len(args.source)}, line rate "
                f"{args.line_rate_bps:g} bit/s per source, frame sizes include the FCS, rates "
                "are line bit/s (frame + 20 bytes preamble and gap).\n"]
    for test, test_rows in rows.items():
        if test_rows:
            write_csv(test_rows, args.out_dir / f"{test.replace('-', '_')}.csv")
            sections.append(markdown_tables(_TITLES[test], test_rows))
    (args.out_dir / "report.md").write_text("\n".join(sections))
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
