"""The live network: a sender and a receiver through bufferlab-switch in Mininet, real TCP.

Host `snd` (10.0.1.1, port 1) plays the seed's evagore/antonia, host `rcv` (10.0.1.2, port
2) pharlap. The switch (`s18`) runs p4src/buffer_switch.p4 compiled by bufferlab-p4c; its
port 2 is the bottleneck, shaped by the switch's port model (10 Mbit/s for the shares, 100
Mbit/s for the ping study, 24 bytes of wire overhead per frame); port 1 is unshaped. The
controller applies `switch_config` over P4Runtime (DSCP → queue, per-class caps) and sets
the run's scheduler weights through the runtime CLI, which also changes the port's rate.

Traffic is iperf3 (one client per class on `snd`, `-S` TOS, one server per class on
`rcv`), Linux ping with `-Q` TOS, and bufferlab's timestamped probes (one sender thread per
class on `snd`, a receiver on `rcv` that the kernel hands probes only). tcpdump on `rcv`
records the headers of every data frame with its kernel receive time.

Every trial reads the network's counters before and after (`accounting`): a trial that
lost a frame anywhere but the program's admission runs again, up to `ATTEMPTS` times, and
is reported invalid if it never came out clean.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bufferlab.controller.client import entity
from bufferlab.controller.entities import counter_entry
from bufferlab.controller.scheduler import scheduler_commands
from bufferlab.experiments.common.accounting import (
    Snapshot,
    account,
    link_drops,
    parse_switch_counters,
)
from bufferlab.experiments.common.buffer_engine import (
    TM_POOL_FACTOR,
    host_mac,
)
from bufferlab.experiments.common.host_tools import (
    FINISH_GRACE_S,
    HostProcesses,
    output_of,
    require_congestion_control,
    set_route_options,
    wait_until,
)
from bufferlab.experiments.common.lifecycle import ClosedOnFailedStart
from bufferlab.experiments.common.live_switch import (
    COUNTER_PUBLISH_WAIT_S,
    LiveSwitch,
    pin_neighbour,
    start_live_switch,
)
from bufferlab.experiments.common.traffic_tools import (
    iperf_client_argv,
    iperf_server_argv,
    parse_iperf_json,
    parse_ping,
    ping_argv,
)
from bufferlab.experiments.common.wire import FCS_BYTES, IFG_BYTES, PREAMBLE_BYTES
from bufferlab.experiments.qbss.backend import PhaseTrial, PingTrial
from bufferlab.experiments.qbss.capture import read_capture, tcpdump_argv, tcpdump_drops
from bufferlab.experiments.qbss.config import (
    CLASSES,
    PhaseRun,
    QbssConfig,
    TrafficClass,
    class_by_name,
)
from bufferlab.experiments.qbss.switch_config import (
    BOTTLENECK_PORT,
    SENDER_PORT,
    SWITCH_ID,
    switch_config,
)
from bufferlab.experiments.qbss.workload import (
    PHASES,
    iperf_port,
    phase_schedule,
)
from bufferlab.mininet.switch import default_switch_binary
from bufferlab.mininet.topology import Topology, parse_topology
from bufferlab.switch.runtime_cli import RuntimeCliConnection
from bufferlab.traffic.probe import (
    ProbeReceiver,
    ProbeRecord,
    ProbeSender,
    ProbeSent,
    attach_tx_timestamps,
)

SENDER, RECEIVER = "snd", "rcv"
HOST_PORTS = {SENDER: SENDER_PORT, RECEIVER: BOTTLENECK_PORT}
# Switch s<N>: N sets its device id and its interfaces' names in the root namespace, so one
# unlikely to be another lab's (tor_switch's live backend is s16).
SWITCH_INDEX = 18
SWITCH = f"s{SWITCH_INDEX}"
# A trial that lost frames outside admission runs again, up to this many times in all.
ATTEMPTS = 2
# Time after its last probe that the probe receiver waits for stragglers, s.
PROBE_WAIT_S = 2.0


def host_ip(host: str) -> str:
    """The tutorials' address of ``host``: 10.0.<switch id>.<its port>."""
    return f"10.0.{SWITCH_ID}.{HOST_PORTS[host]}"


def qbss_topology(config: QbssConfig) -> Topology:
    """snd on port 1 (unshaped), rcv on port 2 shaped to the bottleneck; three queues per
    port and a traffic-manager pool larger than the program's (only P4 admission drops)."""
    program_pool = switch_config(config.ping_weights_pct, config.queue_cap_frames).pool_bytes
    return parse_topology({
        "hosts": {h: {"ip": f"{host_ip(h)}/24", "mac": host_mac(SWITCH_ID, p)}
                  for h, p in HOST_PORTS.items()},
        "switches": {SWITCH: {"priority_queues": len(CLASSES),
                              "pool_bytes": TM_POOL_FACTOR * program_pool}},
        "links": [
            {"a": SENDER, "b": f"{SWITCH}-p{SENDER_PORT}"},
            {"a": RECEIVER, "b": f"{SWITCH}-p{BOTTLENECK_PORT}", "rate_bps": config.bottleneck_bps,
             "wire_overhead_bytes": PREAMBLE_BYTES + IFG_BYTES + FCS_BYTES},
        ],
    })


class _Worker:
    """A function on its own thread, started at once; `finish` waits and re-raises its error."""

    def __init__(self, body: Callable[[], object], name: str) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(body,), name=name)
        self._thread.start()

    def _run(self, body: Callable[[], object]) -> None:
        try:
            body()
        except BaseException as err:  # handed to the caller by finish()
            self._error = err

    def finish(self) -> None:
        """Wait for the function to end; raise what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error


class LiveLab(ClosedOnFailedStart):
    """The network, switch, controller and tools; a context manager (root)."""

    def __init__(self, config: QbssConfig, work_dir: str | Path | None = None,
                 binary: str | None = None) -> None:
        """``work_dir`` holds the build files, the switch's log and the captures (a temporary
        folder by default, removed at exit); ``binary`` is the switch (bufferlab-switch)."""
        self.config = config
        self._binary = binary or default_switch_binary()
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="qbss_live_"))
        self._live: LiveSwitch | None = None
        self._cli: RuntimeCliConnection | None = None

    def describe(self) -> list[tuple[str, str]]:
        """What runs, with units."""
        c = self.config
        cap = switch_config(c.ping_weights_pct, c.queue_cap_frames).ports[BOTTLENECK_PORT]
        return [
            ("network", f"Mininet: {SENDER} ({host_ip(SENDER)}) and {RECEIVER} "
                        f"({host_ip(RECEIVER)}) through one bufferlab-switch; real Linux TCP"),
            ("switch", "p4src/buffer_switch.p4 compiled by bufferlab-p4c, in bufferlab-switch"),
            ("classes", "DSCP 8 (TOS 32) → queue 0 QBSS, default → queue 1 BE, DSCP 10 "
                        "(TOS 40) → queue 2 priority; seed002_qbss.json by the controller"),
            ("bottleneck", f"switch port {BOTTLENECK_PORT} towards {RECEIVER}: "
                           f"{c.bottleneck_bps:,} bit/s (ping study {c.ping_bottleneck_bps:,} "
                           "bit/s), 24 bytes of wire overhead per frame"),
            ("TCP", f"Linux, congestion control {c.congestion}, iperf3 3.x clients"),
            ("scheduler", "deficit round robin between the three queues, weights in % of the "
                          "port from the config, through the runtime CLI"),
            ("queue caps", f"{c.queue_cap_frames} full-size frames per class "
                           f"({cap.queue_caps_bytes[0]:,} bytes), tail drop by the P4 "
                           "admission"),
        ]

    def _start(self) -> None:
        """Compile, start the network and the switch, apply the config."""
        c = self.config
        require_congestion_control(c.congestion)
        self._live = start_live_switch(qbss_topology(c), SWITCH,
                                       switch_config(c.ping_weights_pct, c.queue_cap_frames),
                                       self.work_dir, self._binary)
        for host, peer in ((SENDER, RECEIVER), (RECEIVER, SENDER)):
            pin_neighbour(self._live.lab.netns(host), host_ip(peer),
                          host_mac(SWITCH_ID, HOST_PORTS[peer]))
        set_route_options(self._live.lab.netns(SENDER), {"congctl": c.congestion})
        self._cli = RuntimeCliConnection(port=self._live.thrift_port)

    def close(self) -> None:
        """Disconnect and take the network down (safe to call twice)."""
        try:
            if self._cli is not None:
                self._cli.close()
                self._cli = None
        finally:
            if self._live is not None:
                self._live.close()
                self._live = None
            if self._own_dir:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    # -- the switch -------------------------------------------------------------------------

    def _run_cli(self, line: str) -> str:
        if self._cli is None:
            raise RuntimeError("the live lab is not started (use it as a context manager)")
        answer = self._cli.run(line)
        if not answer.ok:
            raise RuntimeError(f"{SWITCH} runtime CLI: {line}: {answer.text}")
        return answer.text

    def configure(self, weights_pct: tuple[int, ...], rate_bps: int) -> None:
        """The bottleneck's scheduler weights (the controller's commands) and rate."""
        for line in scheduler_commands(switch_config(weights_pct, self.config.queue_cap_frames)):
            self._run_cli(line)
        self._run_cli(f"set_port_rate {BOTTLENECK_PORT} {rate_bps}")

    def _running(self) -> LiveSwitch:
        if self._live is None:
            raise RuntimeError("the live lab is not started (use it as a context manager)")
        return self._live

    def _netns(self, host: str) -> str:
        return self._running().lab.netns(host)

    def snapshot(self) -> Snapshot:
        """Every counter `accounting` compares: the switch's, the veths', admission drops."""
        live = self._running()
        links = {}
        for netns, dev in ((self._netns(SENDER), "eth0"), (self._netns(RECEIVER), "eth0"),
                           (None, f"{SWITCH}-eth{SENDER_PORT}"),
                           (None, f"{SWITCH}-eth{BOTTLENECK_PORT}")):
            where = ["-n", netns] if netns else []
            out = subprocess.run(["ip", *where, "-j", "-s", "link", "show", dev], check=True,
                                 capture_output=True, text=True).stdout
            links[f"{netns or 'root'} {dev}"] = link_drops(out)
        cells = [counter_entry(live.switch.index, "queue_drops", port * 8 + c.queue)
                 for port in (SENDER_PORT, BOTTLENECK_PORT) for c in CLASSES]
        drops = sum(e.counter_entry.data.packet_count
                    for e in live.connection.read(*map(entity, cells)))
        return Snapshot(parse_switch_counters(self._run_cli("show_port_counters")), links,
                        drops)

    def _listening(self, ports: list[int]) -> bool:
        out = subprocess.run(["ip", "netns", "exec", self._netns(RECEIVER), "ss", "-Hltn"],
                             capture_output=True, text=True).stdout
        open_ports = {line.split()[3].rpartition(":")[2] for line in out.splitlines()
                      if len(line.split()) > 3}
        return all(str(p) in open_ports for p in ports)

    # -- trials -----------------------------------------------------------------------------

    def phase_trial(self, run: PhaseRun) -> PhaseTrial:
        """The seed's five phases with ``run``'s weights, window and BE streams."""
        reruns: list[str] = []
        while True:
            trial = self._phase_trial_once(run)
            if trial.accounting.valid or len(reruns) + 1 == ATTEMPTS:
                return replace(trial, reruns=tuple(reruns))
            reruns.append(trial.accounting.describe())

    def _phase_trial_once(self, run: PhaseRun) -> PhaseTrial:
        c = self.config
        self.configure(run.weights_pct, c.bottleneck_bps)
        capture = self.work_dir / f"{run.name}.pcap"
        rcv = self._netns(RECEIVER)
        flows = phase_schedule(c.phase_s)
        with HostProcesses() as procs:
            for flow in flows:
                procs.start(rcv, iperf_server_argv(iperf_port(flow.cls)),
                            stdout=subprocess.DEVNULL)
            wait_until(lambda: self._listening([iperf_port(f.cls) for f in flows]),
                   "the iperf3 servers")
            log = self.work_dir / f"{run.name}.tcpdump.log"
            with open(log, "w") as err:
                dump = procs.start(rcv, tcpdump_argv("eth0", capture,
                                                     [iperf_port(f.cls) for f in flows]),
                                   stdout=subprocess.DEVNULL, stderr=err)
            wait_until(lambda: "listening on" in log.read_text(), "tcpdump")
            before = self.snapshot()
            start_ns, start = time.time_ns(), time.monotonic()
            clients, lag = {}, 0.0
            for flow in flows:
                time.sleep(max(0.0, start + flow.start_s - time.monotonic()))
                lag = max(lag, time.monotonic() - start - flow.start_s)
                streams = run.be_streams if flow.cls.name == "be" else 1
                clients[flow.cls.name] = procs.start(
                    self._netns(SENDER),
                    iperf_client_argv(host_ip(RECEIVER), iperf_port(flow.cls), flow.cls.tos,
                                      flow.duration_s, c.congestion, run.window_bytes, streams),
                    stdout=subprocess.PIPE)
            iperf = {name: parse_iperf_json(output_of(p, PHASES * c.phase_s + FINISH_GRACE_S,
                                                    f"iperf3 ({name})"))
                     for name, p in clients.items()}
            time.sleep(COUNTER_PUBLISH_WAIT_S)
            dump.terminate()
            dump.wait()
            after = self.snapshot()
        accounting = account(before, after, tcpdump_drops(log.read_text()))
        return PhaseTrial(run, start_ns, lag, read_capture(capture), iperf, accounting)

    def ping_trial(self, bulk: str | None) -> PingTrial:
        """Ping and probe every class for ``ping_s`` while a bulk flow of class ``bulk``
        (None: none) runs over the ping study's bottleneck."""
        reruns: list[str] = []
        while True:
            trial = self._ping_trial_once(bulk)
            if trial.accounting.valid or len(reruns) + 1 == ATTEMPTS:
                return replace(trial, reruns=tuple(reruns))
            reruns.append(trial.accounting.describe())

    def _ping_trial_once(self, bulk: str | None) -> PingTrial:
        c = self.config
        self.configure(c.ping_weights_pct, c.ping_bottleneck_bps)
        snd, rcv = self._netns(SENDER), self._netns(RECEIVER)
        bulk_class = class_by_name(bulk) if bulk else None
        with HostProcesses() as procs, ProbeReceiver("eth0", rcv, probes_only=True) as receiver:
            if bulk_class is not None:
                procs.start(rcv, iperf_server_argv(iperf_port(bulk_class)),
                            stdout=subprocess.DEVNULL)
                wait_until(lambda: self._listening([iperf_port(bulk_class)]), "the iperf3 server")
            before = self.snapshot()
            client = None
            if bulk_class is not None:
                client = procs.start(snd, iperf_client_argv(
                    host_ip(RECEIVER), iperf_port(bulk_class), bulk_class.tos,
                    c.ping_lead_s + c.ping_s + 1, c.congestion, c.ping_window_bytes),
                    stdout=subprocess.PIPE)
                time.sleep(c.ping_lead_s)
            # The socket is open (nothing is missed); the listener starts with the probes, so
            # its wait for a first probe does not run out during the lead.
            received: list[ProbeRecord] = []
            listener = _Worker(lambda: received.extend(
                receiver.receive(len(CLASSES) * c.probe_count, PROBE_WAIT_S)), "probe-receiver")
            pings = {cls.name: procs.start(snd, ping_argv(host_ip(RECEIVER), cls.tos,
                                                          c.ping_count, c.ping_interval_s),
                                           stdout=subprocess.PIPE)
                     for cls in CLASSES}
            sent = self._send_probes(snd)
            results = {name: parse_ping(output_of(p, c.ping_s + FINISH_GRACE_S, f"ping ({name})"))
                       for name, p in pings.items()}
            iperf = (parse_iperf_json(output_of(client, c.ping_s + FINISH_GRACE_S, "iperf3"))
                     if client is not None else None)
            listener.finish()
            time.sleep(COUNTER_PUBLISH_WAIT_S)
            after = self.snapshot()
        records = attach_tx_timestamps(received, sent)
        probes = {cls.name: [r for r in records if r.flow == cls.queue] for cls in CLASSES}
        return PingTrial(bulk, results, probes, c.probe_count, iperf, account(before, after))

    def _send_probes(self, netns: str) -> list[ProbeSent]:
        """``probe_count`` probes of every class at once, one thread per class; returns what
        was sent (with kernel TX timestamps)."""
        c = self.config
        sent: list[ProbeSent] = []
        interval_ns = round(1e9 / c.probe_rate_per_s)

        def send(cls: TrafficClass) -> None:
            with ProbeSender("eth0", host_mac(SWITCH_ID, SENDER_PORT),
                             host_mac(SWITCH_ID, BOTTLENECK_PORT), host_ip(SENDER),
                             host_ip(RECEIVER), flow=cls.queue, dscp=cls.dscp,
                             netns=netns) as sender:
                sent.extend(sender.send_paced(c.probe_count, interval_ns))

        workers = [_Worker(lambda cls=cls: send(cls), f"probes-{cls.name}") for cls in CLASSES]
        for w in workers:
            w.finish()
        return sent
