"""The virtual-time backend: buffer_switch.p4 on the in-process engine, with an exact tester.

Ports A and B are the tester's sources, C its sink; C is shaped to the tester's line rate
and holds a static share (the seed's "buffer (%)") of the P4 program's pool, set by the
controller: each trial's fresh engine is programmed over an in-process P4Runtime server
from the cell's controller config (`switch_config.py`, `common/buffer_engine.py`). A frame is
handed to the engine when its last bit has crossed the input link (store and forward), and
its last bit leaves C one inter-frame gap before the engine's delivery time (the engine
counts the gap as part of a frame's time on the wire). Source B starts at a seeded random
phase within one frame period, as two tester ports are not phase-locked.
"""

from __future__ import annotations

import heapq
import itertools
import struct

import numpy as np
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from bufferlab.experiments.common.buffer_engine import (
    CompiledProgram,
    compiled_program,
    host_mac,
    programmed_engine,
    tm_drops,
)
from bufferlab.experiments.common.wire import (
    FCS_BYTES,
    IFG_BYTES,
    PREAMBLE_BYTES,
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
from bufferlab.switch import Engine
from bufferlab.traffic.layers import BufferlabData

DATA_UDP_PORT = 5000
# Offsets in a frame: Ethernet 14 + IPv4 20 + UDP 8, then the data header's magic, flow,
# seq and tx_ns.
_FLOW_OFFSET = 44
_SEQ_OFFSET = 46
_SEQ_TX = struct.Struct("!IQ")
_FLOW = struct.Struct("!H")
# Frames sent between two collections of the engine's output: bounds the memory the
# delivered frames take.
_COLLECT_EVERY = 4096


class VirtualTimeBackend:
    """Runs the study's cells on the in-process engine in deterministic virtual time."""

    name = "virtual time (in-process engine)"
    virtual = True

    def __init__(self, config: TorConfig, program: CompiledProgram | None = None) -> None:
        """Compiles p4src/buffer_switch.p4 unless ``program`` is given."""
        self.config = config
        self._program = program or compiled_program()
        self._ports = (config.port_a, config.port_b)
        self._ifg_ns = round(ifg_ns(config.port_rate_bps))

    def describe(self) -> list[tuple[str, str]]:
        """What the engine modelled, with units."""
        c = self.config
        return [
            ("backend", self.name),
            ("switch program", "p4src/buffer_switch.p4 compiled by bufferlab-p4c"),
            ("switch entries", "seed000_tor_static.json's shape with this run's pool and "
                               "threshold, applied by the controller (BufferSwitch) over "
                               "an in-process P4Runtime server"),
            ("port rate A, B, C", f"{c.port_rate_bps:,} bit/s (frame + 20 bytes preamble/gap)"),
            ("shared pool", f"{c.pool_bytes:,} bytes (frame bytes without FCS)"),
            ("threshold", "static share of port C, % of the pool, tail drop"),
            ("trial", f"{c.trial_ms:g} ms of virtual time per cell"),
            ("latency window", f"frames entering from {100 * c.latency_from:g} % of the trial on"),
            ("latency", "last bit out of C − last bit into the switch, ns"),
            ("source phase", f"B starts at a random offset within one frame period (seed {c.seed})"),
        ]

    def _engine(self, threshold_pct: int) -> Engine:
        c = self.config
        return programmed_engine(
            switch_config(c, threshold_pct), self._program, seed=c.seed,
            rate_bps={c.port_c: c.port_rate_bps},
            # What the tester model puts around a frame on the wire, so the engine's slot on C
            # ends one gap after the last bit.
            wire_overhead_bytes=PREAMBLE_BYTES + IFG_BYTES + FCS_BYTES)

    def frame(self, frame_size_bytes: int, source: int) -> bytearray:
        """Source ``source``'s (0 = A, 1 = B) frame to C, ``frame_size_bytes`` with FCS, as
        the engine receives it (without FCS); seq and tx_ns are patched per frame."""
        port = self._ports[source]
        head = (Ether(src=host_mac(SWITCH_ID, port), dst=host_mac(SWITCH_ID, self.config.port_c))
                / IP(src=f"10.0.1.{port}", dst=f"10.0.1.{self.config.port_c}")
                / UDP(sport=DATA_UDP_PORT + source, dport=DATA_UDP_PORT)
                / BufferlabData(flow=source))
        body = bytes(head)
        wanted = frame_size_bytes - FCS_BYTES
        return bytearray(bytes(head / Raw(bytes(max(0, wanted - len(body))))))

    def _run(self, engine: Engine, size: int, times: tuple[list[int], list[int]]) -> FrameRecords:
        """Sends both sources' frames in time order (A first on a tie) and matches what C
        delivered back to them by flow and sequence number."""
        frames = (self.frame(size, 0), self.frame(size, 1))
        counts = (len(times[0]), len(times[1]))
        base = (0, counts[0])
        out_ns = np.full(sum(counts), LOST, dtype=np.int64)
        port_c = self.config.port_c

        def collect() -> None:
            for port, data, t_ns in engine.received():
                if port != port_c:
                    raise RuntimeError(f"frame left by port {port}, expected only port {port_c}")
                source = _FLOW.unpack_from(data, _FLOW_OFFSET)[0]
                seq = _SEQ_TX.unpack_from(data, _SEQ_OFFSET)[0]
                out_ns[base[source] + seq] = t_ns - self._ifg_ns

        schedule = heapq.merge(*(zip(stream, itertools.repeat(source), itertools.count(),
                                     strict=False)
                                 for source, stream in enumerate(times)))
        send = engine.send
        ports = self._ports
        for n, (t_ns, source, seq) in enumerate(schedule, start=1):
            buf = frames[source]
            _SEQ_TX.pack_into(buf, _SEQ_OFFSET, seq, t_ns)
            send(ports[source], buf, t_ns)
            if n % _COLLECT_EVERY == 0:
                collect()
        engine.drain()
        collect()
        if tm_drops(engine):
            raise RuntimeError(f"the traffic manager dropped {tm_drops(engine)} frames the "
                               "program had admitted: its pool is too small for the P4 pool")
        return FrameRecords(
            source=np.repeat(np.array([0, 1], dtype=np.int8), counts),
            seq=np.concatenate([np.arange(n, dtype=np.int64) for n in counts]),
            in_ns=np.array(times[0] + times[1], dtype=np.int64),
            out_ns=out_ns,
        )

    def phase_ns(self, cell: DelayCell) -> int:
        """B's start offset for a cell, ns: seeded, uniform within one frame period."""
        period = slot_ns(cell.frame_size_bytes, self.config.port_rate_bps,
                         load_fraction(cell.load_pct))
        rng = np.random.default_rng([self.config.seed, cell.frame_size_bytes,
                                     cell.threshold_pct, round(cell.load_pct * 1000)])
        return int(rng.integers(0, int(period)))

    def delay_trial(self, cell: DelayCell) -> FrameRecords:
        """A and B at the cell's load for the trial; every frame's last bit in and out."""
        rate = self.config.port_rate_bps
        load = load_fraction(cell.load_pct)
        offsets = (0, self.phase_ns(cell))
        times = tuple(
            last_bit_in_ns(frames_in(cell.trial_ns - offset, cell.frame_size_bytes, rate, load),
                           cell.frame_size_bytes, rate, load, start_ns=offset)
            for offset in offsets)
        return self._run(self._engine(cell.threshold_pct), cell.frame_size_bytes, times)

    def burst_trial(self, cell: BurstCell, frames_per_port: int) -> BurstTrial:
        """``frames_per_port`` back-to-back frames from A and from B, both from time 0."""
        times = last_bit_in_ns(frames_per_port, cell.frame_size_bytes, self.config.port_rate_bps)
        records = self._run(self._engine(cell.threshold_pct), cell.frame_size_bytes,
                            (times, list(times)))
        got = records.received
        return BurstTrial(
            sent_frames=(frames_per_port, frames_per_port),
            received_frames=(int(got[records.source == 0].sum()),
                             int(got[records.source == 1].sum())),
        )

