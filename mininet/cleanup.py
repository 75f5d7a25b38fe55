"""Clean up after a network that did not come down (a crash, a kill): only what bufferlab made.

A running LabNetwork keeps a record of what it created — switch processes, namespace
names, switch-side interfaces — in a state file under STATE_DIR. Stopping the network
deletes the record; `python -m bufferlab.mininet.cleanup` (run by `make stop`) removes
whatever the remaining records name, and any process still inside the recorded namespaces
(a generator or receiver started there), so other Mininet users' networks are never
touched (unlike `mn -c`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_DIR = Path(os.environ.get("BUFFERLAB_STATE_DIR", "/run/bufferlab"))
KILL_GRACE_S = 2.0


@dataclass
class NetworkRecord:
    """What one network created: process ids with their command name, namespace names, links."""

    owner_pid: int
    processes: dict[int, str] = field(default_factory=dict)
    netns: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)

    def path(self, state_dir: Path = STATE_DIR) -> Path:
        """Where this record is kept."""
        return state_dir / f"network-{self.owner_pid}.json"

    def save(self, state_dir: Path = STATE_DIR) -> None:
        """Write the record (atomically, so a crash never leaves half a record)."""
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.path(state_dir).with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(self.path(state_dir))

    def discard(self, state_dir: Path = STATE_DIR) -> None:
        """Delete the record once everything it names is gone."""
        self.path(state_dir).unlink(missing_ok=True)


def load_records(state_dir: Path = STATE_DIR) -> list[NetworkRecord]:
    """Every record left in the state directory (unreadable ones are skipped and reported)."""
    records = []
    for path in sorted(state_dir.glob("network-*.json")):
        try:
            data = json.loads(path.read_text())
            data["processes"] = {int(pid): name for pid, name in data["processes"].items()}
            records.append(NetworkRecord(**data))
        except (OSError, ValueError, TypeError, KeyError) as err:
            print(f"cleanup: skipping unreadable record {path}: {err}", file=sys.stderr)
    return records


def _owner_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def command_line(pid: int) -> list[str] | None:
    """A running process's argv, or None if it is gone (or a zombie, whose argv is empty)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    argv = [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg]
    return argv or None


def runs(pid: int, program: str) -> bool:
    """Whether `pid` still runs `program`, directly or as a script (argv[1] of an interpreter)."""
    argv = command_line(pid)
    return argv is not None and Path(program).name in {Path(arg).name for arg in argv[:2]}


def _stop_process(pid: int, program: str) -> bool:
    """Stop `pid` only if it still runs the program it was recorded with (pids get reused)."""
    if not runs(pid, program):
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_S
    while time.monotonic() < deadline and command_line(pid) is not None:
        time.sleep(0.05)
    if command_line(pid) is not None:
        os.kill(pid, signal.SIGKILL)
    return True


def namespace_processes(netns: str) -> dict[int, str]:
    """The processes inside a named namespace (pid -> program), e.g. a generator started
    there with `ip netns exec`; empty if the name is gone."""
    listed = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True)
    found = {}
    for word in listed.stdout.split() if listed.returncode == 0 else []:
        argv = command_line(int(word)) if word.isdigit() else None
        if argv is not None:
            found[int(word)] = argv[0]
    return found


def clean_record(record: NetworkRecord, state_dir: Path = STATE_DIR) -> list[str]:
    """Remove what `record` names, and every process still inside its namespaces (they
    exist only because this network made them); returns a line per thing removed."""
    done = []
    for pid, name in record.processes.items():
        if _stop_process(pid, name):
            done.append(f"stopped {Path(name).name} (pid {pid})")
    for netns in record.netns:
        # A process left in a namespace keeps it (and its veth ends) alive after the name
        # is deleted: stop them first.
        for pid, name in namespace_processes(netns).items():
            if _stop_process(pid, name):
                done.append(f"stopped {Path(name).name} (pid {pid}) in namespace {netns}")
    for netns in record.netns:
        if subprocess.run(["ip", "netns", "delete", netns], capture_output=True).returncode == 0:
            done.append(f"deleted namespace name {netns}")
    for iface in record.interfaces:
        if subprocess.run(["ip", "link", "delete", iface], capture_output=True).returncode == 0:
            done.append(f"deleted interface {iface}")
    record.discard(state_dir)
    return done


def clean(state_dir: Path = STATE_DIR) -> list[str]:
    """Clean every record whose network's owner process is gone."""
    done = []
    for record in load_records(state_dir):
        if _owner_alive(record.owner_pid):
            done.append(f"left network of running process {record.owner_pid} alone")
            continue
        done += clean_record(record, state_dir)
    return done


def main() -> int:
    """Command-line entry: clean up and say what was removed."""
    for line in clean():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
