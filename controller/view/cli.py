"""bufferlab-view: a live web page of a switch's queues, drops and congestion signals.

    bufferlab-view [--grpc-addr 127.0.0.1:50051] --ports 1,2,3 [--queues 1]
                   [--label 1=h1 ...] [--http-port 8050] [--interval-ms 100]
                   [--log logs/s1.log] [--traces 5] [--thrift-port 9090]

Reads the switch's counters and registers over P4Runtime (the program's own P4Info, taken
from the switch) every `--interval-ms` and serves the page on http://127.0.0.1:PORT/ until
Ctrl-C. Works with any program that has buffer_switch.p4's names; what a program lacks is
left out of the plots. With `--log`, the switch's log (bufferlab-switch at `-L debug`),
the page also shows the last `--traces` packets of a port, line by line as BMv2 logs them.
When the program is a TNA one (p4src/tna/buffer_switch.p4), its buffer is Tofino's traffic
manager's: the view also reads the TM's counters from the switch's runtime CLI on
`--thrift-port` (bufferlab-switch's; default 9090) and shows each queue's depth in TM cells
(80 B on Tofino 1, 176 B on Tofino 2) and in bytes, and the TM's drops.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from p4.v1 import p4runtime_pb2

from bufferlab.controller.client import P4RuntimeError, SwitchConnection
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.controller.tofino_mapping import on_tofino
from bufferlab.controller.view.sampler import Sampler
from bufferlab.controller.view.server import LiveView
from bufferlab.controller.view.tm import TmReader
from bufferlab.controller.view.traces import PacketTraces

DEFAULT_HTTP_PORT = 8050
#: simple_switch's runtime CLI port, which bufferlab-switch uses too.
DEFAULT_THRIFT_PORT = 9090


def _ports(text: str) -> list[int]:
    try:
        ports = sorted({int(p) for p in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of ports like 1,2,3") from None
    if not ports or min(ports) < 0 or max(ports) > 510:
        raise argparse.ArgumentTypeError(f"{text!r}: ports are 0..510")
    return ports


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of packets")
    return int(text)


def _label(text: str) -> tuple[int, str]:
    port, _, name = text.partition("=")
    if not port.isdigit() or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not PORT=NAME (e.g. 1=h1)")
    return int(port), name


def start_view(address: str, ports: Sequence[int], queues: int = 1,
               labels: dict[int, str] | None = None, http_port: int = 0,
               interval_s: float = 0.1, title: str = "bufferlab",
               device_id: int = 0, log: str | None = None, traces: int = 5,
               thrift_port: int = DEFAULT_THRIFT_PORT) -> LiveView:
    """Connect to the switch at `address`, take its P4Info and start a `LiveView` (which
    follows the switch's `log` for its last `traces` packets per port, when given); a TNA
    program's TM counters are read from the runtime CLI on `thrift_port` of the same host."""
    connection = SwitchConnection(address, device_id)
    config = connection.get_pipeline(
        p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
    if not config.HasField("p4info"):
        connection.close()
        raise P4RuntimeError("GetForwardingPipelineConfig", "FAILED_PRECONDITION",
                             f"the switch at {address} has no pipeline yet")
    index = P4InfoIndex(config.p4info)
    host = address.rpartition(":")[0].strip("[]") or "127.0.0.1"
    tm = TmReader(host, thrift_port) if on_tofino(index) else None
    sampler = Sampler(connection, index, ports, queues, tm=tm)
    packet_traces = PacketTraces(log, per_port=max(traces, 1)) if log else None
    return LiveView(sampler, http_port, interval_s, labels, title, packet_traces).start()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of bufferlab-view; returns the exit status."""
    parser = argparse.ArgumentParser(prog="bufferlab-view", description=__doc__.splitlines()[0])
    parser.add_argument("--grpc-addr", default="127.0.0.1:50051",
                        help="the switch's P4Runtime address (default %(default)s)")
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--ports", type=_ports, required=True, help="switch ports to plot, 1,2,3")
    parser.add_argument("--queues", type=int, default=1, help="queues per port (default 1)")
    parser.add_argument("--label", type=_label, action="append", default=[],
                        help="name of the host on a port, PORT=NAME (repeatable)")
    parser.add_argument("--http-port", type=int, default=DEFAULT_HTTP_PORT,
                        help="TCP port of the page on 127.0.0.1 (default %(default)s)")
    parser.add_argument("--interval-ms", type=int, default=100,
                        help="time between two samples, ms (default %(default)s)")
    parser.add_argument("--log", default=None,
                        help="the switch's log (bufferlab-switch -L debug): show its last packets per port")
    parser.add_argument("--traces", type=_positive, default=5,
                        help="packets shown per port with --log (default %(default)s)")
    parser.add_argument("--thrift-port", type=int, default=DEFAULT_THRIFT_PORT,
                        help="the switch's runtime CLI port, for a TNA program's traffic manager"
                             " (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        view = start_view(args.grpc_addr, args.ports, args.queues, dict(args.label),
                          args.http_port, args.interval_ms / 1000, device_id=args.device_id,
                          log=args.log, traces=args.traces, thrift_port=args.thrift_port)
    except P4RuntimeError as err:
        print(f"bufferlab-view: switch error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"bufferlab-view: error: port {args.http_port}: {err.strerror}", file=sys.stderr)
        return 2
    print(f"bufferlab-view: {view.url} (Ctrl-C stops)")
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    view.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
