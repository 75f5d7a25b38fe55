"""Every command the live labs print, typed as printed into the CLI it is printed for.

`make cli` (python -m bufferlab.experiments.cli_demo) and each exercise's `make run`
(exercises/common/exercise.py run, with the solution) are started with their standard input
a pipe, as a student's terminal: the Mininet CLI reads it. From the banner they print, the
test takes each host command of the hints (`h3 bufferlab-recv …`, `h1 bufferlab-gen …`,
`h1 python3 -m bufferlab.traffic.agents …`) and each `sh …` line and types it into that CLI;
the banner's bufferlab-ctl, log and capture lines ("from another shell, .venv/bin on
PATH") run in another shell with .venv/bin on the PATH, and the bufferlab-ctl lines typed
with `sh ` into the CLI (as the hints say) do the same there. Each command's effect is
checked: the tools run in their hosts, the switch counts the frames they send, drops, BCN
and PAUSE frames where the exercise makes them, the threshold a `set` wrote.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet"),
]

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.prefix) / "bin"
#: A root shell's PATH on Debian: the CLI is started from it, as `make` does.
PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PROMPT = "mininet> "
#: Longest wait for a typed tool to show its effect, s: the tools start in the background,
#: and at load 9 here bufferlab-gen's and the agents' `--help` alone took 2-7 s; on Tofino
#: the pause exercise's first XOFF came ~5 s after the agents were typed on an idle machine.
EFFECT_WAIT_S = 60.0


class CliSession:
    """A lab whose standard input is a pipe and whose output is collected as it comes."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        self.process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        env={**env, "PATH": PLAIN_PATH, "PYTHONUNBUFFERED": "1"})
        self.output = ""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := os.read(self.process.stdout.fileno(), 65536):
            with self._lock:
                self.output += chunk.decode(errors="replace")

    def text(self) -> str:
        with self._lock:
            return self.output

    def wait_for_prompt(self, count: int, timeout_s: float = 120) -> str:
        """The output once the CLI has printed its prompt `count` times."""
        deadline = time.monotonic() + timeout_s
        while self.text().count(PROMPT) < count:
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"no prompt #{count}:\n{self.text()}")
            time.sleep(0.05)
        return self.text()

    def type(self, line: str) -> str:
        """Type one line, wait for the next prompt; what the line printed."""
        before = self.text()
        count = before.count(PROMPT)
        assert self.process.stdin is not None
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()
        return self.wait_for_prompt(count + 1)[len(before):]

    def close(self) -> None:
        """`exit`, then wait for the network to come down (killed if it does not)."""
        try:
            if self.process.poll() is None and self.process.stdin is not None:
                self.process.stdin.write(b"exit\n")
                self.process.stdin.close()
            self.process.wait(timeout=60)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=5)


def host_commands(banner: str) -> list[str]:
    """The hint lines a student types into the CLI: `hN …` and `sh …`, comments cut."""
    commands = []
    for line in banner.splitlines():
        if re.match(r"^  (h\d+|sh) ", line):
            commands.append(re.split(r"\s{2,}\(", line.strip())[0])
    return commands


def ctl_lines(banner: str) -> dict[str, str]:
    """The banner's bufferlab-ctl lines by what they do (`set threshold`, `read counter
    port_drops`, …), comments cut."""
    found = {}
    for line in banner.splitlines():
        if line.startswith("    bufferlab-ctl "):
            command = re.split(r"\s{2,}\(", line.strip())[0]
            words = command.split()
            verb = next(i for i, w in enumerate(words) if w in ("set", "read"))
            # `set PORT WHAT VALUE`, `read KIND NAME INDEX`
            key = (f"set {words[verb + 2]}" if words[verb] == "set"
                   else " ".join(words[verb:verb + 3]))
            found[key] = command
    return found


def other_shell(command: str, cwd: Path, timeout_s: float = 30) -> str:
    """A banner line run in another shell with .venv/bin on the PATH; its output."""
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout_s, env={**os.environ, "PATH": f"{VENV_BIN}:{PLAIN_PATH}"})
    assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    return done.stdout


def read_value(ctl_output: str) -> int:
    """The cell's value in bufferlab-ctl read's answer (`name[i]: N packets, …` or `name[i]: N`)."""
    match = re.search(r"\]\s*[:=]\s*(\d+)", ctl_output)
    assert match, ctl_output
    return int(match.group(1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_argv(kind: str, tmp_path: Path, prefix: str) -> tuple[list[str], Path]:
    """The command line of `make cli` (`cli_demo_tna`: `make cli PROGRAM=tna`) or an
    exercise's `make run` (the solution), on free ports and our own namespace names, and
    the folder it runs in."""
    # Ports the kernel picks (one switch): no race with a lab scanning for a free block.
    common = ["--log-dir", str(tmp_path / "logs"), "--pcap-dir", str(tmp_path / "pcaps"),
              "--netns-prefix", prefix, "--grpc-base-port", str(free_port()),
              "--thrift-base-port", str(free_port())]
    if kind.startswith("cli_demo"):
        program = ["--program", "tna"] if kind == "cli_demo_tna" else []
        return ([sys.executable, "-m", "bufferlab.experiments.cli_demo", "--build-dir",
                 str(tmp_path / "build"), *program, *common], tmp_path)
    # An exercise's Tofino variant (`make run PROGRAM=tna`) is `<name>_tna`.
    name, tna = kind.removesuffix("_tna"), kind.endswith("_tna")
    exercise = ROOT / "exercises" / name
    build = tmp_path / "build"
    build.mkdir()
    json_path, p4info = build / f"{kind}.json", build / f"{kind}.p4.p4info.txtpb"
    subprocess.run([str(VENV_BIN / "bufferlab-p4c"), *(["--arch", "tna"] if tna else []),
                    str(exercise / "solution" / f"{kind}.p4"),
                    "-o", str(json_path), "--p4runtime-files", str(p4info)], check=True)
    return ([sys.executable, str(ROOT / "exercises" / "common" / "exercise.py"), "run",
             "--exercise-dir", str(exercise), "--json", str(json_path), "--p4info", str(p4info),
             *common], tmp_path)


def run_lab(kind: str, tmp_path: Path, check) -> None:
    """Start the lab, type every printed host command, let them run, then `check(...)`."""
    prefix = f"blb{uuid.uuid4().hex[:4]}-"
    argv, cwd = lab_argv(kind, tmp_path, prefix)
    session = CliSession(argv, cwd)
    try:
        banner = session.wait_for_prompt(1)
        commands = host_commands(banner)
        ctl = ctl_lines(banner)
        assert commands and ctl, banner
        typed = {}
        for command in commands:
            answer = session.type(command)
            assert "command not found" not in answer and "Unknown command" not in answer, \
                f"{command}:\n{answer}"
            typed[command] = answer
            if command.startswith("sh "):
                assert "error" not in answer.lower(), f"{command}:\n{answer}"
        check(session, banner, commands, ctl, cwd, prefix, typed)
    finally:
        session.close()
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert prefix not in namespaces


def running_in(session: CliSession, host: str, tool: str) -> bool:
    """Whether `tool` (a command name or module) runs in `host`'s shell."""
    return tool in session.type(f"{host} ps -o args= -u root")


def eventually(read, ok, what: str):
    """`read()` polled until `ok` holds for its value (a typed tool has started and shows its
    effect), which is returned; the test fails with the last value after EFFECT_WAIT_S."""
    deadline = time.monotonic() + EFFECT_WAIT_S
    while not ok(value := read()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: still {value!r} after {EFFECT_WAIT_S} s")
        time.sleep(0.5)
    return value


def test_make_cli_banner(tmp_path):
    def check(session, banner, commands, ctl, cwd, prefix, typed):
        assert commands[:3] == [
            "h3 bufferlab-recv --port 5001 --idle-timeout-s 5 &",
            "h1 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size 1000 --duration-s 60 &",
            "h2 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size 1000 --duration-s 60 &"]
        # 16 Mbit/s into port 3's 10: it holds the share and drops, once both senders run.
        drops = eventually(lambda: read_value(other_shell(ctl["read counter port_drops"], cwd)),
                           lambda drops: drops > 0, "port 3's drops")
        assert running_in(session, "h3", "bufferlab-recv")
        assert running_in(session, "h1", "bufferlab-gen") and running_in(session, "h2", "bufferlab-gen")
        # The receiver listens (it started before the senders).
        eventually(lambda: session.type("h3 ss -Hlun"), lambda listening: ":5001" in listening,
                   "h3's receiver on UDP port 5001")
        # 50 % of the 65,536-byte pool; the set line halves it, live, in another shell and
        # through the CLI's `sh`.
        # The largest of a few reads: one read may fall where a stalled sender let it drain.
        full = max(read_value(other_shell(ctl["read register port_occupancy"], cwd))
                   for _ in range(10))
        assert 0 < full <= 32768
        other_shell(ctl["set threshold"], cwd)
        answer = session.type("sh " + ctl["set threshold"])
        assert "error" not in answer.lower(), answer
        # Above the new share nothing is admitted: the queue drains to it (in ~13 ms at 10 Mbit/s).
        eventually(lambda: max(read_value(other_shell(ctl["read register port_occupancy"], cwd))
                               for _ in range(10)),
                   lambda lower: lower <= 16384, "port 3's occupancy within 25 % of the pool")
        assert "set alpha" in ctl
        answer = session.type("sh " + ctl["set alpha"])
        assert "error" not in answer.lower(), answer
        assert read_value(other_shell(ctl["read counter port_drops"], cwd)) > drops
        # The log and capture lines.
        log = re.search(r"log: (tail -f \S+)", banner).group(1)
        assert "bufferlab-switch" in other_shell(f"timeout 1 {log} || true", cwd)
        requests = re.search(r"P4Runtime requests: (cat \S+)", banner).group(1)
        assert "[Write]" in other_shell(requests, cwd)
        assert "tcpdump -xxx -r FILE" in banner
        dump = other_shell(f"tcpdump -xxx -c 1 -r {cwd}/pcaps/s1-eth3_out.pcap", cwd)
        assert "0x0000:" in dump
        netns = re.search(r"h1: (ip netns exec \S+) <command>", banner).group(1)
        assert "10.0.1.1/24" in other_shell(f"{netns} ip -o addr show eth0", cwd)

    run_lab("cli_demo", tmp_path, check)


def tm_lines(banner: str) -> dict[str, str]:
    """The banner's runtime CLI lines for a TNA switch by their first command word
    (`tm_counter_queue`, `tm_queue_buffer static`, `tm_queue_buffer dynamic`, …), comments cut."""
    found = {}
    for line in banner.splitlines():
        if line.startswith("    echo '"):
            command = re.split(r"\s{2,}\(", line.strip())[0]
            word = command.split("'")[1].split()[0]
            if word == "tm_queue_buffer":
                word += " dynamic" if "pool_max_cells=0 " in command else " static"
            found[word] = command
    return found


def queue_cells(answer: str) -> int:
    """usage_cells of a `tm_counter_queue` answer's line."""
    return int(re.search(r"usage_cells=(\d+)", answer).group(1))


def test_make_cli_banner_on_tna(tmp_path):
    # `make cli PROGRAM=tna`: the same senders, and the banner's TM lines read and change
    # Tofino's traffic manager (cells of 80 B) where v1model's change P4 tables.
    def check(session, banner, commands, ctl, cwd, prefix, typed):
        tm = tm_lines(banner)
        assert set(tm) == {"tm_counter_queue", "tm_queue_buffer static", "tm_queue_buffer dynamic",
                           "tm_counter_eg_port", "tm_show"}, banner
        assert "cell size: 80 bytes" in other_shell(tm["tm_show"], cwd)
        assert "80-byte cells" in banner
        # 16 Mbit/s into port 3's 10: the TM drops what its 50 % limit (410 cells) does not
        # hold, once both senders run, and the queue holds at that limit.
        eventually(lambda: int(re.search(r"drop_count_packets=(\d+)",
                                         other_shell(tm["tm_counter_eg_port"], cwd)).group(1)),
                   lambda drops: drops > 0, "the TM's drops on port 3")
        assert running_in(session, "h1", "bufferlab-gen") and running_in(session, "h2", "bufferlab-gen")
        eventually(lambda: session.type("h3 ss -Hlun"), lambda listening: ":5001" in listening,
                   "h3's receiver on UDP port 5001")
        full = max(queue_cells(other_shell(tm["tm_counter_queue"], cwd)) for _ in range(10))
        assert 205 < full <= 410, full
        # The static 25 % line, typed with `sh` into the CLI: the queue stays within 205 cells.
        answer = session.type("sh " + tm["tm_queue_buffer static"])
        assert "pool_max_cells=205" in answer and "error" not in answer.lower(), answer
        eventually(lambda: max(queue_cells(other_shell(tm["tm_counter_queue"], cwd))
                               for _ in range(10)),
                   lambda lower: 0 < lower <= 205, "port 3's queue within 205 cells")
        answer = other_shell(tm["tm_queue_buffer dynamic"], cwd)
        assert "dynamic_baf=50%" in answer
        sent = read_value(other_shell(ctl["read counter queue_tx"], cwd))
        assert sent > 0
        settings = re.search(r"set from the config: (cat \S+)", banner).group(1)
        assert "tm_pool_cfg EG_APP_POOL_0 size_cells=819" in other_shell(settings, cwd)
        requests = re.search(r"P4Runtime requests: (cat \S+)", banner).group(1)
        assert "[Write]" in other_shell(requests, cwd)

    run_lab("cli_demo_tna", tmp_path, check)


#: What each exercise's printed senders make the solution's switch count: a counter and the
#: cells (port, or port * 8 + queue) whose sum must grow.
EXERCISE_EFFECTS = {
    "shared_buffer": ("port_drops", [3]),
    "dynamic_threshold": ("port_drops", [3, 4]),
    "bcn_congestion_point": ("bcn_frames", [3 * 8]),
    "pause": ("pause_frames", [1, 2]),
    "classes": ("port_drops", [3]),
}


def counter_sum(ctl_prefix: str, name: str, cells: list[int], cwd: Path) -> int:
    return sum(read_value(other_shell(f"{ctl_prefix} read counter {name} {cell}", cwd))
               for cell in cells)


@pytest.mark.parametrize("exercise", sorted(EXERCISE_EFFECTS))
def test_exercise_banner(exercise, tmp_path):
    counter, cells = EXERCISE_EFFECTS[exercise]

    def check(session, banner, commands, ctl, cwd, prefix, typed):
        ctl_prefix = ctl["read counter port_drops"].split(" read ")[0]
        eventually(lambda: counter_sum(ctl_prefix, counter, cells, cwd), lambda n: n > 0,
                   f"{counter}{cells} of the typed senders")
        for command in commands:
            host, tool = command.split()[:2]
            if host == "sh":
                # `sh bufferlab-ctl … set …`: the CLI's PATH has the tool; it names the change.
                assert "set" in command and typed[command].strip(), (command, typed[command])
                continue
            module = command.split()[3] if tool == "python3" else tool
            assert running_in(session, host, module), command

    run_lab(exercise, tmp_path, check)


def test_tna_exercise_banner(tmp_path):
    # `make run PROGRAM=tna` of the two exercises with a Tofino variant: the printed senders
    # run, and the banner's lines show their effect on the TM's switch.
    def bcn(session, banner, commands, ctl, cwd, prefix, typed):
        ctl_prefix = ctl["read counter queue_tx"].split(" read ")[0]
        eventually(lambda: counter_sum(ctl_prefix, "bcn_frames", [3 * 8], cwd), lambda n: n > 0,
                   "bcn_frames[24] of the typed sender")
        assert running_in(session, "h1", "bufferlab-gen"), commands
        assert "80-byte cells" in banner

    def pause(session, banner, commands, ctl, cwd, prefix, typed):
        # On Tofino each sender's port needs its own 75 cells queued before the TM pauses it
        # (v1model: both senders' frames count against port 3's XOFF): seen after 3 s of
        # the agents' traffic.
        eventually(lambda: int(re.search(r"XOFF (\d+)",
                                         other_shell(tm_lines(banner)["tm_show"], cwd)).group(1)),
                   lambda xoff: xoff > 0, "the TM's XOFF frames (tm_show)")
        assert running_in(session, "h1", "bufferlab.traffic.agents"), commands

    for name, check in (("bcn_congestion_point_tna", bcn), ("pause_tna", pause)):
        (tmp_path / name).mkdir()
        run_lab(name, tmp_path / name, check)
