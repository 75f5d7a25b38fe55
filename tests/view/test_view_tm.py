"""The live view on the lab's Tofino port (p4src/tna/buffer_switch.p4): queue depth in the
TM's cells and in bytes, read over a real runtime CLI server from an engine running the
program, beside the P4 counters read over P4Runtime by their pipe-prefixed names. No
network: the switch is an engine in this process. Figures by hand: a 1000-byte frame is
queued with the program's 15-byte bridged header, 1015 bytes, which hold 13 cells of 80 B
on Tofino 1 and 6 of 176 B on Tofino 2."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from bufferlab.compiler.api import compile_program
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.controller.view.sampler import Sampler
from bufferlab.controller.view.tm import TmError, TmReader, fields, parse_tm_show
from bufferlab.switch import Engine
from bufferlab.switch.runtime_cli import Executor, RuntimeCliServer

ROOT = Path(__file__).resolve().parents[2]
PORT_PROGRAM = ROOT / "p4src" / "tna" / "buffer_switch.p4"
H3 = "08:00:00:00:01:03"
QUEUED_BYTES = 1015  # a 1000-byte frame and the bridged header
CELLS = {"tofino": 13, "tofino2": 6}
CELL_BYTES = {"tofino": 80, "tofino2": 176}


class TnaSwitch:
    """The TNA port on an engine, port 3 draining at 1 Mbit/s, its runtime CLI served on a
    free loopback port as bufferlab-switch serves it."""

    def __init__(self, target: str) -> None:
        compiled = compile_program(PORT_PROGRAM, target=target)
        doc = json.dumps(compiled.json)
        self.index = P4InfoIndex(compiled.p4info)
        self.engine = Engine(doc)
        self.engine.table_add("l2_forward", {"dst_addr": H3}, "l2_to_port", {"port": 3})
        self.engine.configure_port(3, rate_bps=1_000_000)
        self.lock = threading.Lock()
        self.server = RuntimeCliServer(Executor(self.engine, doc), port=0, lock=self.lock)
        self.server.start()

    def send(self, frames: int) -> None:
        """`frames` 1000-byte frames from port 1 to H3 at once."""
        frame = bytes.fromhex(H3.replace(":", "") + "080000000101" + "88b5") + bytes(986)
        with self.lock:
            for _ in range(frames):
                self.engine.send(1, frame, 1000)

    def close(self) -> None:
        self.server.close()


@pytest.fixture(params=["tofino", "tofino2"])
def tna(request):
    switch = TnaSwitch(request.param)
    switch.target = request.param
    yield switch
    switch.close()


class P4RuntimeStub:
    """Answers the sampler's Read with what a switch running the port holds: the default
    switch_config entry (pool 65,536 B) and queue_tx[24] at `tx_bytes`."""

    def __init__(self, index: P4InfoIndex) -> None:
        self.index = index
        self.tx_bytes = 0

    def read(self, *wanted: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """The entities of one Read request."""
        out = []
        queue_tx = self.index.get("counter", "queue_tx").preamble.id
        config = self.index.get("table", "switch_config")
        for entity in wanted:
            which = entity.WhichOneof("entity")
            if which == "counter_entry" and entity.counter_entry.counter_id == queue_tx \
                    and entity.counter_entry.index.index == 24:
                found = p4runtime_pb2.Entity()
                found.counter_entry.CopyFrom(entity.counter_entry)
                found.counter_entry.data.packet_count = self.tx_bytes // 1015
                found.counter_entry.data.byte_count = self.tx_bytes
                out.append(found)
            elif which == "table_entry" and entity.table_entry.table_id == config.preamble.id:
                action = self.index.get("action", "set_switch")
                found = p4runtime_pb2.Entity()
                found.table_entry.table_id = config.preamble.id
                found.table_entry.is_default_action = True
                found.table_entry.action.action.action_id = action.preamble.id
                for param, value in zip(action.params, (1, 65536, 1, 511), strict=True):
                    found.table_entry.action.action.params.add(param_id=param.id,
                                                               value=value.to_bytes(4, "big"))
                out.append(found)
        return out


def test_the_reader_gives_queue_depth_in_cells_and_bytes(tna):
    tna.send(3)
    reader = TmReader(port=tna.server.port)
    try:
        snap = reader.snapshot([1, 3], queues=1)
    finally:
        reader.close()
    cells = CELLS[tna.target]
    assert snap.cell_bytes == CELL_BYTES[tna.target]
    # The first frame is on the wire; two wait.
    assert snap.queues[(3, 0)] == {"usage_cells": 2 * cells, "watermark_cells": 2 * cells,
                                   "drop_count_packets": 0, "frames": 2,
                                   "frame_bytes": 2 * QUEUED_BYTES}
    assert snap.ports[3]["usage_cells"] == 2 * cells and snap.ports[1]["usage_cells"] == 0
    assert (snap.xoff, snap.xon) == (0, 0)


def test_a_sample_of_the_tna_port_has_cells_bytes_and_the_p4_counters(tna):
    stub = P4RuntimeStub(tna.index)
    clock = iter([0.0, 1.0, 2.0])
    sampler = Sampler(stub, tna.index, [1, 2, 3], queues=1, clock=lambda: next(clock),
                      tm=TmReader(port=tna.server.port))
    try:
        empty = sampler.sample()
        tna.send(4)
        stub.tx_bytes = 125_000  # 1 Mbit in the second between the samples
        busy = sampler.sample()
    finally:
        sampler.tm.close()
    cells, cell = CELLS[tna.target], CELL_BYTES[tna.target]
    assert empty.ports[3]["occupancy_cells"] == 0 and empty.ports[3]["occupancy_bytes"] == 0
    port = busy.ports[3]
    # Three frames wait behind the one on the wire.
    assert port["occupancy_cells"] == 3 * cells
    assert port["occupancy_bytes"] == 3 * cells * cell  # the buffer the TM holds
    assert port["frame_bytes"] == 3 * QUEUED_BYTES
    assert port["queues"]["0"]["occupancy_cells"] == 3 * cells
    assert port["drops"] == 0 and port["queues"]["0"]["drops"] == 0
    # The TM's limits are not a P4 table: no threshold line.
    assert port["threshold_bytes"] is None
    # pipe.queue_tx read by its short name: 1 Mbit/s out of port 3.
    assert port["tx_bps"] == pytest.approx(1e6)
    assert busy.pool_bytes == 65536 and busy.pool_used_bytes == 0  # no EG pool configured
    shown = busy.as_json()
    assert shown["cell_bytes"] == cell and shown["tm_xoff"] == 0 and shown["tm_error"] is None
    assert json.loads(json.dumps(shown))["ports"]["3"]["occupancy_cells"] == 3 * cells


def test_tm_drops_and_pool_use_come_from_the_tm(tna):
    reader = TmReader(port=tna.server.port)
    try:
        # Port 3's queue in EG_APP_POOL_0, limited to two frames' cells.
        cells = CELLS[tna.target]
        reader.run("tm_pool_cfg EG_APP_POOL_0 size_cells=1000")
        reader.run(f"tm_queue_buffer 3 0 pool_id=EG_APP_POOL_0 pool_max_cells={2 * cells}"
                   " dynamic_baf=DISABLE")
        sampler = Sampler(P4RuntimeStub(tna.index), tna.index, [3], tm=reader)
        tna.send(5)
        sample = sampler.sample()
    finally:
        reader.close()
    # One on the wire, two queued, two dropped by the TM.
    assert sample.ports[3]["drops"] == 2 and sample.ports[3]["queues"]["0"]["drops"] == 2
    assert sample.ports[3]["occupancy_cells"] == 2 * cells
    assert sample.pool_used_bytes == 2 * cells * CELL_BYTES[tna.target]


def test_an_unreachable_tm_is_reported_and_the_p4_side_still_sampled(tna):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    sampler = Sampler(P4RuntimeStub(tna.index), tna.index, [3], tm=TmReader(port=closed))
    sample = sampler.sample()
    assert sample.tm_error is not None and f"127.0.0.1:{closed}" in sample.tm_error
    assert "occupancy_cells" not in sample.ports[3] and sample.pool_bytes == 65536
    with pytest.raises(TmError, match="port 3 has queues 0..0, not 5"):
        TmReader(port=tna.server.port).run("tm_counter_queue 3 5")


def test_the_answers_are_parsed_by_field_name():
    shown = ("cell size: 176 bytes\nqueues per port: 128\n"
             "EG_APP_POOL_0: size 500 cells, used 12, peak 30\n"
             "EG_APP_POOL_1: size 0 cells, used 3, peak 3\n"
             "IG_APP_POOL_0: size 100 cells, used 7, peak 7\n"
             "PAUSE/PFC frames asked of the MACs: XOFF 4, XON 3")
    assert parse_tm_show(shown) == (176, 15, 4, 3)
    assert parse_tm_show("cell size: none (the buffer counts bytes)")[0] is None
    assert fields("port 3 queue 1: usage_cells=26 frames=2") == {"usage_cells": 26, "frames": 2}
