"""The p4lang tutorials' `make run` and `make test` through real sudo with Debian's default
sudoers, after `make tutorials-install` (README "Running the p4lang tutorials").

Debian's sudo looks commands up in its secure_path, so `sudo PATH=$(PATH) python3
run_exercise.py` runs Debian's python3 (which lacks grpc, p4runtime and `p4.tmp`) and
`sudo simple_switch_grpc` finds nothing. The tests show that failure first, install, run a
tutorials-form `basic` exercise (tutorials_form/: the tutorials' Makefile, runner and
runptf.sh steps, importing nothing of bufferlab's) with a new user's PATH (no venv, no
compat folder), and uninstall again. The exercise runs in a folder of the checkout's
build/; afterwards /usr/local/bin and the system Python's site-packages hold what they held
before, and no interface, process or file of the run is left, also after a failure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for sudo, Mininet and veths"),
]

ROOT = Path(__file__).resolve().parents[2]
FORM = Path(__file__).with_name("tutorials_form")
ROUTER = ROOT / "tests" / "p4" / "ipv4_lpm_router.p4"
#: Debian's sudoers: `Defaults secure_path=...`; also root's login PATH on Debian.
DEBIAN_SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SWITCHES = ("s61", "s62")
TAG = f"bltut{os.getpid() % 10000}"


def _tutorials_module():
    spec = importlib.util.spec_from_file_location("compat_tutorials",
                                                  ROOT / "switch" / "compat" / "tutorials.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks the module up there
    spec.loader.exec_module(module)
    return module


def user_env(**extra: str) -> dict[str, str]:
    """A new user's environment: Debian's PATH, no virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return {**env, "PATH": DEBIAN_SECURE_PATH, **extra}


def run(argv: list[str], cwd: Path, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False,
                          timeout=timeout, **kwargs)


def listing(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()} if directory.is_dir() else set()


def interfaces() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {line.split(": ")[1].split("@")[0] for line in out.splitlines()}


def ours(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith((TAG, *(f"{s}-" for s in SWITCHES)))}


@pytest.fixture(scope="module")
def installed():
    """`make tutorials-install` for the module (unless it already was), undone afterwards."""
    if shutil.which("sudo") is None:
        pytest.fail("sudo is not installed: `make setup` installs it")
    secure = run(["sudo", "sh", "-c", 'echo "$PATH"'], ROOT, env=user_env()).stdout.strip()
    if secure != DEBIAN_SECURE_PATH:
        pytest.skip(f"sudo's secure_path is {secure!r}, not Debian's default")
    tutorials = _tutorials_module()
    watched = (tutorials.DEFAULT_BIN_DIR, tutorials.system_site_dir())
    before = {d: listing(d) for d in watched}
    preinstalled = tutorials.RECORD.exists()
    if not preinstalled:
        # The failure: sudo's python3 is Debian's, without p4runtime's packages.
        done = run(["sudo", f"PATH={DEBIAN_SECURE_PATH}", "python3", "-c",
                    "import p4.tmp.p4config_pb2"], ROOT, env=user_env())
        assert done.returncode != 0 and "No module named 'p4'" in done.stderr, done.stderr
        # `-o setup`: the venv running this test is the one to install; bringing it up to
        # date (a rebuild) is `make build`'s job, not this test's.
        done = run(["make", "-o", "setup", "tutorials-install"], ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "linked /usr/local/bin/simple_switch_grpc" in done.stdout, done.stdout
    try:
        yield
    finally:
        if not preinstalled:
            done = run(["make", "tutorials-uninstall"], ROOT)
            assert done.returncode == 0, done.stdout + done.stderr
            assert {d: listing(d) for d in watched} == before
            assert not tutorials.RECORD.exists()


@pytest.fixture(scope="module")
def exercise(installed):
    """The tutorials-form tree in build/, `basic.p4` put in; everything of it gone afterwards."""
    work = ROOT / "build" / f"tutorials-sudo-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(FORM, work)
    basic = work / "exercises" / "basic"
    shutil.copy(ROUTER, basic / "basic.p4")
    shutil.copytree(ROUTER.parent / "include", basic / "include")
    try:
        yield basic
    finally:
        _kill_processes_in(work)
        for name in ours(interfaces()):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        shutil.rmtree(work)
        assert not ours(interfaces())


def free_ports(count: int) -> int:
    """The first of `count` consecutive loopback ports free now, from a port the kernel
    picked (not a scan from a fixed start, which labs running at once would share)."""
    while True:
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            base = first.getsockname()[1]
            taken = []
            try:
                for port in range(base + 1, base + count):
                    s = socket.socket()
                    taken.append(s)
                    s.bind(("127.0.0.1", port))
                return base
            except OSError:
                continue
            finally:
                for s in taken:
                    s.close()


def _kill_processes_in(work: Path) -> None:
    """SIGKILL every process whose working directory is in `work` (a run cut short)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if Path(os.readlink(proc / "cwd")).is_relative_to(work):
                os.kill(int(proc.name), signal.SIGKILL)
        except OSError:
            continue


def test_make_run_brings_the_network_up_through_sudo(exercise):
    base = free_ports(4)
    done = run(["make", "run", f"GRPC_BASE={base}", f"THRIFT_BASE={base + 2}"], exercise,
               input="pingall\nh1 ping -c 1 10.0.3.3\nexit\n", env=user_env())
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    # `sudo PATH=... python3`: Debian's python3, as the tutorials' Makefile runs it.
    assert f"PATH={DEBIAN_SECURE_PATH} python3 ../../utils/run_exercise.py" in report
    assert "Results: 0% dropped (6/6 received)" in report, report
    assert "1 packets transmitted, 1 received" in report, report
    for switch in SWITCHES:
        # simple_switch_grpc (found by the sudo'd runner on the PATH) is bufferlab-switch.
        log = (exercise / "logs" / f"{switch}.log").read_text()
        assert "port 1: " in log, log
        requests = (exercise / "logs" / f"{switch}-p4runtime-requests.txt").read_text()
        assert requests.count("[SetForwardingPipelineConfigRequest]") == 1
        assert requests.count("[WriteRequest]") == 4
        assert (exercise / "pcaps" / f"{switch}-eth3_out.pcap").stat().st_size > 24
    assert not ours(interfaces()), "the network is not down"


def test_make_test_runs_ptf_through_sudo(exercise):
    grpc_port, thrift_port = (base := free_ports(2)), base + 1
    done = run(["make", "test"], exercise, env=user_env(
        VETH=f"{TAG}v", GRPC_PORT=str(grpc_port), THRIFT_PORT=str(thrift_port)))
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    # runptf.sh's own lines: sudo finds simple_switch_grpc, `which ptf` is the compat one.
    assert "+ sudo simple_switch_grpc --log-file ss-log" in report, report
    assert "+ sudo /usr/local/bin/ptf --pypath ../../utils" in report, report
    assert "Ran 2 tests in " in report and "\nOK\n" in report, report
    log = (exercise / "ss-log").read_text()
    assert "port 0: " in log and "SIGTERM: stopping" in log, log
    assert not ours(interfaces()), "runptf.sh left veths"
