"""The runtime CLI's TM counters (BF Runtime's tf1.tm.counter.eg_port and .queue): a queue's
cells in use now and at peak, its TM drops and the frames and frame bytes it holds, read
from a TNA program on the engine; tm_show's PAUSE/PFC line. Every figure is worked out by
hand: tm_classes.p4 queues a frame as it came in (no bridged header), so a 1040-byte frame
holds 13 cells of 80 B (Tofino 1) or 6 of 176 B (Tofino 2)."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler.api import compile_program
from bufferlab.switch import Engine
from bufferlab.switch.runtime_cli import Executor

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "p4" / "tna" / "tm_classes.p4"
FRAME = bytes.fromhex("000000000002" "000000000001" "88b5") + bytes(1026)  # 1040 bytes


def switch(target: str = "tofino", qid: int = 0) -> tuple[Engine, Executor]:
    """tm_classes.p4 sending port 1's frames to port 2's queue `qid` (2 queues), which
    drains at 1 Mbit/s, so what is sent at once stays queued."""
    doc = json.dumps(compile_program(PROGRAM, target=target).json)
    engine = Engine(doc)
    engine.table_add("pipe.Ingress.forward", {"ig_intr_md.ingress_port": 1}, "Ingress.send",
                     {"port": 2, "qid": qid, "icos": 0, "deflect": 0})
    engine.configure_port(2, rate_bps=1_000_000, num_queues=2)
    return engine, Executor(engine, doc)


def fields(line: str) -> dict[str, int]:
    """The name=value fields of one answer line."""
    return {k: int(v) for k, _, v in (w.partition("=") for w in line.split() if "=" in w)}


def run(x: Executor, line: str) -> list[str]:
    answer = x.execute(line)
    assert answer.ok, answer.text
    return answer.text.splitlines()


@pytest.mark.parametrize("target,cells", [("tofino", 13), ("tofino2", 6)])
def test_a_queue_shows_its_cells_frames_and_bytes(target, cells):
    engine, x = switch(target, qid=1)
    for _ in range(3):
        engine.send(1, FRAME, 1000)
    # The first frame starts leaving at once (out of the queue); two wait.
    (line,) = run(x, "tm_counter_queue 2 1")
    assert line.startswith("port 2 queue 1: ")
    assert fields(line) == {"usage_cells": 2 * cells, "watermark_cells": 2 * cells,
                            "drop_count_packets": 0, "frames": 2, "frame_bytes": 2 * 1040}
    # Without a queue: each of the port's queues, in order.
    both = run(x, "tm_counter_queue 2")
    assert [b.split(":")[0] for b in both] == ["port 2 queue 0", "port 2 queue 1"]
    assert fields(both[0])["usage_cells"] == 0
    (port,) = run(x, "tm_counter_eg_port 2")
    assert fields(port) == {"usage_cells": 2 * cells, "watermark_cells": 2 * cells,
                            "drop_count_packets": 0, "frames": 2, "frame_bytes": 2 * 1040}
    engine.drain()
    (after,) = run(x, "tm_counter_queue 2 1")
    # Drained: nothing in use, the peak kept.
    assert fields(after)["usage_cells"] == 0 and fields(after)["watermark_cells"] == 2 * cells


def test_tm_drops_are_counted_per_queue_and_port():
    engine, x = switch()
    # A static limit of 26 cells: the first frame goes on the wire, the next two fill the
    # queue, the fourth and fifth are dropped.
    run(x, "tm_pool_cfg EG_APP_POOL_0 size_cells=1000")
    run(x, "tm_queue_buffer 2 0 pool_id=EG_APP_POOL_0 pool_max_cells=26 dynamic_baf=DISABLE")
    for _ in range(5):
        engine.send(1, FRAME, 1000)
    (queue,) = run(x, "tm_counter_queue 2 0")
    assert fields(queue)["drop_count_packets"] == 2 and fields(queue)["frames"] == 2
    (port,) = run(x, "tm_counter_eg_port 2")
    assert fields(port)["drop_count_packets"] == 2


def test_tm_show_says_how_many_pause_frames_the_tm_asked_for():
    _, x = switch()
    assert run(x, "tm_show")[-1] == "PAUSE/PFC frames asked of the MACs: XOFF 0, XON 0"


@pytest.mark.parametrize("line,message", [
    ("tm_counter_queue 2 5", "port 2 has queues 0..1, not 5"),
    ("tm_counter_eg_port", "give at least one dev_port"),
    ("tm_counter_queue", "Insufficient number of args"),
    ("tm_counter_queue two", "two"),
])
def test_a_bad_tm_counter_request_is_refused_by_name(line, message):
    _, x = switch()
    answer = x.execute(line)
    assert not answer.ok and message in answer.text, answer.text
