"""The virtual-time backend: buffer_switch.p4 (or its TNA port) in `bufferlab-sim`, with
an exact tester.

Each trial is a network in the simulator: tester hosts A and B, each with one source, and
host C, the sink, on ports A, B and C of one switch, every link at the tester's line rate
with 24 bytes of wire overhead per frame. The switch is a fresh engine programmed by the
controller over an in-process P4Runtime server from the cell's controller config
(`switch_config.py`, `common/buffer_engine.py`); C holds a static share (the seed's
"buffer (%)") of the program's pool. On the TNA port (`--program tna`) the same config
becomes Tofino TM settings: the pool is `EG_APP_POOL_0` and C's share its queue's limit,
both in 80-byte cells, and the TM, not P4, drops. A source paces its frames at the cell's load exactly
(the simulator's constant pattern carries the fraction of a ns from frame to frame, as the
tester model does), B starts at a seeded random phase within one frame period, and C
captures every frame it receives, so each frame's fate is known.

Times are the tester's (`common/wire.py`): a simulated link delivers a frame one
inter-frame gap after its last bit (the gap is part of its time on the wire), so the
switch sees every frame one gap after the tester's last bit in, and C's sink one gap after
the last bit out of a switch that saw it one gap late: last bit in = arrival at the switch
− one gap, last bit out = arrival at C − two gaps.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from bufferlab.experiments.common.buffer_engine import (
    PROGRAM,
    PROGRAMS,
    TM_POOL_FACTOR,
    CompiledProgram,
    cell_bytes,
    compiled_program,
    host_mac,
    programmed_engine,
    tm_overhead_bytes,
    unplanned_tm_drops,
)
from bufferlab.experiments.common.wire import (
    FCS_BYTES,
    check_frame_size,
    frames_in,
    ifg_ns,
    last_bit_in_ns,
    load_fraction,
    slot_ns,
)
from bufferlab.experiments.tor_switch.backend import (
    LOST,
    BurstCell,
    BurstTrial,
    DelayCell,
    FrameRecords,
)
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.switch_config import SWITCH_ID, switch_config
from bufferlab.sim import Simulator, Source, SwitchEngine

DATA_UDP_PORT = 5000
SWITCH = "s1"
HOSTS = ("A", "B")
SINK = "C"


def program_backend(config: TorConfig, program: str = "v1model") -> VirtualTimeBackend:
    """The virtual-time backend on one of `PROGRAMS` by its ``--program`` name."""
    path = PROGRAMS[program]
    return VirtualTimeBackend(config, compiled_program(path),
                              str(path.relative_to(PROGRAM.parents[1])))


def default_out(program: str = "v1model") -> str:
    """Where a run on ``program`` writes by default."""
    return "results/tor_switch" if program == "v1model" else f"results/tor_switch_{program}"


class VirtualTimeBackend:
    """Runs the study's cells in the simulator, in deterministic virtual time."""

    name = "virtual time (bufferlab-sim)"
    virtual = True

    def __init__(self, config: TorConfig, program: CompiledProgram | None = None,
                 program_name: str = "p4src/buffer_switch.p4") -> None:
        """Compiles p4src/buffer_switch.p4 unless ``program`` (named ``program_name``) is
        given, e.g. the TNA port."""
        self.config = config
        self._program = program or compiled_program()
        self.program_name = program_name
        #: The TM's cell size when the program is the TNA port (None: v1model, bytes).
        self.cell_bytes = cell_bytes(self._program)
        #: Bytes the program adds to a frame across the TM (the TNA port's bridged header).
        self.tm_overhead_bytes = tm_overhead_bytes(self._program)
        self._ifg_ns = round(ifg_ns(config.port_rate_bps))
        for load in config.loads_pct:
            self.source_rate_bps(load)

    def describe(self) -> list[tuple[str, str]]:
        """What the simulator modelled, with units."""
        c = self.config
        if self.cell_bytes:
            switch = [
                ("switch program", f"{self.program_name} (TNA) compiled by bufferlab-p4c, on "
                                   "the engine's TNA target"),
                ("switch entries", "seed000_tor_static.json's shape with this run's pool and "
                                   "threshold, applied by the controller (BufferSwitch) over an "
                                   "in-process P4Runtime server, its pool and threshold mapped "
                                   "to TM settings (runtime CLI tm_* lines)"),
                ("TM", f"cells of {self.cell_bytes} bytes; a frame takes ⌈(frame + "
                       f"{self.tm_overhead_bytes} bytes of bridged header) / {self.cell_bytes}⌉ "
                       "cells"),
            ]
        else:
            switch = [
                ("switch program", f"{self.program_name} compiled by bufferlab-p4c"),
                ("switch entries", "seed000_tor_static.json's shape with this run's pool and "
                                   "threshold, applied by the controller (BufferSwitch) over "
                                   "an in-process P4Runtime server"),
            ]
        return [
            ("backend", self.name),
            *switch,
            ("network", "tester hosts A and B and sink C on ports "
                        f"{c.port_a}, {c.port_b}, {c.port_c} of one switch"),
            ("port rate A, B, C", f"{c.port_rate_bps:,} bit/s (frame + 20 bytes preamble/gap)"),
            ("shared pool", f"{c.pool_bytes:,} bytes (frame bytes without FCS)"
                            + (f"; {c.pool_bytes // self.cell_bytes:,} cells of the TM's "
                               "EG_APP_POOL_0" if self.cell_bytes else "")),
            ("threshold", "static share of port C, % of the pool, tail drop"
                          + ("; the TM's queue limit pool_max_cells, the share rounded up to "
                             "cells" if self.cell_bytes else "")),
            ("trial", f"{c.trial_ms:g} ms of virtual time per cell"),
            ("latency window", f"frames entering from {100 * c.latency_from:g} % of the trial on"),
            ("latency", "last bit out of C − last bit into the switch, ns"),
            ("source phase", f"B starts at a random offset within one frame period (seed {c.seed})"),
        ]

    def _network(self, threshold_pct: int, frame_size_bytes: int,
                 rates_bps: tuple[int, int], starts_ns: tuple[int, int],
                 stops_ns: tuple[int, int]) -> Simulator:
        """The trial's network: a freshly programmed switch, A and B sending
        ``frame_size_bytes`` frames (with FCS) at ``rates_bps`` from ``starts_ns`` until
        ``stops_ns``, and C capturing what arrives."""
        c = self.config
        engine = programmed_engine(switch_config(c, threshold_pct), self._program,
                                   seed=c.seed, engine_class=SwitchEngine)
        sim = Simulator(seed=c.seed)
        sim.add_switch(SWITCH, engine)
        ports = (c.port_a, c.port_b, c.port_c)
        for name, port in zip((*HOSTS, SINK), ports, strict=True):
            sim.add_host(name, host_mac(SWITCH_ID, port), f"10.0.{SWITCH_ID}.{port}")
            sim.connect((name, None), (SWITCH, port), rate_bps=c.port_rate_bps)
        for i, name in enumerate(HOSTS):
            sim.add_source(Source(
                name, name, SINK, pattern="constant", rate_bps=rates_bps[i],
                sizes=((frame_size_bytes - FCS_BYTES, 1),), start_ns=starts_ns[i],
                stop_ns=stops_ns[i], udp_ports=(DATA_UDP_PORT + i, DATA_UDP_PORT),
                # One frame at most waits for the link: a tester port never drops.
                rlq_bytes=2 * frame_size_bytes))
        sim.capture(SINK)
        return sim

    def _drain_ns(self, frame_size_bytes: int) -> int:
        """A bound on the time C needs to send everything the switch can hold, ns."""
        c = self.config
        frames = TM_POOL_FACTOR * c.pool_bytes // (frame_size_bytes - FCS_BYTES) + 2
        return int(frames * slot_ns(frame_size_bytes, c.port_rate_bps)) + 1

    def _run(self, sim: Simulator, frame_size_bytes: int, last_start_ns: int,
             counts: tuple[int, int]) -> np.ndarray:
        """Runs ``sim`` until the switch has drained; the last bit out of C of each frame
        sent (A's first, each source's in sequence order), or ``LOST``."""
        sim.run(last_start_ns + self._drain_ns(frame_size_bytes))
        results = sim.results()
        if results.run["frames_in_flight"]:
            raise RuntimeError(f"{results.run['frames_in_flight']} frames still in flight "
                               "after the drain time")
        engine = sim.switches[SWITCH]
        c = self.config
        unplanned = unplanned_tm_drops(engine, self._program, (c.port_a, c.port_b, c.port_c))
        if unplanned:
            raise RuntimeError(f"the traffic manager dropped {unplanned} frames other than "
                               "by the configured admission: its pool is too small for the "
                               "config's pool")
        stray = {h: n for h in HOSTS
                 if (n := sum(v for k, v in results.hosts[h].items() if k.endswith("_frames")))}
        if stray:
            raise RuntimeError(f"frames left the switch towards the testers: {stray}")
        sent = tuple(results.sources[h]["sent_frames"] for h in HOSTS)
        if sent != counts:
            raise RuntimeError(f"the testers sent {sent} frames, the tester model {counts}")
        got = sim.captured(SINK)
        # Flow 0 is A's, flow 1 B's: a frame's place is its seq, after A's frames for B.
        # In-place arithmetic: a full-size trial captures millions of frames.
        at = got["seq"].astype(np.intp)
        at += got["flow"] * np.intp(counts[0])
        last_bit_out_ns = got["rx_ns"].astype(np.int64)
        last_bit_out_ns -= 2 * self._ifg_ns
        out_ns = np.full(sum(counts), LOST, dtype=np.int64)
        out_ns[at] = last_bit_out_ns
        return out_ns

    def phase_ns(self, cell: DelayCell) -> int:
        """B's start offset for a cell, ns: seeded, uniform within one frame period."""
        period = slot_ns(cell.frame_size_bytes, self.config.port_rate_bps,
                         load_fraction(cell.load_pct))
        rng = np.random.default_rng([self.config.seed, cell.frame_size_bytes,
                                     cell.threshold_pct, round(cell.load_pct * 1000)])
        return int(rng.integers(0, int(period)))

    def source_rate_bps(self, load_pct: float) -> int:
        """A tester source's pace at ``load_pct`` % of line rate, bit/s on the wire."""
        rate = self.config.port_rate_bps * load_fraction(load_pct)
        if rate.denominator != 1:
            raise ValueError(f"tor_switch config: loads_pct: {load_pct} % of port_rate_bps "
                             f"{self.config.port_rate_bps:,} is not a whole number of bit/s, "
                             "and the simulator's sources pace at whole bit/s")
        return int(rate)

    def delay_trial(self, cell: DelayCell) -> FrameRecords:
        """A and B at the cell's load for the trial; every frame's last bit in and out."""
        rate, size = self.config.port_rate_bps, cell.frame_size_bytes
        load = load_fraction(cell.load_pct)
        offsets = (0, self.phase_ns(cell))
        counts = tuple(frames_in(cell.trial_ns - offset, size, rate, load) for offset in offsets)
        in_ns = np.concatenate([last_bit_in_ns(n, size, rate, load, start_ns=offset)
                                for n, offset in zip(counts, offsets, strict=True)])
        pace = self.source_rate_bps(cell.load_pct)
        sim = self._network(cell.threshold_pct, size, (pace, pace), offsets,
                            (cell.trial_ns, cell.trial_ns))
        return FrameRecords(
            source=np.repeat(np.array([0, 1], dtype=np.int8), counts),
            seq=np.concatenate([np.arange(n, dtype=np.int64) for n in counts]),
            in_ns=in_ns,
            out_ns=self._run(sim, size, cell.trial_ns, counts),
        )

    def burst_trial(self, cell: BurstCell, frames_per_port: int) -> BurstTrial:
        """``frames_per_port`` back-to-back frames from A and from B, both from time 0."""
        rate, size = self.config.port_rate_bps, cell.frame_size_bytes
        check_frame_size(size)
        # No frame may start once the burst's last one has: stop one ns after it.
        last_start = int((frames_per_port - 1) * slot_ns(size, rate, Fraction(1)))
        sim = self._network(cell.threshold_pct, size, (rate, rate), (0, 0),
                            (last_start + 1, last_start + 1))
        out_ns = self._run(sim, size, last_start, (frames_per_port, frames_per_port))
        received = out_ns != LOST
        return BurstTrial(
            sent_frames=(frames_per_port, frames_per_port),
            received_frames=(int(received[:frames_per_port].sum()),
                             int(received[frames_per_port:].sum())),
        )
