"""The live backend: hosts A, B, C on one bufferlab-switch in Mininet, the RFC 2544 tester.

The switch runs p4src/buffer_switch.p4 (compiled by bufferlab-p4c) with the port model of
the topology built here: every switch port shaped to the tester's line rate (frame + 20
bytes on the wire, the switch's 24-byte overhead counting the frame without FCS). Hosts A
and B are paced to the line rate by HTB, so a back-to-back burst reaches the switch at line
rate as a tester port sends it. The controller applies the cell's config over P4Runtime
(`BufferSwitch`, what `bufferlab-ctl apply` does) once and changes port C's threshold live
between cells (`bufferlab-ctl set 3 threshold N%`). Traffic is `bufferlab.traffic.rfc2544`'s
tester: A and B start together at a shared CLOCK_REALTIME instant, C's receiver counts.

**Latency** here is the sender's kernel TX timestamp at A or B → the kernel RX timestamp at
C, both CLOCK_REALTIME. It covers two veths, the switch process (AF_PACKET in and out, the
pipeline, the queue and port C's serialisation) and both host stacks' timestamping points.
The TX stamp is taken as the whole frame is handed to the veth, which carries it at once,
so it stands for "last bit in"; the switch releases a frame at the end of its slot on C, so
the RX stamp is "last bit out" plus the veth and C's stack: RFC 1242's store-and-forward
latency (measured to the last bit out, as the virtual backend does) plus a host overhead of
tens of µs that the switch's own pcap timestamps (`--pcap`, in at its port, out at its
port) would leave out. It does not change with the frame size or threshold, so slopes and
R² keep their meaning; absolute values are larger than the virtual backend's.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np

from bufferlab.controller.config import Threshold
from bufferlab.experiments.common.buffer_engine import (
    TM_POOL_FACTOR,
    host_mac,
)
from bufferlab.experiments.common.lifecycle import ClosedOnFailedStart
from bufferlab.experiments.common.live_switch import LiveSwitch, pin_neighbour, start_live_switch
from bufferlab.experiments.common.realtime import REALTIME_PRIORITY
from bufferlab.experiments.common.wire import FCS_BYTES, IFG_BYTES, PREAMBLE_BYTES, slot_ns
from bufferlab.experiments.tor_switch.backend import (
    LOST,
    BurstCell,
    BurstTrial,
    DelayCell,
    FrameRecords,
)
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.switch_config import SWITCH_ID, switch_config
from bufferlab.mininet.switch import default_switch_binary
from bufferlab.mininet.topology import Topology, parse_topology
from bufferlab.traffic import tc
from bufferlab.traffic.rfc2544.tester import SourcePort, Tester, TrialResult

HOSTS = ("a", "b", "c")
# Switch s<N>: N sets its device id and the names of its interfaces in the root namespace,
# so one unlikely to be another lab's s1.
SWITCH_INDEX = 16
SWITCH = f"s{SWITCH_INDEX}"
# HTB on A and B lets this many bytes leave at once from idle: less than the smallest frame,
# so a burst is paced from its first frame on (HTB lets a frame go on any non-negative
# token count, so a burst smaller than a frame does not hold frames back).
PACING_BURST_BYTES = 200
# Time after a trial's last frame before the receiver stops, s: port C's largest queue at
# the live grid's rate drains in well under this.
DEFAULT_WAIT_S = 0.5
# A back-to-back trial counts only if no frame of A or B left more than half a frame time
# behind the line-rate schedule from the first frame: a source that starts late or stalls
# lets C drain the other's frames meanwhile, so more frames fit. A busy machine sometimes
# holds a sender back, and then the trial runs again, up to this many times.
BURST_ATTEMPTS = 5


def host_ip(port: int) -> str:
    """The tutorials' address of the host on ``port`` of the switch: 10.0.<sw>.<port>."""
    return f"10.0.{SWITCH_ID}.{port}"


def tor_topology(config: TorConfig) -> Topology:
    """A, B, C on the switch's ports A, B, C; every switch port at the line rate, A and B
    paced to it; the traffic manager's pool larger than the program's (only P4 drops)."""
    ports = (config.port_a, config.port_b, config.port_c)
    links = [{"a": host, "b": f"{SWITCH}-p{port}", "rate_bps": config.port_rate_bps,
              "wire_overhead_bytes": PREAMBLE_BYTES + IFG_BYTES + FCS_BYTES}
             for host, port in zip(HOSTS, ports, strict=True)]
    return parse_topology({
        "hosts": {host: {"ip": f"{host_ip(port)}/24", "mac": host_mac(SWITCH_ID, port)}
                  for host, port in zip(HOSTS, ports, strict=True)},
        "switches": {SWITCH: {"pool_bytes": TM_POOL_FACTOR * config.pool_bytes}},
        "links": links,
    })


def pace_source(netns: str, rate_bps: int) -> None:
    """HTB on a source host's eth0 at the line rate with a burst and cburst of
    PACING_BURST_BYTES, so a back-to-back burst leaves at line rate from its first frame
    (the topology's `host_pacing` leaves cburst at tc's default, about one MTU more, which
    lets a few small frames out at once and shortens the burst the queue absorbs)."""
    tc.install_htb("eth0", rate_bps,
                   [tc.HtbClass(minor=2, rate_bps=rate_bps, ceil_bps=rate_bps,
                                burst_bytes=PACING_BURST_BYTES,
                                cburst_bytes=PACING_BURST_BYTES)],
                   default_minor=2, netns=netns)


def frame_records(trial: TrialResult) -> FrameRecords:
    """The tester's trial as per-frame records: kernel TX → kernel RX of every received
    frame; a lost frame's send time is interpolated from its source's received neighbours
    (only the latency window reads it). Times count from the trial's first send stamp."""
    frames = trial.frames
    if frames.size == 0:
        raise RuntimeError("port C received no frame of the trial: is the switch forwarding?")
    origin = int(frames["tx_ns"].min())
    sources, seqs, ins, outs = [], [], [], []
    for source, port in enumerate(trial.ports):
        mine = frames[frames["flow"] == port.flow]
        seq, first = np.unique(mine["seq"].astype(np.int64), return_index=True)
        tx = mine["tx_ns"][first].astype(np.int64) - origin
        rx = mine["rx_ns"][first].astype(np.int64) - origin
        every = np.arange(port.sent_frames, dtype=np.int64)
        out_ns = np.full(every.size, LOST, dtype=np.int64)
        known = seq < every.size
        out_ns[seq[known]] = rx[known]
        in_ns = (np.interp(every, seq, tx).astype(np.int64) if seq.size
                 else np.zeros(every.size, dtype=np.int64))
        in_ns[seq[known]] = tx[known]
        sources.append(np.full(every.size, source, dtype=np.int8))
        seqs.append(every)
        ins.append(in_ns)
        outs.append(out_ns)
    return FrameRecords(np.concatenate(sources), np.concatenate(seqs), np.concatenate(ins),
                        np.concatenate(outs))


def burst_lag_ns(trial: TrialResult, frame_ns: float) -> int:
    """How far any received frame of a back-to-back trial left behind the line-rate
    schedule that starts with the trial's first frame (seq × ``frame_ns``), ns (kernel TX
    stamps): a source that started late or stalled mid-burst shows here."""
    frames = trial.frames
    if frames.size == 0:
        raise RuntimeError("port C received no frame of the burst: is the switch forwarding?")
    origin = int(frames["tx_ns"].min())
    lag = frames["tx_ns"].astype(np.int64) - origin - frames["seq"].astype(np.int64) * frame_ns
    return int(lag.max())


class LiveBackend(ClosedOnFailedStart):
    """Runs the study's cells on bufferlab-switch in Mininet; a context manager (root)."""

    name = "live (Mininet, bufferlab-switch, RFC 2544 tester)"
    virtual = False
    cell_bytes = None  # buffer_switch.p4's admission counts bytes
    tm_overhead_bytes = 0

    def __init__(self, config: TorConfig, work_dir: str | Path | None = None,
                 binary: str | None = None, wait_s: float = DEFAULT_WAIT_S) -> None:
        """``work_dir`` holds the build files and the switch's log (a temporary folder by
        default); ``binary`` is the switch program (bufferlab-switch by default)."""
        self.config = config
        self.wait_s = wait_s
        self._binary = binary or default_switch_binary()
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="tor_switch_live_"))
        self._live: LiveSwitch | None = None
        self._tester: Tester | None = None
        self._threshold_pct: int | None = None
        self.last_burst_lag_ns = 0

    def describe(self) -> list[tuple[str, str]]:
        """What ran, with units."""
        c = self.config
        return [
            ("backend", self.name),
            ("switch program", "p4src/buffer_switch.p4 compiled by bufferlab-p4c, in "
                               "bufferlab-switch"),
            ("switch entries", "seed000_tor_static.json's shape with this run's pool, applied by "
                               "the controller (BufferSwitch) over P4Runtime; port C's threshold "
                               "changed live per cell"),
            ("port rate A, B, C", f"{c.port_rate_bps:,} bit/s, the switch's port model (frame + "
                                  "20 bytes preamble/gap); A and B HTB-paced to it"),
            ("shared pool", f"{c.pool_bytes:,} bytes (frame bytes without FCS)"),
            ("threshold", "static share of port C, % of the pool, tail drop"),
            ("trial", f"{c.trial_ms:g} ms of wall-clock time per cell"),
            ("latency window", f"frames sent from {100 * c.latency_from:g} % of the trial on"),
            ("latency", "kernel TX timestamp at A/B → kernel RX timestamp at C, ns (includes "
                        "the veths and host stacks)"),
            ("source phase", "A and B start at one CLOCK_REALTIME instant (RFC 2544 tester)"),
        ]

    def _start(self) -> None:
        """Compile, start the network and the switch, apply the config, set up the tester."""
        c = self.config
        pct = max(c.thresholds_pct + c.burst_thresholds_pct)
        self._live = start_live_switch(tor_topology(c), SWITCH, switch_config(c, pct),
                                       self.work_dir, self._binary)
        self._threshold_pct = pct
        lab = self._live.lab
        for host in ("a", "b"):
            pace_source(lab.netns(host), c.port_rate_bps)
            pin_neighbour(lab.netns(host), host_ip(c.port_c), host_mac(SWITCH_ID, c.port_c))
        # Senders run SCHED_FIFO like the switch (experiments/common/realtime.py).
        self._tester = Tester([SourcePort(lab.netns("a")), SourcePort(lab.netns("b"))],
                              host_ip(c.port_c), sink_netns=lab.netns("c"),
                              line_rate_bps=c.port_rate_bps, realtime_priority=REALTIME_PRIORITY)
        self._tester.learn()

    def close(self) -> None:
        """Disconnect the controller and take the network down (safe to call twice)."""
        try:
            if self._live is not None:
                self._live.close()
                self._live = None
        finally:
            if self._own_dir:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    def _ready(self, threshold_pct: int) -> Tester:
        """The tester, with port C's share set to ``threshold_pct`` by the controller."""
        if self._tester is None or self._live is None:
            raise RuntimeError("the live backend is not started (use it as a context manager)")
        if threshold_pct != self._threshold_pct:
            self._live.switch.set_threshold(self.config.port_c, Threshold(percent=threshold_pct))
            self._threshold_pct = threshold_pct
        return self._tester

    def delay_trial(self, cell: DelayCell) -> FrameRecords:
        """A and B at the cell's load for the trial; every frame's kernel TX and RX stamps."""
        tester = self._ready(cell.threshold_pct)
        trial = tester.trial(cell.frame_size_bytes, load=cell.load_pct / 100,
                             duration_s=cell.trial_ns / 1e9, wait_s=self.wait_s,
                             tx_timestamps=True)
        return frame_records(trial)

    def burst_trial(self, cell: BurstCell, frames_per_port: int) -> BurstTrial:
        """One back-to-back burst of ``frames_per_port`` frames from A and from B at once."""
        tester = self._ready(cell.threshold_pct)
        frame_ns = float(slot_ns(cell.frame_size_bytes, self.config.port_rate_bps))
        for _attempt in range(BURST_ATTEMPTS):
            trial = tester.trial(cell.frame_size_bytes, burst_frames=frames_per_port,
                                 wait_s=self.wait_s, tx_timestamps=True)
            self.last_burst_lag_ns = burst_lag_ns(trial, frame_ns)
            if self.last_burst_lag_ns <= frame_ns / 2:
                break
        else:
            raise RuntimeError(f"a {frames_per_port}-frame burst lagged its line-rate schedule "
                               f"by {self.last_burst_lag_ns / 1e6:.2f} ms in {BURST_ATTEMPTS} "
                               "tries: the machine is too busy for a back-to-back test")
        sent = tuple(p.sent_frames for p in trial.ports)
        received = tuple(p.received_frames for p in trial.ports)
        return BurstTrial(sent_frames=(sent[0], sent[1]),
                          received_frames=(received[0], received[1]))

