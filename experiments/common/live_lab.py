"""A topology brought up in Mininet with one P4 program, each switch configured by the controller.

`make cli` and the exercises run this: the program's BMv2 JSON and P4Info (compiled
beforehand, as `make build` does), a `topology.json` and one controller config per switch
(`sN-config.json`, `bufferlab.controller.config`). `LiveLab` starts the network (hosts
paced with tc where the topology's links say so; every switch process SCHED_FIFO,
`realtime.py`), installs the pipeline and writes the
config over P4Runtime as `bufferlab-ctl apply` does, logging each request to
`logs/<sw>-p4runtime-requests.txt` as the tutorials do, and keeps a read-only connection
per switch for counters and registers. `banner()` says where everything is and how to change
a threshold live; `start_view()` serves the live web view.

A TNA program (the lab's Tofino port, `p4src/tna/buffer_switch.p4`) runs the same way: the
controller writes what P4Runtime reaches and hands the config's traffic-manager settings
(the pool, thresholds, caps and PAUSE/PFC, as runtime CLI `tm_*` lines) to the lab, which
sends them to the switch's runtime CLI (`--thrift-port`) and logs them to
`logs/<sw>-tm-commands.txt`. `tm()` runs any runtime CLI command there, e.g. the TM's
queue depths in cells (`tm_counter_queue 3`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bufferlab.controller import entities
from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.config import Config
from bufferlab.controller.p4info import P4InfoIndex, load_p4info
from bufferlab.controller.tofino_mapping import EGRESS_POOL, cell_bytes_of, cells_up, on_tofino
from bufferlab.controller.values import decode
from bufferlab.controller.view.cli import start_view
from bufferlab.controller.view.server import LiveView
from bufferlab.experiments.common.realtime import make_realtime
from bufferlab.mininet.network import (
    GRPC_BASE_PORT,
    THRIFT_BASE_PORT,
    LabNetwork,
    NetworkOptions,
    log_banner,
)
from bufferlab.mininet.switch import default_switch_binary
from bufferlab.mininet.topology import Topology
from bufferlab.switch.runtime_cli import RuntimeCliConnection

#: Seconds the lab waits for one answer of a switch's runtime CLI.
RUNTIME_CLI_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Program:
    """A compiled P4 program: BMv2 JSON and P4Info text files."""

    json_path: Path
    p4info_path: Path


class LiveLab:
    """The network of `topology` running `program`, configured from `configs`; a context manager."""

    def __init__(self, topology: Topology, configs: dict[str, Config], program: Program,
                 options: NetworkOptions) -> None:
        """Nothing starts before `start` (or entering the `with` block)."""
        self.topology = topology
        self.configs = configs
        self.program = program
        self.options = options
        options.json_path = str(program.json_path)
        self.index = P4InfoIndex(load_p4info(program.p4info_path))
        self.network = LabNetwork(topology, options)
        self.readers: dict[str, SwitchConnection] = {}
        self.runtime_clis: dict[str, RuntimeCliConnection] = {}
        self.views: list[LiveView] = []

    @property
    def tofino(self) -> bool:
        """Whether the program is a TNA one (its buffer and PAUSE are Tofino's TM)."""
        return on_tofino(self.index)

    @property
    def cell_bytes(self) -> int:
        """The TM's cell size for a TNA program (80 B Tofino 1, 176 B Tofino 2)."""
        return cell_bytes_of(self.index, self.program.json_path.read_bytes())

    def start(self) -> LiveLab:
        """Bring the network up and configure every switch; on failure, take it down again."""
        try:
            self.network.start()
            for name in self.configs:
                # On a busy machine an ordinary switch process stalls for tens of ms; frames
                # piled up in its sockets then arrive at once and overflow the buffer that
                # PAUSE or admission was protecting (a check's drops the program did not make).
                make_realtime(self.switch_pid(name))
            for name, config in self.configs.items():
                self._configure(name, config)
                self.readers[name] = SwitchConnection(self.network.grpc_address(name),
                                                      self.device_id(name))
        except BaseException:
            self.stop()
            raise
        return self

    def switch_pid(self, switch: str) -> int:
        """The process id of a running switch."""
        return self.network.host(switch).process.pid

    def device_id(self, switch: str) -> int:
        """A switch's P4Runtime device id."""
        return self.network.switch_options(self.topology.switches[switch]).device_id

    def thrift_port(self, switch: str) -> int:
        """TCP port of a switch's runtime CLI (bufferlab-switch-cli --thrift-port)."""
        return self.network.switch_options(self.topology.switches[switch]).thrift_port

    def tm(self, switch: str, line: str) -> str:
        """Run one runtime CLI command on `switch` (e.g. `tm_counter_queue 3`); its answer,
        or RuntimeError with the switch's message if it refused."""
        cli = self.runtime_clis.get(switch)
        if cli is None:
            cli = self.runtime_clis[switch] = RuntimeCliConnection(
                port=self.thrift_port(switch), timeout_s=RUNTIME_CLI_TIMEOUT_S)
        answer = cli.run(line)
        if not answer.ok:
            raise RuntimeError(f"{switch} refused {line!r}: {answer.text}")
        return answer.text

    def _configure(self, name: str, config: Config) -> None:
        log_dir = Path(self.options.log_dir)
        with open(log_dir / f"{name}-p4runtime-requests.txt", "w") as requests, \
                SwitchConnection(self.network.grpc_address(name), self.device_id(name),
                                 request_log=requests) as connection:
            if not connection.connect():
                raise RuntimeError(f"{name}: another controller is primary")
            if not self.tofino:
                BufferSwitch(connection, self.index).apply(config,
                                                           self.program.json_path.read_bytes())
                return
            # The TM's settings go to the runtime CLI, as `bufferlab-ctl tm CONFIG |
            # bufferlab-switch-cli` would send them; the log shows each with its answer.
            with open(log_dir / f"{name}-tm-commands.txt", "w") as tm_log:
                def send(line: str) -> None:
                    tm_log.write(f"{line}\n{self.tm(name, line)}\n")

                BufferSwitch(connection, self.index, tm=send).apply(
                    config, self.program.json_path.read_bytes())

    def counter(self, switch: str, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of one counter cell, read over P4Runtime."""
        (found,) = self.readers[switch].read(entity(entities.counter_entry(self.index, name,
                                                                           index)))
        return found.counter_entry.data.packet_count, found.counter_entry.data.byte_count

    def packets_in(self, switch: str, name: str, indices: list[int]) -> int:
        """The packet counts of several cells of one counter summed, in one P4Runtime read
        (a check polls this while traffic runs: one round trip, not one per cell)."""
        found = self.readers[switch].read(*(entity(entities.counter_entry(self.index, name, i))
                                            for i in indices))
        return sum(f.counter_entry.data.packet_count for f in found)

    def register(self, switch: str, name: str, index: int) -> int:
        """One register cell, read over P4Runtime."""
        (found,) = self.readers[switch].read(entity(entities.register_entry(self.index, name,
                                                                            index)))
        return decode(found.register_entry.data.bitstring)

    def host_ports(self, switch: str) -> dict[int, str]:
        """Port -> name of the host on it, for every host linked to `switch`."""
        return {port: self.topology.peer(switch, port).node
                for port in sorted(self.topology.switch_ports(switch))
                if not self.topology.peer(switch, port).is_switch_port}

    def start_view(self, switch: str, http_port: int = 0, interval_s: float = 0.1,
                   title: str = "bufferlab") -> LiveView:
        """Serve the live view of `switch` on the loopback; it stops with the lab."""
        ports = sorted(self.topology.switch_ports(switch))
        view = start_view(self.network.grpc_address(switch), ports,
                          self.configs[switch].priority_queues, self.host_ports(switch),
                          http_port, interval_s, title, self.device_id(switch),
                          thrift_port=self.thrift_port(switch))
        self.views.append(view)
        return view

    def banner(self, example_port: int) -> str:
        """Where every log, capture and endpoint is, and how to change a threshold live."""
        lines = [log_banner(self.network)]
        for name in self.configs:
            address = self.network.grpc_address(name)
            ctl = f"bufferlab-ctl --grpc-addr {address} --device-id {self.device_id(name)}"
            if self.tofino:
                lines += self._tm_banner(name, ctl, example_port)
                continue
            lines += [
                f"  {name} P4Runtime requests: cat {self.options.log_dir}/"
                f"{name}-p4runtime-requests.txt",
                f"  change {name}'s thresholds live (from another shell, .venv/bin on PATH):",
                f"    {ctl} set {example_port} threshold 25%     (static share of the pool)",
                f"    {ctl} set {example_port} alpha 1/2         (dynamic threshold)",
                f"    {ctl} read counter port_drops {example_port}  (tail drops, frames and bytes)",
                f"    {ctl} read register port_occupancy {example_port}  (bytes queued now)",
            ]
        for view in self.views:
            lines.append(f"  live view: {view.url} (queues, drops, BCN, PAUSE, rates)")
        return "\n".join(lines)

    def _tm_banner(self, name: str, ctl: str, port: int) -> list[str]:
        """The banner's lines for a switch running a TNA program: its buffer, thresholds and
        PAUSE are the TM's, read and changed through the runtime CLI."""
        cli = f"bufferlab-switch-cli --thrift-port {self.thrift_port(name)}"
        cell = self.cell_bytes
        quarter = cells_up(self.configs[name].pool_bytes * 25 // 100, cell)
        slot = port * 8
        return [
            f"  {name} P4Runtime requests: cat {self.options.log_dir}/{name}-p4runtime-requests.txt",
            f"  {name} runs Tofino's TNA: buffer, thresholds and PAUSE are its traffic manager's"
            f" ({cell}-byte cells), set from the config: cat {self.options.log_dir}/"
            f"{name}-tm-commands.txt",
            f"  read and change {name}'s TM live (from another shell, .venv/bin on PATH):",
            f"    echo 'tm_counter_queue {port}' | {cli}   (queued now: cells, frames, bytes)",
            f"    echo 'tm_queue_buffer {port} 0 pool_id={EGRESS_POOL} pool_max_cells={quarter}"
            f" dynamic_baf=DISABLE' | {cli}   (static limit: 25% of the pool, cells)",
            f"    echo 'tm_queue_buffer {port} 0 pool_id={EGRESS_POOL} pool_max_cells=0"
            f" dynamic_baf=50%' | {cli}   (dynamic threshold, BAF 50%)",
            f"    echo 'tm_counter_eg_port {port}' | {cli}   (TM drops at port {port}, packets)",
            f"    echo 'tm_show' | {cli}   (cell size, pools in cells, PAUSE/XON frames sent)",
            f"    {ctl} read counter queue_tx {slot}  (frames and bytes sent from port {port}"
            " queue 0)",
        ]

    def stop(self) -> None:
        """Stop the views, close the connections, take the network down (safe twice)."""
        try:
            for view in self.views:
                view.stop()
            self.views.clear()
            for connection in self.readers.values():
                connection.close()
            self.readers.clear()
            for cli in self.runtime_clis.values():
                cli.close()
            self.runtime_clis.clear()
        finally:
            self.network.stop()

    def __enter__(self) -> LiveLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def add_network_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line options every live lab takes: where logs go, ports, the view."""
    parser.add_argument("--switch", default=None,
                        help="switch program (default bufferlab-switch; e.g. simple_switch_grpc)")
    parser.add_argument("--log-dir", type=Path, default=Path("logs"))
    parser.add_argument("--pcap-dir", type=Path, default=Path("pcaps"))
    parser.add_argument("--netns-prefix", default="bl-")
    parser.add_argument("--grpc-base-port", type=int, default=GRPC_BASE_PORT,
                        help="TCP port of s1's P4Runtime server (s2 gets the next one, ...)")
    parser.add_argument("--thrift-base-port", type=int, default=THRIFT_BASE_PORT,
                        help="TCP port of s1's runtime CLI")
    parser.add_argument("--view", action="store_true",
                        help="serve the live web view of s1 on 127.0.0.1 (see --view-port)")
    parser.add_argument("--view-port", type=int, default=8050,
                        help="TCP port of the live view (default %(default)s; 0 = any free one)")


def network_options(args: argparse.Namespace) -> NetworkOptions:
    """NetworkOptions from `add_network_arguments`' options; makes the log and pcap folders."""
    args.log_dir.mkdir(parents=True, exist_ok=True)
    args.pcap_dir.mkdir(parents=True, exist_ok=True)
    return NetworkOptions(switch_binary=args.switch or default_switch_binary(),
                          log_dir=str(args.log_dir), pcap_dir=str(args.pcap_dir),
                          netns_prefix=args.netns_prefix, grpc_base_port=args.grpc_base_port,
                          thrift_base_port=args.thrift_base_port)


def open_cli(lab: LiveLab, args: argparse.Namespace, title: str, hints: list[str]) -> None:
    """Start the view if asked, print the banner and `hints`, and open the Mininet CLI."""
    if args.view:
        lab.start_view(next(iter(lab.configs)), args.view_port, title=title)
    print(lab.banner(max(lab.host_ports(next(iter(lab.configs))))))
    print("\n".join(hints))
    from mininet.cli import CLI

    CLI(lab.network.net)
