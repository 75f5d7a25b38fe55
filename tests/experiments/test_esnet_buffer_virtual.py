"""Seed 004 in virtual time: the config's errors, the grid at the seed's scale, a trial's
scenario (links, pacing, the background's bursts), short trials through bufferlab-sim
(goodput against its bound, the hold queue's drops), the checks per profile on synthetic
rows, and a whole run on a test double with live rows beside ours."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from bufferlab.experiments.common.traffic_tools import IperfResult
from bufferlab.experiments.esnet_buffer import experiment
from bufferlab.experiments.esnet_buffer.accounting import Accounting
from bufferlab.experiments.esnet_buffer.backend import Trial, TrialSpec
from bufferlab.experiments.esnet_buffer.checks import evaluate_by_profile
from bufferlab.experiments.esnet_buffer.config import (
    MB,
    VIRTUAL_FULL,
    VIRTUAL_QUICK,
    EsnetConfig,
)
from bufferlab.experiments.esnet_buffer.evaluation import trial_row
from bufferlab.experiments.esnet_buffer.runner import virtual_trials
from bufferlab.experiments.esnet_buffer.virtual_time import (
    VirtualTrial,
    background_source,
    run_virtual_trial,
    sender_link_bps,
    trial_scenario,
)

G = 1_000_000_000


def _spec(table: str = "paced_2g", setting: int = 3 * G, buffer: int | None = 12 * MB,
          hold: int | None = None, send: int = 3 * G, background: int = 2 * G,
          trial_s: float = 1.0, omit_s: float = 1.0, burst: int = 2778) -> TrialSpec:
    return TrialSpec(table, setting, 10 * G, buffer, hold, send, background, trial_s, omit_s,
                     "linux-2010", background_burst_frames=burst)


# -- config and grid ------------------------------------------------------------------------

@pytest.mark.parametrize("changes, message", [
    ({"k": 0.1}, "k: virtual time runs the seed's scale"),
    ({"profiles": ("cubic",)}, "profiles: one or more of linux-2010"),
    ({"profiles": ()}, "profiles:"),
    ({"profiles": ("linux-2010", "linux-2010")}, "profiles:"),
    ({"trial_s": 0.2, "omit_s": 0.0}, "trial_s: at least 0.5 s"),
    ({"extra_congestion": ("bbr",)}, "extra_congestion, tcp_sysctls:"),
    ({"backend": "ns3"}, "backend: 'ns3' is not one of live, virtual"),
])
def test_virtual_config_errors_name_the_key(changes, message):
    with pytest.raises(ValueError, match=message):
        replace(VIRTUAL_FULL, **changes)


def test_the_virtual_grid_is_the_seed_s_own_once_per_profile():
    trials = virtual_trials(VIRTUAL_FULL)
    assert len(trials) == 2 * (12 + 10 + 2 + 4)
    assert [t.profile for t in trials[:28]] == ["linux-2010"] * 28
    assert {t.profile for t in trials[28:]} == {"linux-today"}
    assert {(t.spec.link_bps, t.spec.trial_s, t.spec.omit_s) for t in trials} == {
        (10 * G, 30.0, 5.0)}
    buffers = [t.spec.buffer_bytes for t in trials[:6]]
    assert buffers == [120 * MB, 60 * MB, 36 * MB, 24 * MB, 12 * MB, 6 * MB]
    assert {t.spec.background_burst_frames for t in trials if t.spec.background_bps == 2 * G} \
        == {2778}
    hold = [t.spec for t in trials[:28] if t.spec.table == "hold"]
    assert [(s.hold_packets, s.buffer_bytes) for s in hold] == [(2000, None), (4096, None)]
    # 3/4 of 64 MiB, as a Linux 2.6 receiver advertises its buffer.
    assert {t.receive_window_bytes for t in trials} == {50_331_648}
    assert (VIRTUAL_QUICK.trial_s, VIRTUAL_QUICK.omit_s) == (10.0, 2.0)


# -- a trial's scenario ---------------------------------------------------------------------

def test_a_trial_is_the_live_network_at_the_seed_s_scale():
    trial = VirtualTrial(_spec(), "linux-2010", 50_331_648)
    scenario = trial_scenario(trial)
    links = {(link.a.node, link.b.node): link.model for link in scenario.topology.links}
    # HTB at 3 Gbit/s counts 9,014 bytes a frame, the link 9,038.
    assert links[("snd", "s41")].rate_bps == sender_link_bps(trial.spec) == 3_007_987_575
    assert (links[("snd", "s41")].delay_ns, links[("rcv", "s42")].delay_ns) == (12_500_000,
                                                                                12_500_000)
    assert links[("s41", "s42")].rate_bps == 10 * G and links[("s41", "s42")].delay_ns == 0
    assert {m.wire_overhead_bytes for m in links.values()} == {24}
    assert scenario.switches["s41"].config.ports[5].queue_caps_bytes[0] == 12 * MB
    assert [(f.profile, f.mss_bytes, f.receive_window_bytes, f.start_ns)
            for f in scenario.tcp_flows] == [("linux-2010", 8960, 50_331_648, 1_000_000_000)] * 2
    # 1 s of lead, 1 s left out, 1 s measured.
    assert (trial.measured_from_ns, trial.end_ns, scenario.duration_ns) == (
        2_000_000_000, 3_000_000_000, 3_000_000_000)
    assert sender_link_bps(_spec(send=10 * G)) == 10 * G


def test_the_background_comes_in_iperf3_s_100_ms_bursts_or_frame_by_frame():
    burst = background_source(_spec())
    # 2,778 frames of 9,020 wire bytes at 10 Gbit/s (7,216 ns each), then silence until the
    # next tick; the tick keeps the mean rate (2,778 × 9,000 × 8 bits / 2 Gbit/s).
    assert (burst.rate_bps, burst.on_ns, burst.on_ns + burst.off_ns) == (
        10 * G, 2778 * 7216, 100_008_000)
    assert burst.sizes == ((8996, 1),)
    smooth = background_source(_spec(burst=1))
    assert (smooth.rate_bps, smooth.on_ns) == (2 * G, None)
    assert background_source(_spec(background=0)) is None


# -- trials in the simulator ----------------------------------------------------------------

def test_a_paced_trial_gets_its_paced_rate_without_loss():
    # 3 Gbit/s with 12 MB beside the 2 Gbit/s bursty background: the seed's lossless row.
    trial = run_virtual_trial(VirtualTrial(_spec(), "linux-2010", 50_331_648))
    row = trial_row(trial, 1.0)
    # Goodput is at most the paced rate's payload, 8,960 of every 9,014 bytes HTB counts,
    # give or take a segment per flow where the measured second starts and ends.
    bound = 3 * G * 8960 / 9014
    assert 0.97 * bound < row["tcp_throughput_bps"] <= bound + 2 * 8960 * 8
    assert row["admission_drops_frames"] == 0 and row["valid"]
    assert (row["tcp_retransmits_segments"], row["tcp_timeouts"]) == (0, 0)
    # 3 s of background (1 s of lead, 2 s with TCP) in bursts of 2,778 every 100 ms: 30
    # bursts, every frame delivered.
    assert row["udp_sent_frames"] == row["udp_received_frames"] == 30 * 2778


def test_a_small_hold_queue_drops_in_the_traffic_manager_and_is_counted_as_admission():
    spec = _spec("hold", 100, buffer=None, hold=100, send=10 * G, trial_s=0.5, omit_s=0.5)
    trial = run_virtual_trial(VirtualTrial(spec, "linux-today", 50_331_648))
    assert trial.accounting.valid, trial.accounting.describe()
    assert trial.accounting.admission_drops > 0
    assert trial.udp_received_frames < trial.udp_sent_frames
    assert trial.iperf is not None and trial.iperf.received_bps > 0


# -- checks and a whole run -----------------------------------------------------------------

def _row(profile: str, table: str, setting: int, buffer: int, thr: float, drops: int = 0,
         send: int = 10 * G, background: int = 2 * G) -> dict:
    spec = replace(_spec(table, setting, buffer, send=send, background=background,
                         trial_s=30.0, omit_s=5.0), congestion=profile)
    got = round(thr * 30 / 8)
    return trial_row(Trial(spec, IperfResult(got, got, 30.0, drops), 10, 10,
                           Accounting(drops, {}), tcp_timeouts=0), 1.0)


def _buffer_table(profile: str, cliff_between: tuple[int, int]) -> list[dict]:
    """buffer_2g: 8 Gbit/s down to the buffer above the cliff, 2 Gbit/s below it."""
    return [_row(profile, "buffer_2g", b * MB, b * MB,
                 7.9e9 if b >= cliff_between[0] else 2e9, 0 if b >= cliff_between[0] else 200)
            for b in (120, 60, 36, 24, 12, 6)]


def test_checks_are_per_profile_and_name_it():
    rows = _buffer_table("linux-2010", (60, 36)) + _buffer_table("linux-today", (12, 6))
    by_profile = evaluate_by_profile(rows)
    assert list(by_profile) == ["linux-2010", "linux-today"]
    old = {c.name: c for c in by_profile["linux-2010"]}
    new = {c.name: c for c in by_profile["linux-today"]}
    assert old["linux-2010: cliff buffer_2g"].passed
    assert "between 0.96 and 0.58 × BDP" in old["linux-2010: cliff buffer_2g"].detail
    # Today's cliff sits at 0.19-0.10 × BDP: outside the seed's range.
    assert not new["linux-today: cliff buffer_2g"].passed
    assert old["linux-2010: more buffer never hurts buffer_2g"].passed
    assert old["linux-2010: every loss at the bottleneck's admission"].passed


def test_pacing_checks_on_virtual_rows():
    paced = [_row("linux-2010", "paced_2g", r, 12 * MB, t, d, send=r)
             for r, t, d in ((3 * G, 2.97e9, 0), (4 * G, 3.96e9, 0), (9 * G, 3.9e9, 300))]
    names = {c.name: c.passed for c in evaluate_by_profile(paced)["linux-2010"]}
    assert names["linux-2010: paced at or below the limit paced_2g"]
    assert names["linux-2010: paced above the limit paced_2g"]
    lossy = [_row("linux-2010", "paced_2g", 3 * G, 12 * MB, 2.97e9, 5, send=3 * G)]
    names = {c.name: c.passed for c in evaluate_by_profile(lossy)["linux-2010"]}
    assert not names["linux-2010: paced at or below the limit paced_2g"]


def _seed_like(trial: VirtualTrial) -> Trial:
    """linux-2010 falls off the seed's cliff; linux-today keeps its rate down to 24 MB."""
    spec = trial.spec
    share = spec.link_bps - spec.background_bps
    held = spec.buffer_bytes or (spec.hold_packets or 0) * 9014
    floor = 40 * MB if trial.profile == "linux-2010" else 20 * MB
    if spec.send_bps < spec.link_bps:
        fits = spec.send_bps <= 4.8e9 if spec.background_bps == 2 * G else spec.send_bps <= 3.2e9
        thr, drops = (0.99 * spec.send_bps, 0) if fits else (0.2 * share, 200)
    elif spec.hold_packets is not None:
        thr, drops = (0.99 * share, 0) if spec.hold_packets >= 4096 else (0.6 * share, 200)
    else:
        thr, drops = (0.99 * share, 0) if held > floor else (0.25 * share, 200)
    got = round(thr * spec.trial_s / 8)
    return Trial(spec, IperfResult(got, got, spec.trial_s, drops), 100, 100,
                 Accounting(drops, {}), tcp_timeouts=3 if drops else 0)


def test_a_whole_virtual_run_puts_live_and_both_profiles_beside_the_seed(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(experiment, "run_virtual_trial", _seed_like)
    live = tmp_path / "live"
    live.mkdir()
    with (live / "trials.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, ["table", "seed_setting", "congestion", "valid",
                               "admission_drops_frames", "tcp_throughput_seed_scale_bps"])
        w.writeheader()
        w.writerow({"table": "buffer_2g", "seed_setting": 36 * MB, "congestion": "cubic",
                    "valid": True, "admission_drops_frames": 129,
                    "tcp_throughput_seed_scale_bps": 7.82e9})
    out = tmp_path / "virtual"
    result = experiment.run_virtual(VIRTUAL_QUICK, out, jobs=1, live_dir=live,
                                    progress_out=open("/dev/null", "w"))  # noqa: SIM115
    assert len(result.rows) == 56 and not result.failures
    assert result.passed, [c.line() for c in result.checks if not c.passed]
    assert all(c.name.startswith("linux-2010: ") for c in result.checks)
    assert any(not c.passed for c in result.beside)  # today's cliff is below the range
    report = result.outputs.report.read_text()
    # The seed, the live run × 1/k, then each profile's drops, retransmits, timeouts, Gbit/s.
    assert ("| 36 MB | 0.58 | 200, 2.00 | 129, 7.82 | 200, 200, 3, 2.00 | 0, 0, 0, 7.92 |"
            in report)
    assert "Beside them (reported, not counted in the exit status)" in report
    assert {p.name for p in out.glob("*.csv")} >= {"trials.csv", "linux-2010_buffer_2g.csv",
                                                   "linux-today_hold.csv"}
    header = (out / "trials.csv").read_text().splitlines()[0]
    assert "tcp_timeouts" in header and "congestion" in header


def test_without_a_live_run_the_report_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "run_virtual_trial", _seed_like)
    config = EsnetConfig(k=1.0, backend="virtual", extra_congestion=(), trial_s=10.0,
                         omit_s=2.0, profiles=("linux-2010",))
    result = experiment.run_virtual(config, tmp_path, jobs=1, live_dir=tmp_path / "none",
                                    progress_out=open("/dev/null", "w"))  # noqa: SIM115
    assert result.beside == []
    assert "the live column is empty" in result.outputs.report.read_text()


@pytest.mark.parametrize("argv, message", [
    (["--backend", "virtual", "--k", "0.1"], "error: --k: live only"),
    (["--backend", "virtual", "--headroom"], "error: --headroom: live only"),
    (["--backend", "virtual", "--trial-s", "0.1"], "error: trial_s: at least 0.5 s"),
    (["--backend", "virtual", "--jobs", "0"], "error: --jobs: 0 processes"),
    (["--profile", "linux-2010"], "error: --profile: --backend virtual only"),
])
def test_the_command_line_refuses_options_of_the_other_world(argv, message, capsys):
    from bufferlab.experiments.esnet_buffer.__main__ import main
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(message)


def test_failed_trials_are_reported_and_fail_the_run(tmp_path, monkeypatch):
    def broken(trial: VirtualTrial) -> Trial:
        if trial.spec.table == "hold":
            raise RuntimeError("the simulator refused a frame")
        return _seed_like(trial)

    monkeypatch.setattr(experiment, "run_virtual_trial", broken)
    config = replace(VIRTUAL_QUICK, profiles=("linux-2010",))
    result = experiment.run_virtual(config, tmp_path, jobs=1,
                                    progress_out=open("/dev/null", "w"))  # noqa: SIM115
    assert [f.name for f in result.failures] == ["linux-2010 hold 2,000", "linux-2010 hold 4,096"]
    assert not result.passed
    assert "the simulator refused a frame" in result.outputs.report.read_text()
