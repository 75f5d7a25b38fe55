"""A scenario run live: its network in Mininet (`experiments/scenario`'s LiveScenario, with
`live_plan`'s topology), the kernel's TCP in iperf3, UDP sources in bufferlab-gen, and
every counter that proves the emulator was not the bottleneck.

Before and after the trial it reads each switch's counters (`show_port_counters`: live
ports' kernel drops, oversize frames, send failures, the engine's totals), the P4
admission's drops (`port_drops` over P4Runtime) and every veth's dropped frames at both
ends; a frame lost anywhere but the admission, or a switch whose packet thread was busy
more than ``cpu_saturation`` of the trial (it could not keep up), makes the run invalid.
Every process is SCHED_FIFO, the switch's packet thread above the hosts' tools (as
esnet_buffer found necessary on two shared cores).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bufferlab.controller.client import entity
from bufferlab.controller.entities import counter_entry
from bufferlab.experiments.common.accounting import (
    Snapshot,
    SwitchCounters,
    account,
    link_drops,
    parse_switch_counters,
)
from bufferlab.experiments.common.buffer_engine import compiled_program
from bufferlab.experiments.common.host_tools import (
    FINISH_GRACE_S,
    HostProcesses,
    output_of,
    require_congestion_control,
    set_link_options,
    set_route_options,
    wait_until,
)
from bufferlab.experiments.common.lifecycle import ClosedOnFailedStart
from bufferlab.experiments.common.live_switch import COUNTER_PUBLISH_WAIT_S, pin_neighbour
from bufferlab.experiments.common.realtime import make_realtime
from bufferlab.experiments.common.traffic_tools import iperf_server_argv, parse_iperf_json
from bufferlab.experiments.esnet_buffer.live import raise_packet_thread
from bufferlab.experiments.scenario import Scenario
from bufferlab.experiments.scenario.live import LiveScenario
from bufferlab.experiments.tcp_validation.live_plan import (
    FlowPlan,
    LivePlan,
    SourcePlan,
    live_plan,
    live_scenario,
)
from bufferlab.experiments.tcp_validation.measure import FlowResult, RunResult
from bufferlab.mininet.network import LabNetwork
from bufferlab.switch.runtime_cli import RuntimeCliConnection

#: The name bufferlab-switch gives its packet thread (switch/src/live).
PACKET_THREAD = "packets"
ADMISSION_COUNTER = "port_drops"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _tool(name: str) -> str:
    """A bufferlab command beside this Python (`ip netns exec` keeps no venv PATH)."""
    return str(Path(sys.executable).with_name(name))


def generator_argv(source: SourcePlan, dst_ip: str) -> list[str]:
    """bufferlab-gen for ``source``: sleeping between departures (the cores are the
    switch's), ``burst_frames`` back to back per departure."""
    return [_tool("bufferlab-gen"), "--dst", dst_ip, "--port", str(source.port),
            "--rate-bps", str(source.rate_bps), "--frame-size", str(source.frame_bytes),
            "--duration-s", f"{source.duration_s:g}", "--burst-frames",
            str(source.burst_frames), "--spin-ns", "0", "--dscp", str(source.dscp)]


def sink_argv(source: SourcePlan) -> list[str]:
    """bufferlab-recv counting ``source``'s frames."""
    return [_tool("bufferlab-recv"), "--port", str(source.port), "--duration-s",
            str(math.ceil(source.start_s + source.duration_s) + 3), "--idle-timeout-s", "3"]


def client_argv(flow: FlowPlan, dst_ip: str, omit_s: int, duration_s: float) -> list[str]:
    """iperf3's client for ``flow``: a bulk flow runs to the scenario's end, the first
    ``omit_s`` seconds left out (-O); a finite one sends its bytes (-n)."""
    argv = ["iperf3", "--client", dst_ip, "--port", str(flow.port), "--congestion",
            flow.congestion, "--json", *flow.extra_argv]
    if flow.bytes is None:
        seconds = round(duration_s - flow.start_s - omit_s)
        argv += ["--time", str(seconds), "--omit", str(omit_s)]
    else:
        argv += ["--bytes", str(flow.bytes)]
    return argv


@dataclass(frozen=True)
class _Cpu:
    """CPU time (clock ticks) of each switch's packet thread at one moment."""

    ticks: dict[str, int]
    at: float


class LiveRunner(ClosedOnFailedStart):
    """The scenario's network up, hosts set for its flows; ``run()`` one trial at a time.
    A context manager (root)."""

    def __init__(self, scenario: Scenario, omit_s: int, work_dir: str | Path | None = None,
                 netns_prefix: str = "bl-tcpv-", cpu_saturation: float = 0.9,
                 switch_binary: str | None = None) -> None:
        """Checks the scenario against what the live world can run (ScenarioError)."""
        self.scenario = scenario
        self.omit_s = omit_s
        self.plan: LivePlan = live_plan(scenario, omit_s)
        self.cpu_saturation = cpu_saturation
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="tcp_validation_"))
        self._live = LiveScenario(live_scenario(scenario), self.work_dir, switch_binary,
                                  netns_prefix)
        self._clis: dict[str, RuntimeCliConnection] = {}
        self._index = compiled_program().index

    @property
    def _lab(self) -> LabNetwork:
        if self._live.lab is None:
            raise RuntimeError("the live network is not up (use the runner as a context "
                               "manager)")
        return self._live.lab

    def netns(self, host: str) -> str:
        """The named namespace of ``host``."""
        return self._lab.netns(host)

    def switch_pid(self, switch: str) -> int:
        """The process id of ``switch``."""
        return self._lab.host(switch).process.pid

    def _start(self) -> None:
        """Bring the scenario's network up, the switches SCHED_FIFO, the hosts set."""
        require_congestion_control(*{f.congestion for f in self.plan.flows})
        self._live.start()
        lab = self._lab
        topo = self.scenario.topology
        for name in topo.switches:
            make_realtime(self.switch_pid(name))
            raise_packet_thread(self.switch_pid(name))
            self._clis[name] = RuntimeCliConnection(
                port=lab.switch_options(topo.switches[name]).thrift_port)
        for host, settings in self.plan.sysctls.items():
            for name, value in settings.items():
                _run(["ip", "netns", "exec", self.netns(host), "sysctl", "-qw",
                      f"{name}={value}"])
        for host, options in self.plan.route_options.items():
            set_route_options(self.netns(host), options)
        for host, options in self.plan.link_options.items():
            set_link_options(self.netns(host), options)
        hosts = list(topo.hosts.values())
        for a in hosts:
            for b in hosts:
                if a is not b:
                    pin_neighbour(self.netns(a.name), b.ip.split("/")[0], b.mac)

    def close(self) -> None:
        """Takes the network down (safe to call twice)."""
        try:
            for cli in self._clis.values():
                cli.close()
            self._clis.clear()
        finally:
            self._live.stop()
            if self._own_dir:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    # -- counters ---------------------------------------------------------------------------

    def _ports(self, switch: str) -> list[int]:
        return sorted(self.scenario.topology.switch_ports(switch))

    def _snapshot(self, switch: str) -> Snapshot:
        counters = parse_switch_counters(self._clis[switch].run("show_port_counters").text)
        connection = self._live.connections[switch]
        admission = 0
        for port in self._ports(switch):
            (found,) = connection.read(entity(counter_entry(self._index, ADMISSION_COUNTER,
                                                            port)))
            admission += found.counter_entry.data.packet_count
        return Snapshot(counters, {}, admission)

    def _links(self) -> dict[str, dict[str, int]]:
        links = {}
        for host in self.scenario.topology.hosts:
            links[f"{host} eth0"] = link_drops(_run(["ip", "-n", self.netns(host), "-j", "-s",
                                                     "link", "show", "eth0"]))
        for switch in self.scenario.topology.switches:
            for port in self._ports(switch):
                dev = f"{switch}-eth{port}"
                links[f"root {dev}"] = link_drops(_run(["ip", "-j", "-s", "link", "show", dev]))
        return links

    def _cpu(self) -> _Cpu:
        ticks = {}
        for switch in self.scenario.topology.switches:
            tasks = Path(f"/proc/{self.switch_pid(switch)}/task")
            total = 0
            for task in tasks.iterdir():
                if (task / "comm").read_text().strip() == PACKET_THREAD:
                    fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                    total += int(fields[11]) + int(fields[12])  # utime, stime
            ticks[switch] = total
        return _Cpu(ticks, time.monotonic())

    # -- a trial ----------------------------------------------------------------------------

    def _ip(self, host: str) -> str:
        return self.scenario.topology.hosts[host].ip.split("/")[0]

    def _listening(self, host: str, port: int) -> bool:
        out = _run(["ip", "netns", "exec", self.netns(host), "ss", "-Hltn"])
        return any(len(line.split()) > 3 and line.split()[3].endswith(f":{port}")
                   for line in out.splitlines())

    def run(self) -> RunResult:
        """One trial of the scenario: sinks and servers up, counters read, every flow and
        source started at its time, outputs collected, counters read again."""
        duration_s = self.scenario.duration_ns / 1e9
        plan = self.plan
        with HostProcesses() as procs:
            sinks = {s.name: procs.start(self.netns(s.destination), sink_argv(s),
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                     for s in plan.sources}
            for flow in plan.flows:
                procs.start(self.netns(flow.receiver), iperf_server_argv(flow.port),
                            stdout=subprocess.DEVNULL)
                wait_until(lambda f=flow: self._listening(f.receiver, f.port),
                           f"the iperf3 server of {flow.name}")
            time.sleep(0.3)
            before = {sw: self._snapshot(sw) for sw in self.scenario.topology.switches}
            links_before = self._links()
            cpu_before = self._cpu()
            t0 = time.monotonic()
            events: list[tuple[float, SourcePlan | FlowPlan]] = sorted(
                [(s.start_s, s) for s in plan.sources] + [(f.start_s, f) for f in plan.flows],
                key=lambda e: e[0])
            gens: dict[str, subprocess.Popen[str]] = {}
            clients: dict[str, subprocess.Popen[str]] = {}
            for start_s, item in events:
                time.sleep(max(0.0, t0 + start_s - time.monotonic()))
                if isinstance(item, SourcePlan):
                    gens[item.name] = procs.start(self.netns(item.host), generator_argv(
                        item, self._ip(item.destination)), stdout=subprocess.PIPE)
                else:
                    clients[item.name] = procs.start(self.netns(item.sender), client_argv(
                        item, self._ip(item.receiver), self.omit_s, duration_s),
                        stdout=subprocess.PIPE)
            deadline = duration_s + FINISH_GRACE_S
            reports = {name: parse_iperf_json(output_of(p, deadline, f"iperf3 {name}"))
                       for name, p in clients.items()}
            sent = {name: _json_last(output_of(p, deadline, f"bufferlab-gen {name}"))
                    for name, p in gens.items()}
            received = {name: _json_last(output_of(p, deadline, f"bufferlab-recv {name}"))
                        for name, p in sinks.items()}
            cpu_after = self._cpu()
        time.sleep(COUNTER_PUBLISH_WAIT_S)
        after = {sw: self._snapshot(sw) for sw in self.scenario.topology.switches}
        return self._result(before, after, links_before, self._links(), cpu_before, cpu_after,
                            reports, sent, received)

    def _result(self, before: dict[str, Snapshot], after: dict[str, Snapshot],
                links_before: dict[str, dict[str, int]], links_after: dict[str, dict[str, int]],
                cpu_before: _Cpu, cpu_after: _Cpu, reports: dict, sent: dict,
                received: dict) -> RunResult:
        losses: dict[str, int] = {}
        admission = 0
        for sw in after:
            one = account(before[sw], after[sw])
            admission += one.admission_drops
            losses.update({f"{sw} {where}": n for where, n in one.losses.items()})
        empty = SwitchCounters({}, {}, {})
        links = account(Snapshot(empty, links_before, 0), Snapshot(empty, links_after, 0))
        losses.update(links.losses)
        notes: dict[str, float] = {}
        problems = []
        wall = cpu_after.at - cpu_before.at
        for sw, ticks in cpu_after.ticks.items():
            share = (ticks - cpu_before.ticks[sw]) / CLOCK_TICKS / wall if wall > 0 else 0.0
            notes[f"{sw}_packet_thread_cpu"] = round(share, 3)
            if share > self.cpu_saturation:
                problems.append(f"{sw}'s packet thread busy {share:.0%} of the trial "
                                f"(saturated above {self.cpu_saturation:.0%})")
        for name, doc in sent.items():
            notes[f"{name}_sent_frames"] = float(doc.get("sent_frames", 0))
        for name, doc in received.items():
            notes[f"{name}_received_frames"] = float(
                doc.get("total", {}).get("received_frames", 0))
        notes["load_average_1min"] = os.getloadavg()[0]
        flows = tuple(FlowResult(f.name, reports[f.name].received_bytes,
                                 reports[f.name].seconds, reports[f.name].retransmits)
                      for f in self.plan.flows)
        return RunResult("live", flows, admission, losses, notes, tuple(problems))


def _json_last(text: str) -> dict:
    """The last line a bufferlab tool printed, as JSON ({} if it printed none)."""
    lines = text.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def _run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout
