"""A scenario's network brought up live: its topology in Mininet (`bufferlab.mininet`),
each switch a `bufferlab-switch` process programmed by the controller over P4Runtime
from the same configs the simulator uses. Its link rates must be ones the live switch
forwards on this machine; the sources are not started (live traffic comes from the
generator, `bufferlab-gen`, or any tool on the hosts).

    with LiveScenario(load_scenario("my.json"), work_dir) as live:
        live.lab.host("h1").cmd("ping -c1 10.0.1.2")
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format

from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.runtime_json import load_runtime, program_switch
from bufferlab.experiments.common.buffer_engine import CompiledProgram, compiled_program
from bufferlab.experiments.common.ports import free_port_block
from bufferlab.experiments.scenario.spec import Scenario
from bufferlab.mininet.network import LabNetwork, NetworkOptions


class LiveScenario:
    """Context manager: the scenario's network up in Mininet, its switches programmed."""

    def __init__(self, scenario: Scenario, work_dir: str | Path,
                 switch_binary: str | None = None, netns_prefix: str | None = None) -> None:
        """Nothing starts before `start` (or entering the `with` block); ``netns_prefix``
        names the hosts' namespaces (default `bl-`: another lab's hosts of the same names
        need another)."""
        self.scenario = scenario
        self.work_dir = Path(work_dir)
        self.switch_binary = switch_binary
        self.netns_prefix = netns_prefix
        self.lab: LabNetwork | None = None
        self.connections: dict[str, SwitchConnection] = {}

    def _program(self, name: str) -> CompiledProgram:
        spec = self.scenario.switches[name]
        return compiled_program(spec.program) if spec.program else compiled_program()

    def start(self) -> LiveScenario:
        """Brings the network up and programs every switch; on failure, takes it down."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        programs = {name: self._program(name) for name in self.scenario.switches}
        for name, program in programs.items():
            (self.work_dir / f"{name}.json").write_text(program.json_text)
            (self.work_dir / f"{name}.p4info.txtpb").write_text(
                text_format.MessageToString(program.p4info))
        count = max(s.index for s in self.scenario.topology.switches.values())
        base = free_port_block(2 * count)
        first = next(iter(programs))
        options = NetworkOptions(json_path=str(self.work_dir / f"{first}.json"),
                                 log_dir=str(self.work_dir), grpc_base_port=base,
                                 thrift_base_port=base + count)
        if self.switch_binary is not None:
            options.switch_binary = self.switch_binary
        if self.netns_prefix is not None:
            options.netns_prefix = self.netns_prefix
        self.lab = LabNetwork(self.scenario.topology, options)
        try:
            self.lab.start()
            for name, program in programs.items():
                self._apply(name, program)
        except BaseException:
            self.stop()
            raise
        return self

    def _apply(self, name: str, program: CompiledProgram) -> None:
        assert self.lab is not None
        spec = self.scenario.switches[name]
        device = self.lab.switch_options(self.scenario.topology.switches[name]).device_id
        connection = SwitchConnection(self.lab.grpc_address(name), device)
        self.connections[name] = connection
        if not connection.connect():
            raise RuntimeError(f"{name}: another controller is primary")
        json_bytes = program.json_text.encode()
        if spec.config is not None:
            BufferSwitch(connection, program.index).apply(spec.config, json_bytes)
        else:
            program_switch(connection, load_runtime(spec.runtime_json, program.p4info),
                           json_bytes)

    def stop(self) -> None:
        """Disconnects the controller and takes the network down (safe to call twice)."""
        try:
            for connection in self.connections.values():
                connection.close()
            self.connections.clear()
        finally:
            if self.lab is not None:
                self.lab.stop()
                self.lab = None

    def __enter__(self) -> LiveScenario:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
