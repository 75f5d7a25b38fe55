"""The live backend end to end (root): hosts A, B, C and bufferlab-switch in Mininet, the
controller over P4Runtime, the RFC 2544 tester. A reduced run shows the seed's outcomes that
hold on a shared 2-core machine: frames absorbed scale with the threshold and inversely
with the frame size, and the minimum delay grows with the frame size by port C's
serialisation. Everything the network made is gone afterwards, also after a failure."""

import os
import subprocess

import numpy as np
import pytest

from bufferlab.experiments.tor_switch.config import LIVE
from bufferlab.experiments.tor_switch.experiment import run
from bufferlab.experiments.tor_switch.live import SWITCH, LiveBackend, host_ip, tor_topology

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

# Two sizes, two thresholds, one load below C's line rate (the minimum delay needs no
# congestion); trials of 1 s.
CONFIG = LIVE.with_overrides(trial_ms=1000.0, frame_sizes_bytes=(64, 1518),
                             thresholds_pct=(20, 100), loads_pct=(45.0,))


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _switch_interfaces() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {name for line in out.splitlines()
            if (name := line.split(": ")[1].split("@")[0]).startswith(f"{SWITCH}-")}


def _ours() -> set[str]:
    return _netns_names() & {"bl-a", "bl-b", "bl-c"}


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    out = tmp_path_factory.mktemp("tor_switch_live")
    with LiveBackend(CONFIG, work_dir=out / "work") as backend:
        assert _ours() == {"bl-a", "bl-b", "bl-c"}
        result = run(CONFIG, backend, out)
    return result


def test_topology_shapes_every_switch_port_to_the_line_rate():
    topo = tor_topology(CONFIG)
    ports = topo.switch_ports(SWITCH)
    assert sorted(ports) == [1, 2, 3]
    assert {m.rate_bps for m in ports.values()} == {2_000_000}
    assert {m.wire_overhead_bytes for m in ports.values()} == {24}
    assert topo.hosts["c"].ip == f"{host_ip(3)}/24"
    assert topo.hosts["c"].mac == "08:00:00:00:01:03"
    assert topo.switches[SWITCH].pool_bytes == 2 * CONFIG.pool_bytes


def test_frames_absorbed_scale_with_threshold_and_inversely_with_frame_size(outcome):
    burst = {(r["frame_size_bytes"], r["threshold_pct"]): r["burst_per_port_frames"]
             for r in outcome.burst_rows}
    # Ideal: threshold bytes / frame bytes without FCS, e.g. 16,384 B / 508 B = 32 at 100 %.
    # Measured here: 85-95 % of it, and now and then a search that ends ~20 % above it
    # (README "Live backend"); ratios of 2 came out between 1.9 and 2.7.
    for (size, pct), frames in burst.items():
        ideal = CONFIG.pool_bytes * pct / 100 / (size - 4)
        assert 0.7 * ideal <= frames <= 1.3 * ideal, (size, pct, frames, ideal)
    for size in (512, 1024):
        assert 1.5 <= burst[size, 100] / burst[size, 50] <= 3.0, burst
    for pct in (50, 100):
        assert 1.5 <= burst[512, pct] / burst[1024, pct] <= 3.0, burst


def test_minimum_delay_grows_with_frame_size_by_port_cs_serialisation(outcome):
    rows = outcome.delay_rows
    assert all(r["measured_frames"] > 0 for r in rows)
    for pct in CONFIG.thresholds_pct:
        low = {r["frame_size_bytes"]: r["delay_min_us"] for r in rows if r["threshold_pct"] == pct}
        # (1518 − 64) bytes more at 2 Mbit/s: 5,816 µs more on port C alone.
        growth = low[1518] - low[64]
        assert 5816 * 0.9 <= growth <= 5816 * 1.1, low
        # No frame leaves before its own serialisation on C: (L + 20) bytes at the line rate.
        for size, delay_us in low.items():
            assert delay_us >= (size + 20) * 8 / 2, (size, delay_us)


def test_every_frame_of_the_run_is_accounted_and_the_files_are_written(outcome):
    rows = outcome.delay_rows
    assert [(r["frame_size_bytes"], r["threshold_pct"]) for r in rows] == [
        (64, 20), (64, 100), (1518, 20), (1518, 100)]
    for r in rows:
        assert r["sent_frames"] == r["received_frames"] + r["lost_frames"]
        # Each source sends load × line rate / (L + 20) bytes × 8 for 1 s, give or take one.
        per_port = 0.45 * 2_000_000 / ((r["frame_size_bytes"] + 20) * 8)
        assert abs(r["sent_frames"] - 2 * per_port) <= 2, r
    assert outcome.outputs.report.exists()
    assert np.isfinite([r["delay_max_us"] for r in rows]).all()


def test_network_is_gone_after_the_run(outcome):
    assert _ours() == set()
    assert _switch_interfaces() == set()


def test_network_is_gone_after_a_failure_inside_the_block(tmp_path):
    with pytest.raises(RuntimeError, match="boom"), LiveBackend(CONFIG, work_dir=tmp_path):
        assert len(_ours()) == 3
        raise RuntimeError("boom")
    assert _ours() == set()
    assert _switch_interfaces() == set()
