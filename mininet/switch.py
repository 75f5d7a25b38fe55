"""The Mininet node that runs a P4 switch process: bufferlab-switch, or BMv2's simple_switch_grpc.

Both take the same command line (the one the p4lang tutorials write); target options come
after `--`. bufferlab-switch additionally takes the port model (rate, propagation delay,
wire overhead per port, shared pool size), which real BMv2 does not have, so those options
are only passed to bufferlab-switch.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mininet.node import Switch

from bufferlab.mininet.topology import PortModel

BUFFERLAB_SWITCH = "bufferlab-switch"
#: How long a switch may take to open its gRPC port. The wait ends as soon as it does (or
#: the process exits); on a loaded machine (load 13 on two cores) bufferlab-switch took
#: more than 10 s to import its modules and load the TNA port, before its first log line.
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
LOG_TAIL_LINES = 40


class SwitchStartError(RuntimeError):
    """A switch process that exited or did not open its gRPC port; carries its log's tail."""


@dataclass
class SwitchOptions:
    """Everything that goes on a switch's command line, with units in the names."""

    device_id: int
    grpc_port: int
    thrift_port: int
    json_path: str | None = None
    grpc_host: str = "127.0.0.1"
    cpu_port: int | None = None
    priority_queues: int = 1
    pool_bytes: int | None = None
    pcap_dir: str | None = None
    log_console: bool = True
    port_models: dict[int, PortModel] = field(default_factory=dict)


def default_switch_binary() -> str:
    """bufferlab-switch beside this Python (the venv's), else the one on PATH."""
    beside = Path(sys.executable).with_name(BUFFERLAB_SWITCH)
    return str(beside) if beside.exists() else (shutil.which(BUFFERLAB_SWITCH) or BUFFERLAB_SWITCH)


def is_bufferlab_switch(binary: str) -> bool:
    """Whether `binary` is bufferlab's switch (which takes the port-model options)."""
    return Path(binary).name.startswith(BUFFERLAB_SWITCH)


def switch_argv(binary: str, interfaces: dict[int, str], options: SwitchOptions) -> list[str]:
    """The switch's command line, as simple_switch_grpc takes it (plus our port model)."""
    argv = [binary]
    for port, iface in sorted(interfaces.items()):
        argv += ["-i", f"{port}@{iface}"]
    if options.pcap_dir:
        argv += ["--pcap", options.pcap_dir]
    argv += ["--device-id", str(options.device_id)]
    argv += [options.json_path] if options.json_path else ["--no-p4"]
    if options.log_console:
        argv.append("--log-console")
    argv += ["--thrift-port", str(options.thrift_port), "--"]
    argv += ["--grpc-server-addr", f"{options.grpc_host}:{options.grpc_port}"]
    if options.cpu_port is not None:
        argv += ["--cpu-port", str(options.cpu_port)]
    if options.priority_queues > 1:
        argv += ["--priority-queues", str(options.priority_queues)]
    if is_bufferlab_switch(binary):
        if options.pool_bytes is not None:
            argv += ["--pool-bytes", str(options.pool_bytes)]
        for port, model in sorted(options.port_models.items()):
            if model.rate_bps:
                argv += ["--port-rate", f"{port}:{model.rate_bps}"]
            if model.delay_ns:
                argv += ["--port-delay", f"{port}:{model.delay_ns}"]
            argv += ["--port-overhead", f"{port}:{model.wire_overhead_bytes}"]
    return argv


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a log file (empty when it does not exist)."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def port_is_listening(host: str, port: int) -> bool:
    """Whether something accepts TCP connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


class P4Switch(Switch):
    """A switch node whose data plane is a P4 switch process on the node's interfaces."""

    def __init__(
        self,
        name: str,
        options: SwitchOptions,
        binary: str = BUFFERLAB_SWITCH,
        log_dir: str = "logs",
        **params: object,
    ) -> None:
        super().__init__(name, **params)
        self.options = options
        self.binary = binary
        self.log_path = Path(log_dir) / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def interfaces(self) -> dict[int, str]:
        """Port number -> interface name, for every data-plane port of the node."""
        return {port: intf.name for port, intf in self.intfs.items() if intf.name != "lo"}

    def start(self, controllers: list[object]) -> None:
        """Start the switch process and wait until its gRPC server listens."""
        argv = switch_argv(self.binary, self.interfaces(), self.options)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            log.write(("$ " + " ".join(argv) + "\n").encode())
            log.flush()
            try:
                self.process = subprocess.Popen(
                    argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
            except OSError as err:
                raise SwitchStartError(f"{self.name}: cannot run {argv[0]}: {err.strerror}") from err
        self._wait_until_listening()

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                break
            if port_is_listening(self.options.grpc_host, self.options.grpc_port):
                return
            time.sleep(0.05)
        code = self.process.poll() if self.process is not None else None
        state = f"exited with status {code}" if code is not None else "did not open its gRPC port"
        self.stop_process()
        raise SwitchStartError(
            f"P4 switch {self.name} {state} ({self.options.grpc_host}:{self.options.grpc_port});"
            f" its log {self.log_path} ends with:\n{log_tail(self.log_path)}"
        )

    def stop_process(self) -> None:
        """Stop the switch process (SIGTERM, then SIGKILL) if it runs."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        """Stop the process, then let Mininet remove the interfaces."""
        self.stop_process()
        super().stop(deleteIntfs)
