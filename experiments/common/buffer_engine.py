"""p4src/buffer_switch.p4 on the in-process engine, programmed by the controller.

An experiment describes the switch as a controller config (`bufferlab.controller.config`),
the same thing `bufferlab-ctl apply` reads. `programmed_engine` puts a fresh engine behind
an in-process P4Runtime server (`bufferlab.switch.p4runtime.serve` over `EngineTarget`) and
lets `BufferSwitch` apply the config over a `SwitchConnection`, so the entries a
virtual-time run uses are exactly the ones the controller writes into a live switch.
Only the port model (rate and wire overhead), which on a live switch comes from the
topology's links rather than from P4Runtime, is set on the engine directly.

The TNA port (`TNA_PROGRAM`) is programmed from the same config: the controller tells it
from its P4Info and hands its TM settings (the pool, thresholds, caps and PAUSE/PFC as
`tm_*` lines, `bufferlab.controller.tofino_mapping`) to the engine's runtime CLI, as
`bufferlab-ctl tm CONFIG | bufferlab-switch-cli` does on a live switch.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from p4.config.v1 import p4info_pb2

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.config import Config
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.controller.tofino_mapping import cell_bytes_of, on_tofino
from bufferlab.switch import Engine
from bufferlab.switch.engine import EngineApi
from bufferlab.switch.p4runtime import serve
from bufferlab.switch.runtime_cli import Executor
from bufferlab.switch.target import EngineTarget

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "buffer_switch.p4"
#: The lab's switch ported to Tofino (TNA), programmed from the same configs.
TNA_PROGRAM = PROGRAM.parent / "tna" / "buffer_switch.p4"
#: ``--program`` names of the experiments that run on either.
PROGRAMS = {"v1model": PROGRAM, "tna": TNA_PROGRAM}
# The traffic manager's own pool is made this much larger than the P4 pool so that only the
# program's admission drops frames (a frame the manager dropped after admission would never
# leave the occupancy registers, p4src/README.md).
TM_POOL_FACTOR = 2
ETHERNET_WIRE_OVERHEAD_BYTES = 24
# The server runs in this process only for the duration of one apply.
_LOCAL_ADDRESS = "127.0.0.1:0"
EngineT = TypeVar("EngineT", bound=EngineApi)


@dataclass(frozen=True)
class CompiledProgram:
    """A P4 program compiled by bufferlab-p4c: BMv2 JSON text and its P4Info."""

    json_text: str
    p4info: p4info_pb2.P4Info

    @functools.cached_property
    def index(self) -> P4InfoIndex:
        """The P4Info's names → ids, as the controller looks them up."""
        return P4InfoIndex(self.p4info)

    def __getstate__(self) -> dict:
        """Pickled without the index (worker processes rebuild it on first use)."""
        return {"json_text": self.json_text, "p4info": self.p4info}


@functools.cache
def compiled_program(path: Path = PROGRAM) -> CompiledProgram:
    """buffer_switch.p4 (or ``path``) compiled by bufferlab-p4c, once per process."""
    document, p4info = compile_p4(path)
    return CompiledProgram(json.dumps(document), p4info)


def host_mac(switch_id: int, port: int) -> str:
    """The tutorials' MAC of the host on ``port`` of switch ``switch_id``: 08:00:00:00:<sw>:<host>."""
    return f"08:00:00:00:{switch_id:02x}:{port:02x}"


def program_over_p4runtime(engine: EngineApi, program: CompiledProgram,
                           apply: Callable[[SwitchConnection], object]) -> None:
    """Serves ``engine`` (running ``program``) over an in-process P4Runtime server for as
    long as ``apply`` takes to program it through a controller connection."""
    server = serve(EngineTarget(engine, program.json_text), 0, _LOCAL_ADDRESS)
    try:
        with SwitchConnection(f"127.0.0.1:{server.port}") as connection:
            if not connection.connect():
                raise RuntimeError("the controller did not become primary on the in-process "
                                   "P4Runtime server")
            apply(connection)
    finally:
        server.stop(0)


def programmed_engine(config: Config, program: CompiledProgram | None = None, seed: int = 0,
                      rate_bps: Mapping[int, int] | None = None,
                      wire_overhead_bytes: int = ETHERNET_WIRE_OVERHEAD_BYTES,
                      engine_class: type[EngineT] = Engine) -> EngineT:
    """A fresh engine (an ``engine_class``: `Engine`, or the simulator's `SwitchEngine`)
    running ``program`` (buffer_switch.p4 by default) with ``config`` applied by the
    controller over P4Runtime; ports in ``rate_bps`` are shaped to that many bit/s with
    ``wire_overhead_bytes`` per frame besides the frame."""
    program = program or compiled_program()
    for port, rate in (rate_bps or {}).items():
        if rate <= 0:
            raise ValueError(f"rate_bps[{port}]: {rate} bit/s must be positive")
    engine = engine_class(program.json_text, seed=seed,
                          pool_bytes=TM_POOL_FACTOR * config.pool_bytes)
    tm = (functools.partial(_run_tm_line, Executor(engine, program.json_text))
          if is_tna(program) else None)
    # The mapping's warnings are the config's, the same for every trial: a study reports
    # them once (`tofino_mapping.tm_plan`), not per engine.
    program_over_p4runtime(engine, program, lambda connection: BufferSwitch(
        connection, program.index, tm=tm, warn=lambda _warning: None
    ).apply(config, program.json_text.encode()))
    for port, rate in (rate_bps or {}).items():
        engine.configure_port(port, rate_bps=rate, wire_overhead_bytes=wire_overhead_bytes)
    return engine


def _run_tm_line(cli: Executor, line: str) -> None:
    """Runs one of the controller's TM lines on the engine; a refusal is an error."""
    answer = cli.execute(line)
    if not answer.ok:
        raise RuntimeError(f"the engine refused the controller's TM setting {line!r}: {answer.text}")


def is_tna(program: CompiledProgram) -> bool:
    """Whether ``program`` is a TNA/T2NA one (its buffer is the TM's)."""
    return on_tofino(program.index)


def tm_drops(engine: EngineApi) -> int:
    """Frames the engine's traffic manager dropped (0 when the P4 admission did all dropping)."""
    return int(engine.stats()["dropped_by_tm"])


def unplanned_tm_drops(engine: EngineApi, program: CompiledProgram, ports: Iterable[int],
                       queues: int = 1) -> int:
    """Frames the traffic manager dropped other than by the admission the config asked for:
    on v1model every TM drop (the program admits); on the TNA port, those not refused by
    their queue's application-pool limit (the mapped threshold) among ``ports``' first
    ``queues`` queues."""
    dropped = tm_drops(engine)
    if not is_tna(program):
        return dropped
    planned = sum(int(engine.queue_stats(port, queue)["dropped_app_pool_pkts"])
                  for port in ports for queue in range(queues))
    return dropped - planned


def tm_overhead_bytes(program: CompiledProgram) -> int:
    """Bytes the lab's TNA port puts in front of every frame across the TM (its bridged
    header `bridged_h`, which the TM's cells count too); 0 for a v1model program or a TNA
    program without that header."""
    return _bridged_header_bytes(program.json_text) if is_tna(program) else 0


@functools.cache
def _bridged_header_bytes(json_text: str) -> int:
    """The width of a TNA document's `bridged_h` header type in bytes (0 without one)."""
    for pipe in json.loads(json_text)["pipes"]:
        for header in pipe["ingress"]["header_types"]:
            if header["name"] == "bridged_h":
                return sum(f[1] for f in header["fields"]) // 8
    return 0


def cell_bytes(program: CompiledProgram) -> int | None:
    """The TM cell size a TNA program's buffer counts in (None: v1model counts bytes)."""
    return cell_bytes_of(program.index, program.json_text) if is_tna(program) else None
