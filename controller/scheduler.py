"""The config's scheduler sections as the switch's runtime CLI commands.

How a port's queues share the wire belongs to the traffic manager, which P4Runtime does not
reach (BMv2 likewise keeps its queue settings behind its Thrift CLI, `set_queue_rate`). So
the controller turns `scheduler` into `set_port_scheduler` lines for bufferlab-switch's
runtime CLI, `bufferlab-ctl scheduler CONFIG | bufferlab-switch-cli --thrift-port 9090`, and
stays a P4Runtime client for everything else.

Weights in % of the port become deficit round robin quanta of `QUANTUM_BYTES_PER_PERCENT`
bytes per percent: byte shares follow the quanta, and with weights adding up to 100 % one
round serves 1,500 bytes, so a frame arriving at an idle queue waits behind about one
full-size frame of each busy queue, never a large burst of one.
"""

from __future__ import annotations

from bufferlab.controller.config import Config, Scheduler

#: DRR quantum per percent of the port's weight, bytes.
QUANTUM_BYTES_PER_PERCENT = 15


def quanta_bytes(scheduler: Scheduler) -> list[int]:
    """The DRR quantum of each queue, bytes (empty for strict priority)."""
    return [w * QUANTUM_BYTES_PER_PERCENT for w in scheduler.weights_percent or ()]


def scheduler_command(port: int, scheduler: Scheduler) -> str:
    """One port's `set_port_scheduler` line."""
    if scheduler.strict:
        return f"set_port_scheduler {port} strict"
    return f"set_port_scheduler {port} drr {' '.join(map(str, quanta_bytes(scheduler)))}"


def scheduler_commands(config: Config) -> list[str]:
    """A `set_port_scheduler` line for every port whose config names a scheduler, by port."""
    return [scheduler_command(port, p.scheduler)
            for port, p in sorted(config.ports.items()) if p.scheduler is not None]
