"""Tools run in Mininet hosts' namespaces for a live trial: started SCHED_FIFO, waited for
with a deadline, and never left running when the trial ends."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bufferlab.experiments.common.realtime import realtime_argv

#: How long a server or capture may take to get ready, s.
READY_TIMEOUT_S = 10.0
#: How much longer than planned a tool may run before a trial gives up on it, s.
FINISH_GRACE_S = 30.0


class HostProcesses:
    """Processes started in the hosts' namespaces, SCHED_FIFO (a busy machine would otherwise
    stall a sender long enough to drain its queue); whatever still runs at exit is killed."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[str]] = []

    def __enter__(self) -> HostProcesses:
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.started:
            if p.poll() is None:
                p.kill()
            p.wait()

    def start(self, netns: str, argv: list[str], **kwargs: Any) -> subprocess.Popen[str]:
        """``argv`` in ``netns``, text I/O."""
        p = subprocess.Popen(["ip", "netns", "exec", netns, *realtime_argv(argv)], text=True,
                             **kwargs)
        self.started.append(p)
        return p


def output_of(process: subprocess.Popen[str], timeout_s: float, what: str) -> str:
    """What ``process`` printed once it ended; RuntimeError if it runs past ``timeout_s``."""
    try:
        return process.communicate(timeout=timeout_s)[0]
    except subprocess.TimeoutExpired:
        process.kill()
        raise RuntimeError(f"{what} did not finish within {timeout_s:g} s") from None


def wait_until(ready: Callable[[], bool], what: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Poll ``ready`` until it holds; RuntimeError naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} was not ready within {timeout_s:g} s")
        time.sleep(0.02)


def require_congestion_control(*names: str) -> None:
    """RuntimeError naming each TCP congestion control the kernel does not offer."""
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    missing = [name for name in names if name not in available.split()]
    if missing:
        raise RuntimeError(f"TCP congestion control {', '.join(missing)} is not available "
                           f"here (available: {available.strip()})")


def set_route_options(netns: str, options: dict[str, str], dev: str = "eth0") -> None:
    """Add ``options`` (``congctl``, ``initcwnd``, ``rto_min``, ...) to every route of ``dev``
    in ``netns``; RuntimeError with ip's message if one is refused.

    ``congctl`` is how a host's connections start with the algorithm a trial names: iperf3
    sets TCP_CONGESTION only after connect(), so without it a connection begins as the
    machine's default (bbr here) and keeps the pacing BBR switched on.
    """
    routes = json.loads(_ip(["-n", netns, "-j", "route", "show", "dev", dev]))
    for route in routes:
        argv = ["-n", netns, "route", "change", route["dst"], "dev", dev]
        for key in ("proto", "scope"):
            if key in route:
                argv += [key, str(route[key])]
        if "prefsrc" in route:
            argv += ["src", route["prefsrc"]]
        for name, value in options.items():
            argv += [name, value]
        _ip(argv)


def set_link_options(netns: str, options: dict[str, str], dev: str = "eth0") -> None:
    """Set ``options`` (``gso_max_segs``, ...) of ``dev`` in ``netns`` with ``ip link set``;
    RuntimeError with ip's message if one is refused.

    ``gso_max_segs 1`` is how a host sends segment by segment: Linux otherwise builds GSO
    buffers of about a millisecond of its rate and sends each at once.
    """
    argv = ["-n", netns, "link", "set", "dev", dev]
    for name, value in options.items():
        argv += [name, value]
    _ip(argv)


def _ip(args: list[str]) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout
