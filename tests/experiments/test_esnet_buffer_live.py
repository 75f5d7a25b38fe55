"""The ESnet buffer study live (root): four Mininet hosts and two bufferlab-switches, real
TCP (iperf3 -P 2, cubic) over a 50 ms path beside UDP background, scaled by k = 0.1. A
reduced run (8-s trials, two buffer sizes, two paced rates) shows the seed's direction: the
bigger buffer drops fewer frames and carries more TCP, and a sender paced below the share
the background leaves loses nothing. Every frame is accounted for, and the network is gone
afterwards, also after a failure."""

import os
import subprocess
from pathlib import Path

import pytest

from bufferlab.experiments.common.realtime import REALTIME_PRIORITY
from bufferlab.experiments.esnet_buffer.config import QUICK
from bufferlab.experiments.esnet_buffer.experiment import run
from bufferlab.experiments.esnet_buffer.live import (
    HOSTS,
    PACKET_THREAD_NAME,
    PACKET_THREAD_PRIORITY,
    EsnetLab,
    describe,
    switch_names,
)

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

MB = 1_000_000
G = 1_000_000_000
CONFIG = QUICK.with_overrides(trial_s=8.0, omit_s=2.0, backgrounds_bps=(2 * G,),
                              buffers_bytes=(120 * MB, 6 * MB), paced_bps=(2 * G,),
                              hold_packets=(), hold_paced_bps=(), extra_congestion=())
PREFIX = "bl-esnet-test-"
OURS = {f"{PREFIX}{h}" for h in HOSTS}
# Not the study's s41/s42: the test may run beside a run of the study.
FIRST_SWITCH = 43
NAMES = switch_names(FIRST_SWITCH)


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _switch_interfaces() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {name for line in out.splitlines()
            if (name := line.split(": ")[1].split("@")[0]).startswith(
                tuple(f"{n}-" for n in NAMES))}


def _thread_priorities(pid: int) -> dict[str, set[tuple[int, int]]]:
    """(policy, priority) of a process's threads, by thread name."""
    found: dict[str, set[tuple[int, int]]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        tid = int(task.name)
        found.setdefault((task / "comm").read_text().strip(), set()).add(
            (os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority))
    return found


SCHEDULING: dict[str, dict[str, set[tuple[int, int]]]] = {}


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    out = tmp_path_factory.mktemp("esnet_live")
    with EsnetLab(CONFIG, work_dir=out / "work", netns_prefix=PREFIX,
                  first_switch=FIRST_SWITCH) as lab:
        assert _netns_names() & OURS == OURS
        for sw in NAMES:
            SCHEDULING[sw] = _thread_priorities(lab.switch_pid(sw))
        result = run(CONFIG, lab, out, describe(CONFIG, NAMES), progress=lambda _: None)
    return {(r["table"], r["seed_setting"]): r for r in result.rows}


def test_the_switches_packet_threads_preempt_the_hosts_tools(outcome):
    # The hosts' tools run SCHED_FIFO at REALTIME_PRIORITY; a switch's packet thread at the
    # same priority waited behind them (see PACKET_THREAD_PRIORITY).
    for sw in NAMES:
        threads = SCHEDULING[sw]
        assert threads.pop(PACKET_THREAD_NAME) == {(os.SCHED_FIFO, PACKET_THREAD_PRIORITY)}
        assert set().union(*threads.values()) == {(os.SCHED_FIFO, REALTIME_PRIORITY)}
    assert PACKET_THREAD_PRIORITY > REALTIME_PRIORITY


def test_the_bigger_buffer_drops_less_and_carries_more(outcome):
    big, small = outcome["buffer_2g", 120 * MB], outcome["buffer_2g", 6 * MB]
    assert big["live_buffer_bytes"] == 12_000_000 and small["live_buffer_bytes"] == 600_000
    assert big["admission_drops_frames"] < small["admission_drops_frames"]
    assert big["tcp_throughput_bps"] > small["tcp_throughput_bps"]
    # 1.9 × BDP of buffer: TCP takes its share of the 1 Gbit/s link (800 Mbit/s; goodput is
    # 8948 of every 9038 bytes on the wire) and the UDP background all it sent.
    assert big["tcp_throughput_bps"] > 0.9 * 800e6
    assert big["udp_received_frames"] == big["udp_sent_frames"] > 0


def test_pacing_below_the_share_loses_nothing(outcome):
    # 200 Mbit/s against the 800 left: while a 20-ms background burst holds the link the
    # paced flow queues ~500 KB of the 1.2 MB (at 300 Mbit/s it was ~750 KB, and a stalled
    # moment on a loaded machine overflowed it in a full `make test` run).
    paced = outcome["paced_2g", 2 * G]
    assert (paced["live_send_bps"], paced["live_buffer_bytes"]) == (200_000_000, 1_200_000)
    assert paced["admission_drops_frames"] == 0
    assert paced["tcp_retransmits_segments"] == 0
    assert paced["tcp_throughput_bps"] > 0.95 * 200e6
    # Paced above the share (900 Mbit/s against 800 left), the queue overflows.
    assert outcome["paced_2g", 9 * G]["admission_drops_frames"] > 0


def test_frames_were_lost_only_at_admission(outcome):
    assert all(r["valid"] for r in outcome.values()), [r["accounting"] for r in outcome.values()]


def test_network_is_gone_after_the_run(outcome):
    assert not _netns_names() & OURS
    assert not _switch_interfaces()


def test_network_is_gone_after_a_failure(tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        with EsnetLab(CONFIG, work_dir=tmp_path, netns_prefix=PREFIX, first_switch=FIRST_SWITCH):
            raise RuntimeError("boom")
    assert not _netns_names() & OURS
    assert not _switch_interfaces()
