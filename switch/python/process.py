"""The `bufferlab-switch` process: engine, live ports, P4Runtime server and runtime CLI.

Start-up, in order (any failure: one `error:` line naming what and why, exit status 1):

1. load the BMv2 JSON (or, with `--no-p4`, a program that drops every frame until a
   P4Runtime client sets one);
2. configure the engine: CPU port, drop port, priority queues and the port model
   (`--pool-bytes`, `--port-rate` bit/s, `--port-delay` ns, `--port-overhead` bytes);
3. open the `-i` interfaces (pcaps in `--pcap DIR`);
4. start the P4Runtime server on `--grpc-server-addr` and the runtime CLI on `--thrift-port`;
5. start the packet thread, print where everything is, and run until SIGINT/SIGTERM.

Shutdown stops the servers, then the packet thread (due frames are sent, pcaps flushed, ports
closed), and logs the final counters.

Log lines go to stdout with `--log-console` (Mininet redirects it to `logs/<sw>.log`), to a
file with `--log-file FILE`, else only warnings and errors go to stderr. Format::

    [16:02:03.123] [bufferlab-switch] [I] P4Runtime server listening on 0.0.0.0:50051

Levels (`-L`): trace (counters every second), debug (every P4Runtime pipeline change and
runtime CLI program change), info (start-up; the engine's log lines, prefixed `engine:`:
the P4 program's `log_msg`, failed asserts, drops it reports; shutdown), warn, error, off.

At debug and trace, with `--log-console` or `--log-file`, every packet is traced as BMv2
traces it (`packet_trace`): its lines carry BMv2's prefix (`[bmv2] [D] [thread N] [id.copy]
[cxt 0]`) and wording. At info and above the engine records nothing per packet.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType

from bufferlab.switch import _engine
from bufferlab.switch.cli import SwitchConfig
from bufferlab.switch.engine import Engine, EngineError, LoadError
from bufferlab.switch.p4runtime import RunningServer, serve
from bufferlab.switch.packet_trace import TRACE_LEVELS, format_rows
from bufferlab.switch.runtime_cli import Executor, RuntimeCliServer
from bufferlab.switch.runtime_cli.program import ProgramInfo
from bufferlab.switch.target import EngineTarget

log = logging.getLogger("bufferlab-switch")

TRACE = 5
LEVELS = {"trace": TRACE, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
          "error": logging.ERROR, "off": logging.CRITICAL + 10}
LETTERS = {TRACE: "T", logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W",
           logging.ERROR: "E", logging.CRITICAL: "C"}
#: How long the event thread waits for packet-ins and digests before looking at the log, s.
EVENT_WAIT_S = 0.1
#: How long a P4Runtime pipeline change waits for queued frames to leave, s.
PIPELINE_DRAIN_TIMEOUT_S = 2.0
#: How often counters are logged at trace level, s.
TRACE_INTERVAL_S = 1.0

#: `--no-p4`: parse nothing, drop everything (BMv2 forwards nothing without a program).
NO_PROGRAM_P4 = """
#include <core.p4>
#include <v1model.p4>
struct headers_t { }
struct metadata_t { }
parser NoParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t sm) { state start { transition accept; } }
control NoVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }
control NoIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { mark_to_drop(sm); }
}
control NoEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { }
}
control NoCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control NoDeparser(packet_out pkt, in headers_t hdr) { apply { } }
V1Switch(NoParser(), NoVerify(), NoIngress(), NoEgress(), NoCompute(), NoDeparser()) main;
"""


class StartupError(Exception):
    """The switch cannot start: the message says what and why."""


class _Format(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "bmv2", False):
            # A per-packet trace line, already in BMv2's form.
            return record.getMessage()
        record.letter = LETTERS.get(record.levelno, "?")
        return super().format(record)


def traces_packets(config: SwitchConfig) -> bool:
    """Whether this configuration writes the per-packet trace (a log at debug or trace)."""
    return (config.log_console or config.log_file is not None) and config.log_level in TRACE_LEVELS


def setup_logging(config: SwitchConfig) -> None:
    """Send the switch's log where the command line says, at its level."""
    if config.log_console:
        handler: logging.Handler = logging.StreamHandler(sys.stdout)
        level = LEVELS[config.log_level]
    elif config.log_file:
        handler = logging.FileHandler(config.log_file)
        level = LEVELS[config.log_level]
    else:
        handler = logging.StreamHandler(sys.stderr)
        level = max(LEVELS[config.log_level], logging.WARNING)
    handler.setFormatter(_Format("[%(asctime)s.%(msecs)03d] [bufferlab-switch] [%(letter)s] "
                                 "%(message)s", datefmt="%H:%M:%S"))
    log.handlers[:] = [handler]
    log.setLevel(level)
    log.propagate = False


def no_program_json() -> str:
    """BMv2 JSON of the drop-everything program that `--no-p4` runs."""
    from bufferlab.compiler import compile as compile_p4

    with tempfile.TemporaryDirectory(prefix="bufferlab-switch-") as tmp:
        source = Path(tmp) / "no_program.p4"
        source.write_text(NO_PROGRAM_P4)
        document, _ = compile_p4(source)
    return json.dumps(document)


def load_program(config: SwitchConfig) -> str:
    """The JSON text the switch starts with."""
    if config.json_path is None:
        return no_program_json()
    try:
        return Path(config.json_path).read_text()
    except OSError as err:
        raise StartupError(f"cannot read the BMv2 JSON {config.json_path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise StartupError(f"{config.json_path} is not a BMv2 JSON (not UTF-8 text: {err})") from None


def jit_summary(info: dict) -> str:
    """One log line saying how the program's actions, controls, parser and deparser run (`Engine.jit_info`)."""
    if not info["enabled"]:
        return "pipeline: interpreted (--no-jit)"
    total = info["compiled"] + info["interpreted"]
    line = (f"pipeline: {info['compiled']} of {total} blocks (actions, controls, checksum conditions), "
            f"{info['parser_states']} parse states and {info['deparser_headers']} deparser headers "
            "compiled to machine code in "
            f"{info['compile_us'] / 1000:.1f} ms")
    if info["fallbacks"]:
        line += "; interpreted: " + ", ".join(f"{block} ({why})" for block, why in info["fallbacks"])
    return line


def make_engine(config: SwitchConfig, json_text: str) -> Engine:
    """The engine with the program, CPU and drop ports, queues and port model."""
    kwargs = {} if config.pool_bytes is None else {"pool_bytes": config.pool_bytes}
    try:
        engine = Engine(json_text, jit=config.jit, **kwargs)
    except LoadError as err:
        raise StartupError(f"cannot load the BMv2 JSON {config.json_path}: {err}") from None
    except EngineError as err:
        raise StartupError(f"--pool-bytes {config.pool_bytes}: {err}") from None
    engine.set_cpu_port(config.cpu_port)
    engine.set_drop_port(config.drop_port)
    ports = set(config.interfaces) | set(config.port_models)
    if config.cpu_port is not None:
        ports.add(config.cpu_port)
    for port in sorted(ports):
        model = config.port_models.get(port)
        settings = {"num_queues": config.priority_queues}
        if model is not None:
            settings.update({k: v for k, v in (("rate_bps", model.rate_bps),
                                               ("delay_ns", model.delay_ns),
                                               ("wire_overhead_bytes", model.wire_overhead_bytes))
                             if v is not None})
        try:
            engine.configure_port(port, **settings)
        except EngineError as err:
            raise StartupError(f"port {port}: {err}") from None
    return engine


class SwitchProcess:
    """A running switch: engine, live ports, P4Runtime server, runtime CLI, event thread."""

    def __init__(self, config: SwitchConfig) -> None:
        """Start everything (see the module documentation); StartupError if anything fails,
        after undoing what was started."""
        self.config = config
        self.live: _engine.LiveSwitch | None = None
        self.grpc: RunningServer | None = None
        self.cli: RuntimeCliServer | None = None
        self._events: threading.Thread | None = None
        # Engine time 0 on the wall clock, for the trace's time stamps (set again at start).
        self._origin_wall_s = time.time()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        config = self.config
        json_text = load_program(config)
        self.engine = make_engine(config, json_text)
        if traces_packets(config):
            self.engine.set_trace(config.log_level)
        self.lock = threading.RLock()
        if config.pcap_dir is not None:
            try:
                Path(config.pcap_dir).mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise StartupError(f"--pcap {config.pcap_dir}: {err.strerror}") from None
        try:
            self.live = _engine.LiveSwitch(self.engine, sorted(config.interfaces.items()),
                                           config.pcap_dir)
        except OSError as err:
            raise StartupError(f"cannot open the interfaces: {err}") from None
        self.executor = Executor(self.engine, json_text, ports=config.interfaces,
                                 live_counters=self.live.port_counters)
        self.target = EngineTarget(self.engine, json_text, cpu_port=config.cpu_port,
                                   inject=self.live.inject, lock=self.lock,
                                   on_pipeline=self._pipeline_changed,
                                   drain_timeout_s=PIPELINE_DRAIN_TIMEOUT_S)
        # The runtime CLI listens before P4Runtime does: tools take an open P4Runtime port as
        # "the switch is up" and may use the runtime CLI at once (a TNA lab's TM settings).
        try:
            self.cli = RuntimeCliServer(self.executor, port=config.thrift_port, lock=self.lock)
        except OSError as err:
            raise StartupError(f"runtime CLI: cannot listen on 127.0.0.1:{config.thrift_port}"
                               f" (--thrift-port): {err.strerror}") from None
        self.cli.start()
        try:
            self.grpc = serve(self.target, config.device_id, config.grpc_address, config.grpc_tls)
        except (OSError, RuntimeError) as err:
            if getattr(err, "filename", None) is not None:
                raise StartupError(f"P4Runtime TLS: cannot read {err.filename}: {err.strerror}"
                                   ) from None
            raise StartupError(f"P4Runtime server: cannot listen on {config.grpc_address}"
                               f" (is the port in use?): {err}") from None
        self._origin_wall_s = time.time() - self.live.now_ns() / 1e9
        self.live.start()
        self._events = threading.Thread(target=self._forward_events, name="events", daemon=True)
        self._events.start()
        self._banner(json_text)

    def _banner(self, json_text: str) -> None:
        config = self.config
        if config.json_path:
            arch, target = self.engine.arch()
            program = f"{config.json_path} ({arch} for {target})"
        else:
            program = "none (--no-p4: every frame is dropped until a P4Runtime client sets a pipeline)"
        log.info("bufferlab-switch: device %d, program %s (%d bytes of JSON)", config.device_id,
                 program, len(json_text))
        log.info("%s", jit_summary(self.engine.jit_info()))
        for port, iface in sorted(config.interfaces.items()):
            settings = self.engine.port_config(port)
            log.info("port %d: %s (rate %d bit/s (0 = unlimited), delay %d ns, overhead %d"
                     " bytes/frame, %d queues)", port, iface, settings["rate_bps"],
                     settings["delay_ns"], settings["wire_overhead_bytes"], settings["num_queues"])
        if config.cpu_port is not None:
            log.info("CPU port %d: PacketOut enters here, frames sent here become PacketIn",
                     config.cpu_port)
        if config.pcap_dir is not None:
            log.info("pcaps: %s/<iface>_in.pcap and _out.pcap (read with: tcpdump -xxx -r FILE)",
                     config.pcap_dir)
        tls = config.grpc_tls
        security = ("plain gRPC" if tls is None else
                    "TLS, client certificates required" if tls.client_auth else "TLS")
        log.info("P4Runtime server listening on %s (device id %d, %s)", config.grpc_address,
                 config.device_id, security)
        log.info("runtime CLI: bufferlab-switch-cli --thrift-port %d", config.thrift_port)
        for option in config.ignored:
            log.warning("%s is accepted for compatibility and has no effect here", option)

    def _pipeline_changed(self, json_text: str) -> None:
        """A P4Runtime client set a new program: the runtime CLI learns its names."""
        self.executor.program = ProgramInfo.from_json(json_text)
        log.debug("P4Runtime: new pipeline loaded (%d bytes of JSON)", len(json_text))
        log.info("%s", jit_summary(self.engine.jit_info()))

    def _forward_events(self) -> None:
        """Hand packet-ins and digests to the P4Runtime server, the engine's log lines to the log."""
        assert self.live is not None
        last_trace = 0.0
        while True:
            packet_ins, digests, closed = self.live.wait_events(EVENT_WAIT_S)
            try:
                self.target.dispatch(packet_ins, digests)
            except Exception:
                log.exception("delivering packet-ins/digests to the P4Runtime server failed")
            for line in self.engine.log():
                log.info("engine: %s", line)
            self._write_trace()
            if log.isEnabledFor(TRACE) and time.monotonic() - last_trace >= TRACE_INTERVAL_S:
                last_trace = time.monotonic()
                log.log(TRACE, "counters: live %s engine %s", self.live.stats(), self.engine.stats())
            if closed:
                return

    def _write_trace(self) -> None:
        """Write the per-packet trace lines the engine recorded since the last call."""
        rows, lost = self.engine.take_trace()
        for letter, line in format_rows(rows, self._origin_wall_s, lost):
            level = {"T": TRACE, "D": logging.DEBUG}.get(letter, logging.WARNING)
            log.log(level, "%s", line, extra={"bmv2": True})

    def failure(self) -> str | None:
        """Why the packet thread stopped on its own (a port failed), or None."""
        return self.live.failure() if self.live is not None else None

    def stop(self) -> None:
        """Stop servers, packet thread and event thread; safe to call more than once."""
        if self.grpc is not None:
            self.grpc.stop(1.0)
            self.grpc = None
        if self.cli is not None:
            self.cli.close()
            self.cli = None
        if self.live is not None:
            self.live.stop()
            if self._events is not None:
                self._events.join(timeout=5)
                self._events = None
            self._write_trace()
            log.info("stopped; live counters %s", self.live.stats())
            for counters in self.live.port_counters():
                log.info("port %d (%s): %s", counters.pop("port"), counters.pop("iface"), counters)
            self.live = None


def run(config: SwitchConfig) -> int:
    """Run the switch until SIGINT/SIGTERM; 0 after a clean stop, 1 if it could not start or
    a port failed."""
    setup_logging(config)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("%s: stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        switch = SwitchProcess(config)
    except StartupError as err:
        log.error("%s", err)
        print(f"bufferlab-switch: error: {err}", file=sys.stderr, flush=True)
        return 1
    status = 0
    while not stop.wait(0.2):
        failure = switch.failure()
        if failure is not None:
            log.error("the packet thread stopped: %s", failure)
            print(f"bufferlab-switch: error: {failure}", file=sys.stderr, flush=True)
            status = 1
            break
    switch.stop()
    return status
