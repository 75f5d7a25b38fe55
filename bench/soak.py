"""Soak: hours of 150 % load through one port, with exact frame conservation and flat memory.

    python bench/soak.py --minutes 60     (root: Mininet)

A Mininet network of `make cli`'s shape: h1 (port 1) and h2 (port 2) each send 1000-byte UDP
frames at 75 % of port 3's shaped rate to h3 (port 3), through bufferlab-switch running
p4src/buffer_switch.p4, configured over P4Runtime as `bufferlab-ctl apply` does. Traffic runs
in epochs of `--epoch-s`; each epoch starts with a live threshold change on port 3 over
P4Runtime (25 %, 50 %, 75 % of the pool in turn), and counters are read throughout:

* during traffic, every `--read-interval-s`: drops and frames out first, frames in last, so
  a frame counted out is always counted in: out + drops <= in;
* between epochs, once port 3's queue is empty and no counter moves: exact conservation per
  port: frames in at port 1 and 2 (`port_rx`) = frames the hosts sent; frames in at 1 + 2 =
  frames out at port 3 (`queue_tx`, all queues) + port 3's tail drops (`port_drops`) + the
  ingress discards (`ingress_discards`, every reason);
* at the end, the same against the switch's own live port counters (its log at exit): frames
  received per port (plus kernel drops) = frames sent, frames handed to port 3's interface =
  `queue_tx`, none refused by the kernel.

Memory: the switch process's RSS and its high-water mark (VmHWM) at every quiet read, from the
first read after `--warmup-s` to the last. RSS itself swings by a few MiB between reads (the
allocator hands memory back and takes it again), so the bound is on the high-water mark, which
only a lasting growth moves, and the RSS trend (least squares) is reported beside it. Prints one
JSON line of figures; exits 1 (after printing) if any conservation check or the memory bound
(`--max-rss-growth-pct-per-hour`, 1 % of the high-water mark per hour) fails.
"""

from __future__ import annotations

import argparse
import ast
import csv
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from bufferlab.controller import entities
from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.config import parse_config, port_threshold
from bufferlab.controller.values import decode
from bufferlab.experiments.cli_demo.__main__ import build
from bufferlab.experiments.common.live_lab import LiveLab
from bufferlab.experiments.common.ports import free_port_block
from bufferlab.mininet.network import NetworkOptions
from bufferlab.mininet.topology import parse_topology
from bufferlab.traffic.generate import send

RATE_C_BPS = 10_000_000  # port 3's shaper, bit/s
LOAD = 1.5  # both senders together, of RATE_C_BPS
FRAME_BYTES = 1000  # generator frame size, bytes incl. FCS
DATA_PORT = 5001
POOL_BYTES = 65_536  # the program's pool (admission drops beyond a share of it)
SWITCH_POOL_BYTES = 4 << 20  # the traffic manager's own pool: never the one that drops
THRESHOLDS = ("25%", "50%", "75%")
PORT_A, PORT_B, PORT_C = 1, 2, 3
QUEUES = 8  # queue_tx / port_drops cells per port (p4src/README.md "Counters")
QUIET_TIMEOUT_S = 20.0  # bound on waiting for port 3 to drain (it takes ~50 ms)


def topology(switch: str) -> dict:
    """Three hosts on `switch`; port 3 shaped; static ARP so that only the data frames flow."""
    arp = [f"ip neigh replace {host_ip(switch, n)} lladdr {host_mac(switch, n)} dev eth0"
           " nud permanent" for n in (1, 2, 3)]
    return {"hosts": {f"h{n}": {"commands": arp} for n in (1, 2, 3)},
            "switches": {switch: {"pool_bytes": SWITCH_POOL_BYTES}},
            "links": [["h1", f"{switch}-p1"], ["h2", f"{switch}-p2"],
                      {"a": "h3", "b": f"{switch}-p3", "rate_bps": RATE_C_BPS}]}


def host_ip(switch: str, n: int) -> str:
    """The tutorials' address of host n on switch sK: 10.0.K.n."""
    return f"10.0.{int(switch[1:])}.{n}"


def host_mac(switch: str, n: int) -> str:
    """The tutorials' MAC of host n on switch sK: 08:00:00:00:K:n."""
    return f"08:00:00:00:{int(switch[1:]):02x}:{n:02x}"


def switch_config(switch: str) -> dict:
    return {"switch_id": int(switch[1:]), "pool_bytes": POOL_BYTES,
            "ports": {str(p): {"threshold": "50%"} for p in (PORT_A, PORT_B, PORT_C)},
            "forwarding": {"l2": [{"mac": host_mac(switch, n), "port": n} for n in (1, 2, 3)]}}


@dataclass
class Counts:
    """One read of the switch's counters, frames."""

    rx: dict[int, int]
    tx_c: int
    drops_c: int
    discards: int
    occupancy_c_bytes: int

    @property
    def accounted(self) -> int:
        """Frames out of port 3 plus every drop."""
        return self.tx_c + self.drops_c + self.discards


@dataclass
class Soak:
    """Figures and failures of one run."""

    reads_busy: int = 0
    reads_quiet: int = 0
    failures: list[str] = field(default_factory=list)
    memory: list[tuple[float, int, int]] = field(default_factory=list)  # (s, RSS, HWM) bytes
    sent: dict[int, int] = field(default_factory=lambda: {PORT_A: 0, PORT_B: 0})
    threshold_changes: int = 0
    last: Counts | None = None

    def check(self, ok: bool, what: str) -> None:
        """Record a failed check (the run goes on, so that every failure is seen)."""
        if not ok:
            self.failures.append(what)


class Reader:
    """Reads the soak's counters over P4Runtime (a read-only connection)."""

    def __init__(self, lab: LiveLab, switch: str) -> None:
        self.lab = lab
        self.connection = lab.readers[switch]

    def cells(self, kind: str, name: str) -> list[int]:
        """Every cell of a counter (packets) or register."""
        make = entities.counter_entry if kind == "counter" else entities.register_entry
        found = self.connection.read(entity(make(self.lab.index, name)))
        if kind == "counter":
            return [f.counter_entry.data.packet_count for f in
                    sorted(found, key=lambda f: f.counter_entry.index.index)]
        return [decode(f.register_entry.data.bitstring) for f in
                sorted(found, key=lambda f: f.register_entry.index.index)]

    def read(self) -> Counts:
        """Frames out and dropped first, frames in last (see the module docstring)."""
        tx = self.cells("counter", "queue_tx")
        drops = self.cells("counter", "port_drops")
        discards = self.cells("counter", "ingress_discards")
        occupancy = self.cells("register", "port_occupancy")
        rx = self.cells("counter", "port_rx")
        return Counts(rx={p: rx[p] for p in (PORT_A, PORT_B, PORT_C)},
                      tx_c=sum(tx[PORT_C * QUEUES:(PORT_C + 1) * QUEUES]),
                      drops_c=drops[PORT_C], discards=sum(discards),
                      occupancy_c_bytes=occupancy[PORT_C])


def quiet_read(reader: Reader) -> Counts:
    """A read once port 3's queue is empty and two reads in a row agree."""
    deadline = time.monotonic() + QUIET_TIMEOUT_S
    previous = reader.read()
    while True:
        time.sleep(0.1)
        current = reader.read()
        if current == previous and current.occupancy_c_bytes == 0:
            return current
        if time.monotonic() > deadline:
            raise RuntimeError(f"port 3 did not drain in {QUIET_TIMEOUT_S} s: {current}")
        previous = current


def check_quiet(soak: Soak, counts: Counts, when: str) -> None:
    """Exact conservation per port on a quiet switch."""
    for port in (PORT_A, PORT_B):
        soak.check(counts.rx[port] == soak.sent[port],
                   f"{when}: port {port} received {counts.rx[port]}, its host sent"
                   f" {soak.sent[port]}")
    arrived = counts.rx[PORT_A] + counts.rx[PORT_B] + counts.rx[PORT_C]
    soak.check(arrived == counts.accounted,
               f"{when}: in {arrived} != out {counts.tx_c} + drops {counts.drops_c}"
               f" + discards {counts.discards}")
    soak.reads_quiet += 1


def switch_pid(lab: LiveLab) -> int:
    """The bufferlab-switch process of the lab."""
    (pid,) = [pid for pid, name in lab.network.record.processes.items()
              if Path(name).name == "bufferlab-switch"]
    return pid


def memory_bytes(pid: int) -> tuple[int, int]:
    """A process's resident set and its high-water mark (VmHWM), bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    hwm_kib = next(int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmHWM:"))
    return psutil.Process(pid).memory_info().rss, hwm_kib * 1024


def live_port_counters(log_text: str) -> dict[int, dict[str, int]]:
    """The switch's live port counters from its exit log lines `port N (IFACE): {...}`."""
    found = {}
    for line in log_text.splitlines():
        head, sep, counters = line.partition("): {")
        if sep and "] port " in head:
            port = int(head.rsplit("] port ", 1)[1].split(" ")[0])
            found[port] = ast.literal_eval("{" + counters)
    return found


def run(minutes: float, epoch_s: float = 4.0, read_interval_s: float = 0.5,
        warmup_s: float = 15.0, work_dir: Path | None = None,
        switch: str = "s5") -> tuple[dict, Soak]:
    """Run the soak; its figures (the JSON line) and the record of every check.

    Mininet names the switch's interfaces after it (`s5-eth1`) in the machine's own
    namespace: two networks with one switch name cannot run at once, so the soak's switch
    is not the s1 every demo and test uses.
    """
    work = Path(work_dir or tempfile.mkdtemp(prefix="bufferlab-soak-"))
    program = build(work / "build")
    prefix = f"bls{uuid.uuid4().hex[:4]}-"
    # Switch sK serves on base + K - 1 (the tutorials' plan): aim the bases so that its two
    # ports are the free block.
    ports = free_port_block(2) - (int(switch[1:]) - 1)
    options = NetworkOptions(log_dir=str(work), netns_prefix=prefix,
                             grpc_base_port=ports, thrift_base_port=ports + 1)
    soak = Soak()
    sink = None
    started = time.monotonic()
    with LiveLab(parse_topology(topology(switch)), {switch: parse_config(switch_config(switch))},
                 program, options) as lab:
        reader = Reader(lab, switch)
        pid = switch_pid(lab)
        # A socket that never reads: h3's kernel drops the data quietly (no ICMP replies).
        sink = subprocess.Popen(
            ["ip", "netns", "exec", f"{prefix}h3", sys.executable, "-c",
             "import socket,time;s=socket.socket(2,2);"
             f"s.bind(('0.0.0.0',{DATA_PORT}));time.sleep(1e9)"])
        try:
            with SwitchConnection(lab.network.grpc_address(switch), lab.device_id(switch),
                                  (0, 2)) as controller:
                if not controller.connect():
                    raise RuntimeError("the soak's controller is not primary")
                buffer_program = BufferSwitch(controller, lab.index)
                thresholds = itertools.cycle(THRESHOLDS)
                check_quiet(soak, quiet_read(reader), "start")
                while time.monotonic() - started < minutes * 60:
                    buffer_program.set_threshold(PORT_C, port_threshold(
                        "threshold", next(thresholds), f"ports.{PORT_C}"))
                    soak.threshold_changes += 1
                    epoch(soak, reader, host_ip(switch, 3), prefix, epoch_s, read_interval_s)
                    counts = quiet_read(reader)
                    check_quiet(soak, counts, f"after {time.monotonic() - started:.0f} s")
                    soak.last = counts
                    soak.memory.append((time.monotonic() - started, *memory_bytes(pid)))
        finally:
            sink.kill()
            sink.wait()
    elapsed_s = time.monotonic() - started
    final_checks(soak, (work / f"{switch}.log").read_text(errors="replace"))
    return figures(soak, elapsed_s, warmup_s), soak


def epoch(soak: Soak, reader: Reader, destination: str, prefix: str, epoch_s: float,
          read_interval_s: float) -> None:
    """One epoch of 150 % load from h1 and h2; reads while it runs."""
    results: dict[int, int] = {}

    def sender(port: int) -> None:
        result = send(destination, DATA_PORT, frame_size=FRAME_BYTES,
                      rate_bps=RATE_C_BPS * LOAD / 2, duration_s=epoch_s,
                      netns=f"{prefix}h{port}", flow=port)
        results[port] = result.sent_frames

    threads = [threading.Thread(target=sender, args=(p,)) for p in (PORT_A, PORT_B)]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        counts = reader.read()
        soak.check(counts.accounted <= sum(counts.rx.values()),
                   f"during traffic: out + drops {counts.accounted} > in {counts.rx}")
        soak.reads_busy += 1
        time.sleep(read_interval_s)
    for thread in threads:
        thread.join()
    for port in (PORT_A, PORT_B):
        soak.sent[port] += results[port]


def final_checks(soak: Soak, log_text: str) -> None:
    """The switch's own live port counters at exit against the hosts and the program."""
    live = live_port_counters(log_text)
    last = soak.last
    soak.check(set(live) >= {PORT_A, PORT_B, PORT_C}, f"no live port counters in the log: {live}")
    if last is None or not set(live) >= {PORT_A, PORT_B, PORT_C}:
        return
    for port in (PORT_A, PORT_B):
        soak.check(live[port]["rx_frames"] + live[port]["kernel_drops"] == soak.sent[port],
                   f"end: port {port} live rx {live[port]} vs sent {soak.sent[port]}")
        soak.check(live[port]["rx_frames"] == last.rx[port],
                   f"end: port {port} live rx {live[port]['rx_frames']} vs port_rx {last.rx[port]}")
    soak.check(live[PORT_C]["tx_frames"] == last.tx_c and live[PORT_C]["tx_dropped"] == 0,
               f"end: port 3 live tx {live[PORT_C]} vs queue_tx {last.tx_c}")


def figures(soak: Soak, elapsed_s: float, warmup_s: float) -> dict:
    """The JSON line: conservation, drops, memory."""
    after = [m for m in soak.memory if m[0] >= warmup_s] or soak.memory[-1:]
    (t0, rss0, hwm0), (t1, rss1, hwm1) = after[0], after[-1]
    hours = max(t1 - t0, 1.0) / 3600
    last = soak.last
    return {
        "bench": "soak",
        "duration_s": round(elapsed_s, 1),
        "load_percent": LOAD * 100,
        "port3_rate_bps": RATE_C_BPS,
        "frames_sent": sum(soak.sent.values()),
        "frames_out_port3": last.tx_c if last else 0,
        "frames_dropped_port3": last.drops_c if last else 0,
        "ingress_discards": last.discards if last else 0,
        "threshold_changes": soak.threshold_changes,
        "reads_during_traffic": soak.reads_busy,
        "reads_quiet_exact": soak.reads_quiet,
        "conservation_failures": len(soak.failures),
        "rss_start_bytes": rss0,
        "rss_end_bytes": rss1,
        "rss_trend_percent_per_hour": round(100 * trend_per_s(after) * 3600 / rss0, 3),
        "hwm_start_bytes": hwm0,
        "hwm_end_bytes": hwm1,
        "hwm_growth_percent": round(100 * (hwm1 - hwm0) / hwm0, 3),
        "hwm_growth_percent_per_hour": round(100 * (hwm1 - hwm0) / hwm0 / hours, 3),
        "memory_samples": len(after),
    }


def trend_per_s(samples: list[tuple[float, int, int]]) -> float:
    """Least-squares slope of RSS over time, bytes/s (0 with fewer than two samples)."""
    if len(samples) < 2:
        return 0.0
    times = [t for t, _, _ in samples]
    sizes = [rss for _, rss, _ in samples]
    mean_t, mean_s = sum(times) / len(times), sum(sizes) / len(sizes)
    spread = sum((t - mean_t) ** 2 for t in times)
    return sum((t - mean_t) * (s - mean_s) for t, s in zip(times, sizes, strict=True)) / spread if spread else 0.0


def write_memory_csv(path: Path, samples: list[tuple[float, int, int]]) -> None:
    """The switch's memory samples, one row each, for plotting a long run's trend."""
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["time_s", "rss_bytes", "hwm_bytes"])
        writer.writerows((round(t, 3), rss, hwm) for t, rss, hwm in samples)


def main(argv: list[str] | None = None) -> int:
    """Run the soak, print its JSON line; 1 if a check failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0, help="how long to run, minutes")
    parser.add_argument("--epoch-s", type=float, default=4.0,
                        help="seconds of traffic between threshold changes")
    parser.add_argument("--read-interval-s", type=float, default=0.5,
                        help="seconds between counter reads during traffic")
    parser.add_argument("--warmup-s", type=float, default=60.0,
                        help="seconds before the first RSS figure counts")
    parser.add_argument("--max-rss-growth-pct-per-hour", type=float, default=1.0)
    parser.add_argument("--switch", default="s5",
                        help="the switch's name (sN): one not used by another network running now")
    parser.add_argument("--memory-csv", type=Path,
                        help="also write every memory sample (time, RSS, high-water mark) here")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench/soak.py: needs root (Mininet)", file=sys.stderr)
        return 2
    # A plain `kill` must still take the network down (the `with` blocks run on SystemExit).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if not (args.switch[:1] == "s" and args.switch[1:].isdigit() and int(args.switch[1:]) > 0):
        parser.error(f"--switch: {args.switch!r} is not a switch name of the form sN (N >= 1)")
    result, soak = run(args.minutes, args.epoch_s, args.read_interval_s, args.warmup_s,
                       switch=args.switch)
    print(json.dumps(result))
    if args.memory_csv is not None:
        write_memory_csv(args.memory_csv, soak.memory)
    for failure in soak.failures:
        print(f"soak: {failure}", file=sys.stderr)
    memory_ok = result["hwm_growth_percent_per_hour"] < args.max_rss_growth_pct_per_hour
    if not memory_ok:
        print(f"soak: the RSS high-water mark grew {result['hwm_growth_percent_per_hour']} %/h",
              file=sys.stderr)
    return 0 if memory_ok and not soak.failures else 1


if __name__ == "__main__":
    sys.exit(main())
