"""A live bufferlab-switch running buffer_switch.p4 between three hosts, for the live tests.

Senders A (port 1) and B (port 2) and receiver C (port 3) are namespaces on veth pairs built
by tests/switch_live's helpers; port C is shaped to `RATE_C_BPS`, so a burst from A and B
queues at C. The controller configures the switch through `bufferlab-ctl` (a subprocess, as
users run it) or `BufferSwitch` (in-process); counters and registers are read over
P4Runtime. Leaving the `BufferLab` block stops the switch and deletes every namespace, also
when the block raised.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
import time
import types
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bufferlab.controller import entities
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.p4info import P4InfoIndex, load_p4info
from bufferlab.controller.values import decode
from bufferlab.traffic.generate import send
from bufferlab.traffic.receive import Receiver

LIVE_HELPERS = Path(__file__).resolve().parents[1] / "switch_live" / "live_helpers.py"

PORT_A, PORT_B, PORT_C = 1, 2, 3
DEVICE_ID = 0
#: Data port of the receiver on C.
DATA_PORT = 5001
#: Generator frame size, bytes including the FCS (the generator's convention).
FRAME_BYTES = 1000
#: The same frame as the switch counts it: no FCS (p4src/README.md "Units").
SWITCH_FRAME_BYTES = FRAME_BYTES - 4
#: Port C's shaper, bit/s: one such frame every 8.16 ms, so a burst from A and B queues.
RATE_C_BPS = 1_000_000
#: The traffic manager's own pool, bytes: larger than any config's pool_bytes here, so only
#: the P4 program's admission ever drops (p4src/README.md, queue-depth note).
SWITCH_POOL_BYTES = 1 << 20
#: How long to wait for a burst to be delivered or counted as dropped, s (a bound, not a
#: figure under test: a burst of 40 frames drains from C in about 0.33 s).
SETTLE_TIMEOUT_S = 20.0
#: Quiet time after the last frame before the receiver stops, s.
RECEIVER_IDLE_S = 0.5

_LABS = itertools.count()


def _live_helpers() -> types.ModuleType:
    """tests/switch_live/live_helpers.py (Hosts, SwitchProcess, addressing), loaded once."""
    name = "switch_live_helpers"  # the name tests/switch_live/conftest.py loads it under
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, LIVE_HELPERS)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up in sys.modules
        spec.loader.exec_module(module)
    return sys.modules[name]


live = _live_helpers()


@dataclass(frozen=True)
class Build:
    """buffer_switch.p4 compiled: the BMv2 JSON and P4Info text files and the P4Info index."""

    json_path: Path
    p4info_path: Path
    index: P4InfoIndex


def compile_program(out_dir: Path) -> Build:
    """Compile p4src/buffer_switch.p4 with bufferlab-p4c into `out_dir`."""
    root = LIVE_HELPERS.parents[2]
    json_path = out_dir / "buffer_switch.json"
    p4info_path = out_dir / "buffer_switch.p4.p4info.txtpb"
    bufferlab_p4c = Path(sys.executable).with_name("bufferlab-p4c")
    proc = subprocess.run([str(bufferlab_p4c), str(root / "p4src" / "buffer_switch.p4"),
                           "-o", str(json_path), "--p4runtime-files", str(p4info_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"bufferlab-p4c failed:\n{proc.stderr}")
    return Build(json_path, p4info_path, P4InfoIndex(load_p4info(p4info_path)))


@dataclass(frozen=True)
class BurstResult:
    """One burst: frames sent per flow and the (flow, seq) pairs C received, in order."""

    sent: dict[int, int]
    received: list[tuple[int, int]]

    def missing(self, first_seq: int) -> dict[int, set[int]]:
        """Per flow, the sequence numbers sent but never received."""
        got = set(self.received)
        return {flow: {seq for seq in range(first_seq, first_seq + count)
                       if (flow, seq) not in got} for flow, count in self.sent.items()}


class BufferLab:
    """Hosts A, B, C and a bufferlab-switch running buffer_switch.p4; a context manager."""

    #: Data-header flow id of each sender's frames.
    FLOWS = {PORT_A: 1, PORT_B: 2}

    def __init__(self, build: Build, work_dir: Path) -> None:
        self.build = build
        self.work_dir = work_dir
        # Our own tag, so these namespaces never share a name with tests/switch_live's.
        self.hosts = live.Hosts(3, tag=f"blbl{os.getpid() % 10000}x{next(_LABS)}")
        self.switch: live.SwitchProcess | None = None
        self.reader: SwitchConnection | None = None

    def __enter__(self) -> BufferLab:
        try:
            self.hosts.__enter__()
            # Static neighbours: no ARP crosses the switch, so every frame on it is a test frame.
            for sender in (PORT_A, PORT_B):
                self.run_ok(sender, "ip", "neigh", "replace", live.host_ip(PORT_C), "lladdr",
                            live.host_mac(PORT_C), "dev", "eth0", "nud", "permanent")
            grpc_port, thrift_port = live.free_port(), live.free_port()
            args = [a for n in (PORT_A, PORT_B, PORT_C)
                    for a in ("-i", f"{n}@{self.hosts.switch_iface(n)}")]
            args += [str(self.build.json_path), "--log-console", "--thrift-port", str(thrift_port),
                     "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}",
                     "--pool-bytes", str(SWITCH_POOL_BYTES),
                     "--port-rate", f"{PORT_C}:{RATE_C_BPS}"]
            self.switch = live.SwitchProcess(args, self.work_dir / "switch.log", grpc_port)
            self.address = f"127.0.0.1:{grpc_port}"
            # Reads need no arbitration: this connection never competes with the controller.
            self.reader = SwitchConnection(self.address, DEVICE_ID)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.reader is not None:
                self.reader.close()
                self.reader = None
            if self.switch is not None:
                self.switch.stop()
        finally:
            self.hosts.__exit__()

    def run_ok(self, n: int, *args: str) -> str:
        """A command in host n's namespace that must succeed; its stdout."""
        proc = self.hosts.run(n, *args)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} in {self.hosts.netns(n)}: {proc.stderr}")
        return proc.stdout

    def ctl(self, *argv: str) -> subprocess.CompletedProcess:
        """`bufferlab-ctl --grpc-addr <switch> ARGV...` as a process."""
        command = [str(Path(sys.executable).with_name("bufferlab-ctl")),
                   "--grpc-addr", self.address, *argv]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)

    def counter(self, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of one counter cell, read over P4Runtime."""
        assert self.reader is not None
        (found,) = self.reader.read(entity(entities.counter_entry(self.build.index, name, index)))
        data = found.counter_entry.data
        return data.packet_count, data.byte_count

    def register(self, name: str, index: int) -> int:
        """One register cell, read over P4Runtime."""
        assert self.reader is not None
        (found,) = self.reader.read(entity(entities.register_entry(self.build.index, name,
                                                                   index)))
        return decode(found.register_entry.data.bitstring)

    def frames_out_of_c(self) -> int:
        """Frames the switch has sent out of port C (kernel counter of its veth end)."""
        counter = Path("/sys/class/net") / self.hosts.switch_iface(PORT_C) / "statistics"
        return int((counter / "tx_packets").read_text())

    def burst(self, frames_per_sender: int, first_seq: int) -> BurstResult:
        """A and B each send `frames_per_sender` back-to-back frames, starting together; returns
        once every frame has left port C or been counted in port C's drops (or after
        SETTLE_TIMEOUT_S) and C has been quiet for RECEIVER_IDLE_S."""
        drops_before = self.counter("port_drops", PORT_C)[0]
        out_before = self.frames_out_of_c()
        with Receiver(DATA_PORT, netns=self.hosts.netns(PORT_C)) as receiver:
            # The socket is bound now: frames that arrive before start() wait in it.
            start_ns = time.time_ns() + 100_000_000
            with ThreadPoolExecutor(max_workers=2) as pool:
                runs = {flow: pool.submit(send, live.host_ip(PORT_C), DATA_PORT,
                                          frame_size=FRAME_BYTES, count=frames_per_sender,
                                          start_realtime_ns=start_ns, flow=flow,
                                          first_seq=first_seq, netns=self.hosts.netns(sender))
                        for sender, flow in self.FLOWS.items()}
                sent = {flow: run.result().sent_frames for flow, run in runs.items()}
            total = sum(sent.values())
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while time.monotonic() < deadline:
                delivered = self.frames_out_of_c() - out_before
                dropped = self.counter("port_drops", PORT_C)[0] - drops_before
                if delivered + dropped >= total:
                    break
                time.sleep(0.02)
            receiver.start(idle_timeout_s=RECEIVER_IDLE_S)
            frames = receiver.join().frames
        return BurstResult(sent, [(int(f), int(s)) for f, s in zip(frames["flow"], frames["seq"],
                                                                 strict=True)])

    def log(self) -> str:
        """The switch's log so far (for failure messages)."""
        return self.switch.log() if self.switch is not None else ""
