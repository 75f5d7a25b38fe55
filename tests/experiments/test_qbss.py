"""The QBSS study's pure parts: config, the phase schedule, the capture and its binning, the
figures, each check fed passing and violating data, and a whole run on a test double of
the lab (files, report, exit state). The tools' command lines and the counters' accounting
are tested with their modules in `experiments/common`."""

import math
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import PcapWriter

from bufferlab.controller.scheduler import scheduler_commands
from bufferlab.experiments.common import accounting, traffic_tools
from bufferlab.experiments.qbss import capture, checks, evaluation, workload
from bufferlab.experiments.qbss.backend import PhaseTrial, PingTrial
from bufferlab.experiments.qbss.config import (
    BE,
    CLASSES,
    FIRST_WEIGHTS,
    FULL,
    PRIORITY,
    QBSS,
    QUICK,
    SECOND_WEIGHTS,
    SEED_RUNS,
    PhaseRun,
    QbssConfig,
)
from bufferlab.experiments.qbss.experiment import run
from bufferlab.experiments.qbss.switch_config import switch_config
from bufferlab.traffic.probe import ProbeRecord

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime_cli"))

NS = 1_000_000_000
MBIT = 1_000_000
PAYLOAD = evaluation.TCP_PAYLOAD_BYTES

# -- config ----------------------------------------------------------------------------------


def test_presets_are_the_seeds_timing_and_a_quick_one():
    assert (FULL.phase_s, FULL.ping_s, FULL.bottleneck_bps, FULL.ping_bottleneck_bps) == (
        30, 100, 10_000_000, 100_000_000)
    assert (QUICK.phase_s, QUICK.ping_s) == (10, 20)
    assert [r.weights_pct for r in SEED_RUNS[:4]] == [FIRST_WEIGHTS] * 4
    assert [(r.window_bytes, r.be_streams) for r in SEED_RUNS[:4]] == [
        (8192, 1), (None, 1), (8192, 10), (None, 10)]
    assert SEED_RUNS[4].weights_pct == SECOND_WEIGHTS == (30, 69, 1)
    assert FULL.ping_count == 100 and FULL.probe_count == 1000
    assert [(c.tos, c.dscp, c.queue) for c in CLASSES] == [(32, 8, 0), (0, 0, 1), (40, 10, 2)]


@pytest.mark.parametrize(("changes", "message"), [
    ({"phase_s": 4.5}, "phase_s: 4.5 s: whole seconds"),
    ({"phase_s": 3.0}, "phase_s: 3.0 s is too short"),
    ({"ping_interval_s": 0.1}, "ping_interval_s: ping spaces its packets by at least 0.2 s"),
    ({"ping_bulk": ("be", None)}, "ping_bulk: starts with None"),
    ({"ping_bulk": (None, "gold")}, "ping_bulk: unknown class 'gold'"),
    ({"runs": (PhaseRun("x", (50, 40, 20), None, 1),)}, "runs.x.weights_pct: (50, 40, 20)"),
    ({"runs": (PhaseRun("x", (1, 29, 70), None, 0),)}, "runs.x.be_streams: at least one"),
    ({"runs": SEED_RUNS[:1] * 2}, "runs: run names must differ"),
    ({"congestion": "cubic; rm"}, "congestion: 'cubic; rm' is not"),
    ({"bottleneck_bps": 0}, "bottleneck_bps: 0 bit/s must be positive"),
])
def test_config_errors_name_the_key(changes, message):
    with pytest.raises(ValueError, match="qbss config: ") as info:
        FULL.with_overrides(**changes)
    assert message in str(info.value)


def test_unknown_override_is_refused():
    with pytest.raises(ValueError, match="unknown keys"):
        FULL.with_overrides(phases=3)


def test_switch_config_weights_the_bottleneck_and_caps_each_class():
    config = switch_config((30, 69, 1), 64)
    assert config.classes == {8: 0, 10: 2} and config.default_queue == 1
    assert config.ports[2].queue_caps_bytes == (64 * 1514,) * 3
    assert scheduler_commands(config) == ["set_port_scheduler 2 drr 450 1035 15"]


# -- workload ----------------------------------------------------------------------------------


def test_each_class_has_its_own_iperf_port():
    assert [workload.iperf_port(c) for c in CLASSES] == [5201, 5202, 5203]


def test_schedule_starts_and_stops_the_copies_in_the_seeds_order():
    flows = workload.phase_schedule(30.0)
    assert [(f.cls.name, f.start_s, f.duration_s) for f in flows] == [
        ("qbss", 0.0, 150.0), ("be", 30.0, 90.0), ("priority", 60.0, 30.0)]
    assert [len(c) for c in workload.PHASE_CLASSES] == [1, 2, 3, 2, 1]


# -- capture -----------------------------------------------------------------------------------


def _tcp(dport: int, tos: int, payload: int, options: bool = True) -> bytes:
    tcp = TCP(sport=40000, dport=dport, options=[("NOP", None), ("NOP", None),
                                                 ("Timestamp", (1, 2))] if options else [])
    return bytes(Ether() / IP(src="10.0.1.1", dst="10.0.1.2", tos=tos) / tcp / bytes(payload))


def test_frame_headers_give_tos_port_and_payload_even_when_cut():
    assert capture.parse_frame(_tcp(5203, 40, 1448)) == (40, 5203, 1448)
    assert capture.parse_frame(_tcp(5201, 32, 1448)[:capture.SNAP_BYTES]) == (32, 5201, 1448)
    assert capture.parse_frame(_tcp(5202, 0, 0, options=False)) == (0, 5202, 0)
    assert capture.parse_frame(bytes(Ether() / IP() / UDP(dport=5201))) is None
    assert capture.parse_frame(b"\x00" * 20) is None


def test_capture_is_read_back_with_ns_times(tmp_path):
    path = tmp_path / "c.pcap"
    writer = PcapWriter(str(path), nano=True)
    for i, (port, tos) in enumerate([(5201, 32), (5202, 0), (5203, 40)]):
        frame = Ether(_tcp(port, tos, 1448))
        frame.time = Decimal(f"{1_700_000_000 + i}.123456789")
        writer.write(frame)
    writer.write(Ether() / IP() / UDP())
    writer.close()
    frames = capture.read_capture(path)
    assert len(frames) == 3
    assert frames.rx_ns.tolist() == [1_700_000_000_123_456_789 + i * NS for i in range(3)]
    assert frames.dport.tolist() == [5201, 5202, 5203] and frames.tos.tolist() == [32, 0, 40]
    assert frames.payload_bytes.tolist() == [1448] * 3


def _frames(segments, start_ns: int = 0) -> capture.Frames:
    """Full-size data frames of each (class, from s, to s, goodput bit/s) segment, evenly
    spaced, plus a few unmarked control frames on QBSS's port."""
    rx, tos, dport, payload = [], [], [], []
    for cls, lo, hi, rate in segments:
        count = round((hi - lo) * rate / (8 * PAYLOAD))
        for k in range(count):
            rx.append(start_ns + round((lo + (k + 0.5) * (hi - lo) / count) * NS))
            tos.append(cls.tos)
            dport.append(workload.iperf_port(cls))
            payload.append(PAYLOAD)
    for t in (0.0, 0.001):
        rx.append(start_ns + round(t * NS))
        tos.append(0)
        dport.append(workload.iperf_port(QBSS))
        payload.append(37)
    order = np.argsort(rx)
    return capture.Frames(*(np.asarray(v, dtype=np.int64)[order]
                            for v in (rx, tos, dport, payload)))


def test_goodput_per_class_per_interval():
    frames = _frames([(QBSS, 0, 4, 8 * MBIT), (BE, 2, 4, 4 * MBIT)])
    goodput = capture.class_goodput_bps(frames, 0, 4.0, 2.0)
    assert set(goodput) == {"qbss", "be", "priority"}
    assert goodput["qbss"] == pytest.approx([8 * MBIT] * 2, rel=2e-3)
    assert goodput["be"] == pytest.approx([0, 4 * MBIT], rel=2e-3)
    assert goodput["priority"].tolist() == [0.0, 0.0]
    empty = capture.Frames(*(np.zeros(0, dtype=np.int64),) * 4)
    assert capture.class_goodput_bps(empty, 0, 3.0, 1.0)["be"].tolist() == [0.0, 0.0, 0.0]
    assert capture.unmarked_payload_bytes(frames, QBSS) == 74
    assert capture.unmarked_payload_bytes(frames, BE) == 0


def test_tcpdump_command_and_its_drop_count():
    argv = capture.tcpdump_argv("eth0", "/tmp/x.pcap", [5201, 5202])
    assert argv[-1] == "ip and tcp and (dst port 5201 or dst port 5202)"
    assert "--time-stamp-precision=nano" in argv
    assert capture.tcpdump_drops("10 packets captured\n10 packets received by filter\n"
                                 "3 packets dropped by kernel\n") == 3
    with pytest.raises(ValueError, match="no drop count"):
        capture.tcpdump_drops("tcpdump: eth0: No such device exists")


# -- figures ------------------------------------------------------------------------------------

P = 10.0
START_NS = 5 * NS
# What DRR gives 1 / 29 / 70 % of 9.41 Mbit/s of goodput, per phase.
CAP = evaluation.goodput_capacity_bps(10 * MBIT)
SEGMENTS = [
    (QBSS, 0, P, CAP), (QBSS, P, 2 * P, CAP / 30), (QBSS, 2 * P, 3 * P, CAP / 100),
    (QBSS, 3 * P, 4 * P, CAP / 30), (QBSS, 4 * P, 5 * P, CAP),
    (BE, P, 2 * P, CAP * 29 / 30), (BE, 2 * P, 3 * P, CAP * 0.29), (BE, 3 * P, 4 * P, CAP * 29 / 30),
    (PRIORITY, 2 * P, 3 * P, CAP * 0.7),
]


def _trial(segments=SEGMENTS, run_=SEED_RUNS[0], accounting_=None) -> PhaseTrial:
    return PhaseTrial(run_, START_NS, 0.001, _frames(segments, START_NS), {},
                      accounting_ or accounting.Accounting(0, 0))


def test_capacity_and_frame_time():
    assert evaluation.goodput_capacity_bps(10 * MBIT) == pytest.approx(9.4148e6, rel=1e-4)
    assert evaluation.frame_time_s(100 * MBIT) == pytest.approx(123.04e-6, rel=1e-3)


def test_phases_are_bounded_by_the_copies_first_and_last_frames():
    bounds = evaluation.phase_bounds_ns(_trial().frames)
    assert [round((b - START_NS) / NS, 1) for b in bounds] == [0, P, 2 * P, 3 * P, 4 * P, 5 * P]
    with pytest.raises(ValueError, match="no priority data frame"):
        evaluation.phase_bounds_ns(_frames(SEGMENTS[:-1]))
    with pytest.raises(ValueError, match="seed's order"):
        evaluation.phase_bounds_ns(_frames([(QBSS, 0, 1, MBIT), (BE, 0.5, 3, MBIT),
                                            (PRIORITY, 2, 4, MBIT)]))


def test_phase_rows_give_shares_and_the_weights_shares():
    rows = evaluation.phase_rows(_trial(), 10 * MBIT)
    assert [r["classes"] for r in rows] == ["QBSS", "QBSS+BE", "QBSS+BE+priority", "QBSS+BE",
                                            "QBSS"]
    assert rows[0]["qbss_pct_of_bottleneck"] == pytest.approx(94.1, abs=0.1)
    third = rows[2]
    assert [third[f"{c.name}_share_pct"] for c in CLASSES] == pytest.approx([1, 29, 70], abs=0.3)
    assert [third[f"{c.name}_weight_share_pct"] for c in CLASSES] == [1, 29, 70]
    assert rows[1]["be_weight_share_pct"] == pytest.approx(29 / 30 * 100)
    assert rows[1]["priority_weight_share_pct"] == 0
    assert rows[3]["start_s"] == pytest.approx(3 * P, abs=0.01)


def test_settling_is_timed_from_each_change():
    # BE needs 3 s to reach its share after it starts; priority takes over at once.
    slow = [s for s in SEGMENTS if not (s[0] is BE and s[1] == P)] + [
        (BE, P, P + 3, CAP * 0.3), (BE, P + 3, 2 * P, CAP * 29 / 30)]
    rows = evaluation.transition_rows(_trial(slow), P, 10 * MBIT)
    assert [r["change"] for r in rows] == list(workload.CHANGES)
    assert [r["scheduled_s"] for r in rows] == [P, 2 * P, 3 * P, 4 * P]
    assert [r["settle_s"] for r in rows] == [3.0, 0.0, 0.0, 0.0]
    never = {"be": 5e6}
    assert math.isnan(evaluation.settle_s({"be": np.zeros(5)}, never, 1e6))


def test_series_for_plots_and_csv():
    series = evaluation.run_series(_trial(), P, 3.0)
    assert len(series.start_s) == 16 and series.changes_s == pytest.approx(
        (P, 2 * P, 3 * P, 4 * P), abs=0.01)
    assert series.total_bps[:3] == pytest.approx([CAP] * 3, rel=0.01)
    rows = evaluation.series_rows(series)
    assert list(rows[0]) == ["run", "interval_start_s", "qbss_goodput_bps", "be_goodput_bps",
                             "priority_goodput_bps", "total_goodput_bps"]


def _record(flow: int, latency_us: float, queued_us: int) -> ProbeRecord:
    return ProbeRecord(flow, 0, 148, 0, round(latency_us * 1000), 0, True, flow, 1, 2, 1, 0,
                       0, 0, queued_us, 0, 0, 0, 0)


def _ping_trial(bulk, medians_ms) -> PingTrial:
    pings = {c.name: traffic_tools.PingResult(3, 3, (m, m, m * 1.2)) for c, m in
             zip(CLASSES, medians_ms, strict=True)}
    probes = {c.name: [_record(c.queue, m * 500, round(m * 400))] for c, m in
              zip(CLASSES, medians_ms, strict=True)}
    iperf = traffic_tools.IperfResult(10, 94_000_000, 8.0, 0) if bulk else None
    return PingTrial(bulk, pings, probes, 1, iperf, accounting.Accounting(0, 0))


PING_TRIALS = [_ping_trial(None, (0.1, 0.1, 0.1)), _ping_trial("be", (0.3, 6.0, 0.15)),
               _ping_trial("qbss", (6.0, 0.15, 0.12)), _ping_trial("priority", (0.7, 0.2, 6.0))]


def test_ping_rows_compare_each_class_with_its_idle_rtt():
    rows = evaluation.ping_rows(PING_TRIALS)
    assert len(rows) == 12
    be_bulk = {r["ping_class"]: r for r in rows if r["bulk_class"] == "BE"}
    assert be_bulk["BE"]["rtt_median_over_idle"] == pytest.approx(60)
    assert be_bulk["priority"]["rtt_median_ms"] == 0.15
    assert be_bulk["priority"]["iperf3_goodput_mbit_per_s"] == pytest.approx(94.0)
    assert be_bulk["BE"]["switch_queue_avg_us"] == 2400
    assert be_bulk["BE"]["probe_one_way_avg_us"] == pytest.approx(3000)


# -- checks -------------------------------------------------------------------------------------


def _rows(trial=None):
    return evaluation.phase_rows(trial or _trial(), 10 * MBIT)


def test_seed_shaped_data_passes_every_phase_check():
    rows = _rows()
    assert checks.check_qbss_alone(rows, SEED_RUNS[:1]).passed
    assert checks.check_be_takes_over(rows, SEED_RUNS[:1]).passed
    assert checks.check_weights(rows).passed
    transitions = evaluation.transition_rows(_trial(), P, 10 * MBIT)
    assert checks.check_settling(transitions).passed
    assert checks.check_total([evaluation.run_series(_trial(), P, 3.0)], 10 * MBIT).passed


def test_phase_checks_fail_on_data_that_breaks_them():
    # A scavenger that keeps 20 % beside BE, and a total that sags in the middle of phase 2.
    greedy = [s for s in SEGMENTS if s[1] != P] + [
        (QBSS, P, 2 * P, CAP * 0.2), (BE, P, 2 * P, CAP * 0.5)]
    rows = _rows(_trial(greedy))
    be = checks.check_be_takes_over(rows, SEED_RUNS[:1])
    assert not be.passed and "QBSS at most 18.8 %" in be.detail
    weights = checks.check_weights(rows)
    assert not weights.passed and "phase 2" in weights.detail
    total = checks.check_total([evaluation.run_series(_trial(greedy), P, 3.0)], 10 * MBIT)
    assert not total.passed and "70.0 %" in total.detail
    slow = checks.check_settling([{"run": "r", "change": "BE starts", "settle_s": 3.0},
                                  {"run": "r", "change": "BE stops", "settle_s": math.nan}])
    assert not slow.passed and "never settled" in slow.detail
    weak = [dict(r, qbss_pct_of_bottleneck=85.0) for r in _rows()]
    assert not checks.check_qbss_alone(weak, SEED_RUNS[:1]).passed


def test_checks_that_cannot_be_evaluated_fail_and_say_why():
    second = (SEED_RUNS[4],)
    for check in (checks.check_qbss_alone([], second), checks.check_be_takes_over([], second),
                  checks.check_weights([]), checks.check_settling([]), checks.check_total([], 1),
                  checks.check_priority_ping([], 1), checks.check_queued_ping([], 1),
                  checks.check_valid([], [])):
        assert not check.passed and check.detail.startswith("cannot evaluate"), check


def test_ping_checks():
    rows = evaluation.ping_rows(PING_TRIALS)
    assert checks.check_priority_ping(rows, 100 * MBIT).passed
    assert checks.check_queued_ping(rows, 100 * MBIT).passed
    slow_priority = evaluation.ping_rows(PING_TRIALS[:1] + [_ping_trial("be", (0.3, 6, 0.4))])
    failed = checks.check_priority_ping(slow_priority, 100 * MBIT)
    assert not failed.passed and "0.400 ms beside BE bulk" in failed.detail
    no_queue = evaluation.ping_rows(PING_TRIALS[:1] + [_ping_trial("be", (0.3, 0.25, 0.1))])
    assert not checks.check_queued_ping(no_queue, 100 * MBIT).passed


def test_validity_check_names_every_lossy_trial():
    lossy = accounting.Accounting(3, 0, {"switch port 2 kernel_drops": 4})
    bad = checks.check_valid([_trial(accounting_=lossy)], PING_TRIALS)
    assert not bad.passed
    assert bad.detail == ("w8k_1be: INVALID: frames lost outside admission: switch port 2 "
                          "kernel_drops 4")
    good = checks.check_valid([_trial()], PING_TRIALS)
    assert good.passed and good.detail.startswith("5 trials, 0 frames dropped by admission")


# -- a whole run on a test double ---------------------------------------------------------------


class FakeLab:
    """Answers every phase run with the seed-shaped trial and the ping trials in order."""

    def __init__(self) -> None:
        self.asked: list = []

    def describe(self):
        return [("lab", "test double")]

    def phase_trial(self, run_: PhaseRun) -> PhaseTrial:
        self.asked.append(run_.name)
        return _trial(run_=run_)

    def ping_trial(self, bulk):
        self.asked.append(bulk)
        return next(t for t in PING_TRIALS if t.bulk == bulk)


def test_a_run_on_a_test_double_writes_csv_plots_and_report(tmp_path):
    config = QbssConfig(phase_s=P, runs=SEED_RUNS[:1])
    lab = FakeLab()
    result = run(config, lab, tmp_path, progress_out=open(tmp_path / "progress.txt", "w"))
    assert lab.asked == ["w8k_1be", None, "be", "qbss", "priority"]
    assert result.passed, [c.line() for c in result.checks if not c.passed]
    assert len(result.checks) == 8
    names = sorted(p.name for p in result.outputs.csv)
    assert names == ["capture.csv", "goodput_1s.csv", "goodput_3s.csv", "phases.csv",
                     "ping.csv", "transitions.csv"]
    assert sorted(p.name for p in result.outputs.plots) == [
        "ping_rtt.png", "w8k_1be_goodput.png", "w8k_1be_goodput_log.png"]
    header = (tmp_path / "phases.csv").read_text().splitlines()[0]
    assert "qbss_pct_of_bottleneck" in header and "total_goodput_mbit_per_s" in header
    report = result.outputs.report.read_text()
    for heading in ("## Expected outcome", "## Shares per phase", "## How fast the shares change",
                    "## Ping per class beside a bulk flow", "## Was the emulator the bottleneck?",
                    "## Where we differ from the seed, and why"):
        assert heading in report
    assert "| 1 | QBSS | 94.1 | > 90 |" in report
    assert (tmp_path / "progress.txt").read_text().count("step ") == 5
