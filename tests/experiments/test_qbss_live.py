"""The QBSS study live (root): sender and receiver through bufferlab-switch in Mininet, real
TCP from iperf3, ping and probes. A reduced run (one run of 4-s phases, pings beside a BE
bulk flow) shows the seed's outcome: QBSS takes the link alone and falls to a sliver when
BE starts, the classes take priority > BE > QBSS when all run, and a ping in the priority
class does not wait behind BE's queue. Everything the network made is gone afterwards, also
after a failure."""

import os
import subprocess

import pytest

from bufferlab.experiments.qbss.config import QUICK, SEED_RUNS
from bufferlab.experiments.qbss.evaluation import capture_rows
from bufferlab.experiments.qbss.experiment import run
from bufferlab.experiments.qbss.live import RECEIVER, SENDER, SWITCH, LiveLab

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

CONFIG = QUICK.with_overrides(phase_s=4.0, runs=SEED_RUNS[:1], ping_bulk=(None, "be"),
                              ping_s=4.0, ping_interval_s=0.2)
OURS = {f"bl-{SENDER}", f"bl-{RECEIVER}"}


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _switch_interfaces() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {name for line in out.splitlines()
            if (name := line.split(": ")[1].split("@")[0]).startswith(f"{SWITCH}-")}


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    out = tmp_path_factory.mktemp("qbss_live")
    with LiveLab(CONFIG, work_dir=out / "work") as lab:
        assert _netns_names() & OURS == OURS
        result = run(CONFIG, lab, out)
    return result


def test_qbss_takes_the_link_alone_and_yields_it_to_be(outcome):
    phases = {r["phase"]: r for r in outcome.phase_rows}
    for alone in (1, 5):
        assert phases[alone]["qbss_pct_of_bottleneck"] > 85
    for with_be in (2, 4):
        assert phases[with_be]["qbss_pct_of_bottleneck"] < 6
        assert phases[with_be]["be_pct_of_bottleneck"] > 80
        assert phases[with_be]["qbss_goodput_mbit_per_s"] < phases[1]["qbss_goodput_mbit_per_s"] / 10


def test_all_three_share_by_weight_priority_first(outcome):
    third = next(r for r in outcome.phase_rows if r["phase"] == 3)
    assert third["priority_share_pct"] > third["be_share_pct"] > third["qbss_share_pct"] > 0
    for name in ("qbss", "be", "priority"):
        assert abs(third[f"{name}_share_pct"] - third[f"{name}_weight_share_pct"]) < 5


def test_priority_ping_does_not_wait_behind_the_bulk_queue(outcome):
    rows = {(r["bulk_class"], r["ping_class"]): r for r in outcome.ping_rows}
    queued, priority = rows["BE", "BE"], rows["BE", "priority"]
    assert queued["rtt_median_ms"] > 5 * rows["none", "BE"]["rtt_median_ms"]
    assert priority["rtt_median_ms"] < queued["rtt_median_ms"] / 5
    assert priority["ping_received"] == priority["ping_sent"] == CONFIG.ping_count
    # The switch's own view of the same: the probes' time in the queue. A BE probe may be
    # dropped at BE's full queue, like any BE frame; priority's never are.
    assert queued["switch_queue_avg_us"] > 10 * max(priority["switch_queue_avg_us"], 10)
    assert priority["probes_received"] == priority["probes_sent"] == CONFIG.probe_count
    assert queued["probes_received"] >= 0.9 * CONFIG.probe_count
    assert queued["iperf3_goodput_mbit_per_s"] > 80


def test_frames_were_lost_only_at_admission_and_counted_by_both_ends(outcome):
    trials = outcome.trials.phase + outcome.trials.ping
    assert all(t.accounting.valid for t in trials), [t.accounting.describe() for t in trials]
    for row in capture_rows(outcome.trials.phase[0]):
        received, captured = row["iperf3_received_bytes"], row["captured_payload_bytes"]
        assert received > 0
        # The capture also counts retransmitted payload; iperf3 counts each byte once.
        assert received <= captured + 3000 and captured <= 1.02 * received + 3000, row


def test_network_is_gone_after_the_run(outcome):
    assert not _netns_names() & OURS
    assert not _switch_interfaces()


def test_network_is_gone_after_a_failure(tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        with LiveLab(CONFIG, work_dir=tmp_path):
            raise RuntimeError("boom")
    assert not _netns_names() & OURS
    assert not _switch_interfaces()
