"""`bufferlab-switch`: simple_switch_grpc's command line, as the p4lang tutorials write it.

    bufferlab-switch -i 1@s1-eth1 -i 2@s1-eth2 --pcap pcaps --device-id 0 build/x.json \\
        --log-console --thrift-port 9090 \\
        -- --grpc-server-addr 0.0.0.0:50051 --cpu-port 255 --priority-queues 8 \\
           --pool-bytes 1048576 --port-rate 1:100000000 --port-delay 1:50000 --port-overhead 1:24

Generic options (before `--`), as bmv2's:
  -i, --interface N@IFACE   attach interface IFACE as switch port N (repeatable)
  JSON | --no-p4            the BMv2 JSON to run, or none until a P4Runtime client sets one
  --device-id N             P4Runtime device id (default 0)
  --thrift-port N           TCP port of the runtime CLI (bufferlab-switch-cli; default 9090)
  --pcap [DIR]              write <DIR>/<iface>_in.pcap and _out.pcap (DIR default .)
  --log-console             log to stdout; --log-file FILE logs to FILE (not both)
  -L, --log-level LEVEL     trace, debug, info, warn, error, off (default info; trace under
                            BMv2's names simple_switch and simple_switch_grpc, as BMv2).
                            At debug and trace every packet is traced in BMv2's words
  --log-flush, --nanolog ADDR, --dump-packet-data N, --debugger
                            accepted for compatibility; they change nothing here

Target options (after `--`):
  --grpc-server-addr HOST:PORT  P4Runtime server address (default 127.0.0.1:9559: loopback only)
  --grpc-server-ssl         serve P4Runtime over TLS (needs --grpc-server-cert and -key)
  --grpc-server-cert FILE   the server's certificate, PEM
  --grpc-server-key FILE    the server's private key, PEM
  --grpc-server-cacert FILE the CA (PEM) that client certificates must chain to
  --grpc-server-with-client-auth
                            mutual TLS: refuse clients without a certificate signed by the CA
  --cpu-port N              port whose frames become PacketIns and where PacketOuts enter
  --drop-port N             egress_spec value that drops (default 511)
  --priority-queues N       queues per port, 1..8 (default 1)
  --pool-bytes N            shared buffer size, bytes
  --port-rate P:BPS         port P's shaper rate, bit/s (0 = unlimited)
  --port-delay P:NS         port P's propagation delay, ns
  --port-overhead P:BYTES   port P's wire overhead per frame, bytes (default 24)
  --no-jit                  interpret every action and control instead of running them as
                            machine code compiled at load (the reference, to compare)

Unknown options and bad values are reported on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field

from bufferlab.switch.p4runtime.server import ServerTls

MAX_PORT = 511
LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")
DEFAULT_GRPC_ADDRESS = "127.0.0.1:9559"
DEFAULT_THRIFT_PORT = 9090
#: BMv2's switch names, under which the defaults are BMv2's (switch/compat/bin).
BMV2_NAMES = ("simple_switch", "simple_switch_grpc")
USAGE = "bufferlab-switch [-i N@IFACE ...] [options] (JSON | --no-p4) [-- target options]"


@dataclass
class PortModel:
    """One port's link model from the command line; None keeps the engine's default."""

    rate_bps: int | None = None
    delay_ns: int | None = None
    wire_overhead_bytes: int | None = None


@dataclass
class SwitchConfig:
    """Everything the command line says, with units in the names."""

    interfaces: dict[int, str] = field(default_factory=dict)
    json_path: str | None = None
    device_id: int = 0
    thrift_port: int = DEFAULT_THRIFT_PORT
    pcap_dir: str | None = None
    log_console: bool = False
    log_file: str | None = None
    log_level: str = "info"
    grpc_address: str = DEFAULT_GRPC_ADDRESS
    grpc_tls: ServerTls | None = None
    cpu_port: int | None = None
    drop_port: int = MAX_PORT
    priority_queues: int = 1
    pool_bytes: int | None = None
    jit: bool = True
    port_models: dict[int, PortModel] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as `bufferlab-switch: error: ...` and exits 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print the error and a hint, exit 2."""
        self.exit(2, f"{self.prog}: error: {message}\n(see {self.prog} --help)\n")


def _port(text: str) -> int:
    value = _count(text)
    if value > MAX_PORT:
        raise argparse.ArgumentTypeError(f"port {value}: ports are 0..{MAX_PORT}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _interface(text: str) -> tuple[int, str]:
    port, at, iface = text.partition("@")
    if not at or not iface:
        raise argparse.ArgumentTypeError(f"{text!r}: write PORT@IFACE, e.g. 1@s1-eth1")
    return _port(port), iface


def _port_value(text: str) -> tuple[int, int]:
    port, colon, value = text.partition(":")
    if not colon:
        raise argparse.ArgumentTypeError(f"{text!r}: write PORT:VALUE, e.g. 1:100000000")
    return _port(port), _count(value)


def _address(text: str) -> str:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: write HOST:PORT, e.g. 0.0.0.0:50051")
    return text


def generic_parser() -> argparse.ArgumentParser:
    """The options before `--` (bmv2's generic options)."""
    p = _Parser(prog="bufferlab-switch", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter, usage=USAGE)
    p.add_argument("json", nargs="?", help="BMv2 JSON file")
    p.add_argument("-i", "--interface", action="append", type=_interface, default=[],
                   metavar="N@IFACE", help="attach interface IFACE as port N (repeatable)")
    p.add_argument("--no-p4", action="store_true", help="start without a program")
    p.add_argument("--device-id", type=_count, default=0)
    p.add_argument("--thrift-port", type=_port_number, default=DEFAULT_THRIFT_PORT)
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR")
    p.add_argument("--log-console", action="store_true")
    p.add_argument("--log-file", metavar="FILE")
    p.add_argument("-L", "--log-level", choices=LOG_LEVELS, default=None)
    p.add_argument("--log-flush", action="store_true")
    p.add_argument("--nanolog", metavar="ADDR")
    p.add_argument("--dump-packet-data", type=_count, metavar="N")
    p.add_argument("--debugger", action="store_true")
    return p


def _port_number(text: str) -> int:
    value = _count(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value}: TCP ports are 0..65535")
    return value


def target_parser() -> argparse.ArgumentParser:
    """The options after `--` (simple_switch_grpc's target options plus the port model)."""
    # The same name as the generic parser: its errors point at `bufferlab-switch --help`,
    # which documents the target options too.
    p = _Parser(prog="bufferlab-switch", add_help=False)
    p.add_argument("--grpc-server-addr", type=_address, default=DEFAULT_GRPC_ADDRESS)
    p.add_argument("--grpc-server-ssl", action="store_true")
    p.add_argument("--grpc-server-cert", metavar="FILE")
    p.add_argument("--grpc-server-key", metavar="FILE")
    p.add_argument("--grpc-server-cacert", metavar="FILE")
    p.add_argument("--grpc-server-with-client-auth", action="store_true")
    p.add_argument("--cpu-port", type=_port)
    p.add_argument("--drop-port", type=_port, default=MAX_PORT)
    p.add_argument("--priority-queues", type=_count, default=1)
    p.add_argument("--pool-bytes", type=_count)
    p.add_argument("--port-rate", type=_port_value, action="append", default=[], metavar="P:BPS")
    p.add_argument("--port-delay", type=_port_value, action="append", default=[], metavar="P:NS")
    p.add_argument("--port-overhead", type=_port_value, action="append", default=[],
                   metavar="P:BYTES")
    p.add_argument("--no-jit", action="store_true")
    return p


def default_log_level(prog: str) -> str:
    """`info` for bufferlab-switch; BMv2's own default, `trace`, under BMv2's names, so the
    tutorials' `logs/s1.log` holds the per-packet trace their instructions read."""
    return "trace" if os.path.basename(prog) in BMV2_NAMES else "info"


def parse_args(argv: list[str], prog: str = "bufferlab-switch") -> SwitchConfig:
    """The configuration a command line asks for (run as `prog`); exits 2 with a message if
    it is wrong."""
    split = argv.index("--") if "--" in argv else len(argv)
    generic_args, target_args = argv[:split], argv[split + 1:]
    generic = generic_parser()
    g = generic.parse_args(generic_args)
    t = target_parser().parse_args(target_args)
    if g.log_console and g.log_file:
        generic.error("--log-console and --log-file are mutually exclusive")
    if g.no_p4 and g.json:
        generic.error(f"--no-p4 and a JSON file ({g.json}) are mutually exclusive")
    if not g.no_p4 and not g.json:
        generic.error("give a BMv2 JSON file or --no-p4")
    if not 1 <= t.priority_queues <= 8:
        generic.error(f"--priority-queues {t.priority_queues}: 1..8 queues per port")
    interfaces: dict[int, str] = {}
    for port, iface in g.interface:
        if port in interfaces:
            generic.error(f"-i {port}@{iface}: port {port} is already {interfaces[port]}")
        interfaces[port] = iface
    if t.cpu_port is not None:
        if t.cpu_port == 0:
            generic.error("--cpu-port 0: the CPU port must not be 0")
        if t.cpu_port in interfaces:
            generic.error(f"--cpu-port {t.cpu_port} is also interface {interfaces[t.cpu_port]}")
    tls = _tls(generic, t)
    models: dict[int, PortModel] = {}
    for option, attr in (("port_rate", "rate_bps"), ("port_delay", "delay_ns"),
                         ("port_overhead", "wire_overhead_bytes")):
        for port, value in getattr(t, option):
            setattr(models.setdefault(port, PortModel()), attr, value)
    ignored = [name for name, given in (("--log-flush", g.log_flush), ("--nanolog", g.nanolog),
                                        ("--dump-packet-data", g.dump_packet_data is not None),
                                        ("--debugger", g.debugger))
               if given]
    return SwitchConfig(
        interfaces=interfaces, json_path=g.json, device_id=g.device_id,
        thrift_port=g.thrift_port, pcap_dir=g.pcap, log_console=g.log_console,
        log_file=g.log_file, log_level=g.log_level or default_log_level(prog),
        grpc_address=t.grpc_server_addr, grpc_tls=tls,
        cpu_port=t.cpu_port, drop_port=t.drop_port, priority_queues=t.priority_queues,
        pool_bytes=t.pool_bytes, jit=not t.no_jit, port_models=models, ignored=ignored,
    )


def _tls(parser: argparse.ArgumentParser, t: argparse.Namespace) -> ServerTls | None:
    """The TLS settings the target options ask for; a parser error when they do not fit."""
    files = {"--grpc-server-cert": t.grpc_server_cert, "--grpc-server-key": t.grpc_server_key,
             "--grpc-server-cacert": t.grpc_server_cacert}
    if not t.grpc_server_ssl:
        # Without --grpc-server-ssl the server would silently speak plain gRPC: say so instead.
        given = [name for name, value in files.items() if value] + (
            ["--grpc-server-with-client-auth"] if t.grpc_server_with_client_auth else [])
        if given:
            parser.error(f"{', '.join(given)} needs --grpc-server-ssl")
        return None
    if not t.grpc_server_cert or not t.grpc_server_key:
        parser.error("--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key")
    if t.grpc_server_with_client_auth and not t.grpc_server_cacert:
        parser.error("--grpc-server-with-client-auth needs --grpc-server-cacert (the CA that"
                     " signs client certificates)")
    for name, path in files.items():
        if path is not None and not os.access(path, os.R_OK):
            parser.error(f"{name} {path}: cannot read the file")
    return ServerTls(t.grpc_server_cert, t.grpc_server_key, t.grpc_server_cacert,
                     t.grpc_server_with_client_auth)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the switch until SIGINT/SIGTERM; the exit status."""
    config = parse_args(sys.argv[1:] if argv is None else argv, sys.argv[0])
    from bufferlab.switch.process import run

    return run(config)


if __name__ == "__main__":
    sys.exit(main())
