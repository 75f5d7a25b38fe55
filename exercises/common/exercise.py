"""Run or check one exercise: its program on its topology, configured by the controller.

    python exercises/common/exercise.py run|check --exercise-dir DIR --json F --p4info F [--view]

The exercise folder holds `topology.json`, `s1-config.json` (a controller config,
controller/README.md) and `check.py`, which names what to try in the CLI (`HINTS`, each line
as the student types it; `{ctl}` stands for bufferlab-ctl at this run's switch) and how
to tell whether the program behaves (`check(lab)`: it sends frames and reads counters,
returning one `Outcome` per expectation). `run` opens the Mininet CLI on the network (with
`--view`, the live web view too); `check` brings the same network up on free ports, runs
the check, prints PASS/FAIL lines and exits 0 only if every expectation held. The network
comes down in both cases, also after an error. Both are what the exercise's Makefile calls.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import threading
import time
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bufferlab.controller.config import load_config
from bufferlab.experiments.common.live_lab import (
    LiveLab,
    Program,
    add_network_arguments,
    network_options,
    open_cli,
)
from bufferlab.experiments.common.ports import free_port_block
from bufferlab.mininet.network import put_tools_on_path
from bufferlab.mininet.topology import load_topology
from bufferlab.traffic.generate import send
from bufferlab.traffic.receive import Receiver

SWITCH = "s1"
#: UDP port the check's receivers listen on.
DATA_PORT = 5001
#: Generator frame size, bytes with the FCS; the switch counts 4 bytes less (no FCS).
FRAME_BYTES = 1000
SWITCH_FRAME_BYTES = FRAME_BYTES - 4
#: Upper bound on how long frames may take to be delivered or dropped, s (a guard against a
#: hang, not a figure under test).
SETTLE_TIMEOUT_S = 20.0
#: Time between two reads of an occupancy register while traffic runs, s.
WATCH_INTERVAL_S = 0.002
#: Time between two checks of whether every frame is delivered or dropped, s.
SETTLE_POLL_S = 0.05


@dataclass(frozen=True)
class Outcome:
    """One expectation of a check and whether the program met it."""

    passed: bool
    what: str
    detail: str = ""

    def line(self) -> str:
        """`PASS what (detail)` or `FAIL what (detail)`."""
        word = "PASS" if self.passed else "FAIL"
        return f"{word} {self.what}" + (f" ({self.detail})" if self.detail else "")


def expect(passed: bool, what: str, detail: str = "") -> Outcome:
    """An Outcome; `passed` may be any truthy value."""
    return Outcome(bool(passed), what, detail)


class ExerciseLab(LiveLab):
    """The exercise's network with helpers for checks: traffic, counters, watched registers."""

    def host_ip(self, host: str) -> str:
        """A host's IPv4 address without the prefix length."""
        return self.topology.hosts[host].ip.split("/")[0]

    def netns(self, host: str) -> str:
        """The named network namespace of a host."""
        return self.network.netns(host)

    def counter(self, name: str, index: int) -> tuple[int, int]:  # type: ignore[override]
        """(packets, bytes) of one counter cell of s1."""
        return super().counter(SWITCH, name, index)

    def register(self, name: str, index: int) -> int:  # type: ignore[override]
        """One register cell of s1."""
        return super().register(SWITCH, name, index)

    def tm_counters(self, command: str) -> list[dict[str, int]]:
        """The `name=value` fields of each line a TM counter command of s1's runtime CLI
        prints (`tm_counter_eg_port 3`, `tm_counter_queue 3 0`)."""
        return [{k: int(v) for k, _, v in (f.partition("=") for f in line.split() if "=" in f)}
                for line in self.tm(SWITCH, command).splitlines()]

    def drops(self, port: int) -> int:
        """Frames dropped in s1's buffer for egress port `port`: the program's admission
        drops (`port_drops`) on v1model, the traffic manager's on TNA."""
        if self.tofino:
            return self.tm_counters(f"tm_counter_eg_port {port}")[0]["drop_count_packets"]
        return self.counter("port_drops", port)[0]

    def pause_frames_sent(self) -> tuple[int, int]:
        """(XOFF, XON) frames s1 sent on all ports: its program's `pause_frames` and
        `xon_frames` on v1model, the TM's requests to the MACs on TNA."""
        if self.tofino:
            line = next(t for t in self.tm(SWITCH, "tm_show").splitlines() if t.startswith("PAUSE/PFC"))
            xoff, xon = (int(w.rstrip(",")) for w in line.split()[-3::2])
            return xoff, xon
        ports = self.host_ports(SWITCH)
        return (sum(self.counter("pause_frames", p)[0] for p in ports),
                sum(self.counter("xon_frames", p)[0] for p in ports))

    def traffic(self, flows: dict[str, tuple[str, int, int]],
                receivers: tuple[str, ...], watch: tuple[str, int] | None = None,
                ) -> Traffic:
        """Each sender in `flows` (host -> (receiver host, frames, DSCP)) sends its frames at
        once; returns when every frame is delivered or counted as dropped at the receivers'
        ports. `watch` = (register, index) is read every WATCH_INTERVAL_S meanwhile."""
        ports = {host: port for port, host in self.host_ports(SWITCH).items()}
        total = sum(count for _, count, _ in flows.values())
        queues = range(self.configs[SWITCH].priority_queues)

        def accounted() -> int:
            out = self.packets_in(SWITCH, "queue_tx", [ports[r] * 8 + q for r in receivers
                                                        for q in queues])
            return out + sum(self.drops(ports[r]) for r in receivers)

        before = accounted()
        listeners = {r: Receiver(DATA_PORT, netns=self.netns(r)) for r in receivers}
        stop_watching = threading.Event()
        try:
            start_ns = time.time_ns() + 100_000_000
            with ThreadPoolExecutor(max_workers=len(flows) + 1) as pool:
                # The watch has a thread of its own: on a loaded machine each P4Runtime read
                # takes milliseconds, and reads of the settle poll between two samples left
                # gaps longer than the burst, so a check could see no occupancy at all.
                watching = (pool.submit(self._watch, watch, stop_watching)
                            if watch is not None else None)
                try:
                    runs = {host: pool.submit(send, self.host_ip(dst), DATA_PORT,
                                              frame_size=FRAME_BYTES, count=count, dscp=dscp,
                                              start_realtime_ns=start_ns, flow=i + 1,
                                              netns=self.netns(host))
                            for i, (host, (dst, count, dscp)) in enumerate(flows.items())}
                    deadline = time.monotonic() + SETTLE_TIMEOUT_S
                    while time.monotonic() < deadline:
                        if all(r.done() for r in runs.values()) and accounted() - before >= total:
                            break
                        time.sleep(SETTLE_POLL_S)
                    sent = {host: run.result().sent_frames for host, run in runs.items()}
                finally:
                    stop_watching.set()
                seen = watching.result() if watching is not None else []
            received = {}
            for name, receiver in listeners.items():
                receiver.start(idle_timeout_s=0.5)
                frames = receiver.join().frames
                received[name] = [(int(f), int(s)) for f, s in zip(frames["flow"], frames["seq"],
                                                                   strict=True)]
        finally:
            for receiver in listeners.values():
                receiver.close()
        flow_of = {host: i + 1 for i, host in enumerate(flows)}
        return Traffic(sent, received, seen, flow_of)

    def _watch(self, watch: tuple[str, int], stop: threading.Event) -> list[int]:
        """Read one register cell of s1 back to back until `stop` is set; every value read."""
        seen: list[int] = []
        while not stop.is_set():
            seen.append(self.register(*watch))
            stop.wait(WATCH_INTERVAL_S)
        return seen


@dataclass(frozen=True)
class Traffic:
    """What a check's traffic did: frames sent per host, (flow, seq) received per receiver in
    arrival order, the watched register's values, and each sender's flow id."""

    sent: dict[str, int]
    received: dict[str, list[tuple[int, int]]]
    watched: list[int]
    flow_of: dict[str, int]

    def delivered(self) -> int:
        """Frames received at all receivers."""
        return sum(len(frames) for frames in self.received.values())


def load_check(exercise_dir: Path) -> types.ModuleType:
    """The exercise's check.py."""
    spec = importlib.util.spec_from_file_location("exercise_check", exercise_dir / "check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_check(lab: ExerciseLab, check: Callable[[ExerciseLab], list[Outcome]]) -> int:
    """Run a check, print its lines; 0 if every expectation held."""
    outcomes = check(lab)
    for outcome in outcomes:
        print(outcome.line())
    failed = sum(not o.passed for o in outcomes)
    print(f"{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: `run` or `check` one exercise; exit status."""
    parser = argparse.ArgumentParser(prog="exercise.py", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["run", "check"])
    parser.add_argument("--exercise-dir", type=Path, default=Path("."))
    parser.add_argument("--json", type=Path, required=True, help="the compiled program")
    parser.add_argument("--p4info", type=Path, required=True, help="its P4Info text file")
    add_network_arguments(parser)
    args = parser.parse_args(argv)
    exercise = args.exercise_dir.resolve()
    checks = load_check(exercise)
    if args.action == "check":
        # Free ports and our own namespace names, so a check never meets a running lab.
        base = free_port_block(2)
        args.grpc_base_port, args.thrift_base_port = base, base + 1
        args.netns_prefix = f"blx{base % 10000}-"
    configs = {SWITCH: load_config(exercise / f"{SWITCH}-config.json")}
    # The hints' `sh bufferlab-ctl …` lines run from the CLI's own PATH.
    put_tools_on_path()
    with ExerciseLab(load_topology(exercise / "topology.json"), configs,
                     Program(args.json, args.p4info), network_options(args)) as lab:
        if args.action == "check":
            return run_check(lab, checks.check)
        open_cli(lab, args, f"exercise {exercise.name}", hints(checks.HINTS, lab))
    return 0


def hints(lines: list[str], lab: ExerciseLab) -> list[str]:
    """The exercise's hints with `{ctl}` spelled out: bufferlab-ctl at this lab's switch."""
    ctl = (f"bufferlab-ctl --grpc-addr {lab.network.grpc_address(SWITCH)}"
           f" --device-id {lab.device_id(SWITCH)}")
    return [line.replace("{ctl}", ctl) for line in lines]


if __name__ == "__main__":
    sys.exit(main())
