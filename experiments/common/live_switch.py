"""buffer_switch.p4 on a live bufferlab-switch in Mininet, as the live experiments run it.

`start_live_switch` writes the compiled program into a work folder (BMv2 JSON and P4Info
text, named as `make build` names them), brings a topology up with the switch's P4Runtime
and runtime CLI servers on free loopback ports, makes the switch process SCHED_FIFO
(`realtime.py`) and applies a controller config over P4Runtime as the primary client.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format

from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection
from bufferlab.controller.config import Config
from bufferlab.experiments.common.buffer_engine import compiled_program
from bufferlab.experiments.common.ports import free_port_block
from bufferlab.experiments.common.realtime import make_realtime
from bufferlab.mininet.network import LabNetwork, NetworkOptions
from bufferlab.mininet.topology import Topology

#: The switch publishes its live port counters once a second: wait this long after a
#: trial's last frame before reading them.
COUNTER_PUBLISH_WAIT_S = 1.3


@dataclass
class LiveSwitch:
    """A running network, the controller's connection to its switch, and the switch's
    runtime CLI port (TCP, on the loopback)."""

    lab: LabNetwork
    connection: SwitchConnection
    switch: BufferSwitch
    thrift_port: int

    def close(self) -> None:
        """Disconnect the controller and take the network down."""
        try:
            self.connection.close()
        finally:
            self.lab.stop()


def start_live_switch(topo: Topology, switch: str, config: Config, work_dir: Path,
                      binary: str) -> LiveSwitch:
    """``topo`` up in Mininet with ``switch`` running buffer_switch.p4 (the program ``binary``,
    its log and the build files in ``work_dir``), programmed with ``config``; on any failure
    what was started is taken down again."""
    program = compiled_program()
    work_dir.mkdir(parents=True, exist_ok=True)
    json_path = work_dir / "buffer_switch.json"
    json_path.write_text(program.json_text)
    (work_dir / "buffer_switch.p4.p4info.txtpb").write_text(
        text_format.MessageToString(program.p4info))
    spec = topo.switches[switch]
    # Ports follow the base + index − 1 plan: pick the bases so this switch's are free.
    ports = free_port_block(2)
    lab = LabNetwork(topo, NetworkOptions(
        json_path=str(json_path), switch_binary=binary, log_dir=str(work_dir),
        grpc_base_port=ports - (spec.index - 1), thrift_base_port=ports + 1 - (spec.index - 1)))
    lab.start()
    try:
        process = getattr(lab.host(switch), "process", None)
        if process is not None:
            make_realtime(process.pid)
        options = lab.switch_options(spec)
        connection = SwitchConnection(lab.grpc_address(switch), options.device_id)
        try:
            if not connection.connect():
                raise RuntimeError(f"{switch}: another controller is primary")
            programmed = BufferSwitch(connection, program.index)
            programmed.apply(config, json_path.read_bytes())
        except BaseException:
            connection.close()
            raise
    except BaseException:
        lab.stop()
        raise
    return LiveSwitch(lab, connection, programmed, options.thrift_port)


def pin_neighbour(netns: str, ip: str, mac: str) -> None:
    """A permanent neighbour entry on eth0 in ``netns``: no ARP crosses the switch, so every
    frame on it during a trial is the trial's."""
    subprocess.run(["ip", "-n", netns, "neigh", "replace", ip, "lladdr", mac, "dev", "eth0",
                    "nud", "permanent"], check=True, capture_output=True)
