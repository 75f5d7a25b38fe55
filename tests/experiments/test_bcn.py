"""The BCN study: its checks fed passing and violating figures, and a reduced whole run."""

import csv
import io

import pytest

from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.bcn.checks import checks_001, checks_003
from bufferlab.experiments.bcn.evaluation import Run001, Run003
from bufferlab.experiments.bcn.experiment import run


def run003(**changes):
    figures = dict(transmitted=149_978, received=74_945, dropped_at_rlq=74_611, switch_drops=0,
                   egress_min_bps=9.95e9, egress_mean_bps=10e9)
    figures.update(changes)
    return Run003(**figures)


def run001(**changes):
    figures = dict(rates_bps={"S1": 2.5e9, "S2": 2.5e9, "S3": 2.5e9, "S4": 2.5e9},
                   deviation_max=0.1, deviation_min=0.0, deviation_mean=0.05, fairness_index=0.99,
                   switch_drops=100, host_drops=0, congested_link_bps=9.9e9,
                   edge_max_queue_bytes={"s2": 200_000.0, "s3": 150_000.0},
                   edge_pause_frames={"s2": 10, "s3": 5})
    figures.update(changes)
    return Run001(**figures)


def verdicts(checks):
    return {c.name: c.passed for c in checks}


def test_003_checks_pass_on_the_seeds_figures_and_fail_past_each_limit():
    assert all(verdicts(checks_003("003_50", run003())).values())
    assert not verdicts(checks_003("003_50", run003(dropped_at_rlq=74_611 * 1.03)))[
        "003 50 % counts"]
    assert not verdicts(checks_003("003_50", run003(switch_drops=1)))[
        "003 50 % no drop at the congestion point"]
    assert not verdicts(checks_003("003_50", run003(egress_min_bps=9.8e9)))[
        "003 50 % egress at 10 Gbit/s"]


def test_001_checks_pass_on_good_runs_and_fail_on_each_violation():
    good = [run001() for _ in range(3)]
    assert all(verdicts(checks_001(good, [run001(switch_drops=0)] * 3)).values())
    bad = verdicts(checks_001([run001(fairness_index=0.9, deviation_max=0.4)] * 3,
                              [run001(switch_drops=1, congested_link_bps=9e9)] * 3))
    assert not bad["001 mean fairness index"]
    assert not bad["001 mean normalised max deviation"]
    assert not bad["001 + 802.3x no drops"]
    assert not bad["001 + 802.3x congested link utilised"]
    lossless = verdicts(checks_001([run001(switch_drops=0)], []))
    assert not lossless["001 baseline drops in the switch"]
    no_spread = run001(switch_drops=0, edge_pause_frames={"s2": 0, "s3": 0})
    assert not verdicts(checks_001([], [no_spread]))["001 + 802.3x PAUSE spreads to an edge switch"]


@pytest.mark.timeout(300)
def test_a_reduced_study_runs_every_scenario_and_writes_its_outputs(tmp_path):
    progress = io.StringIO()
    outcome = run(tmp_path, seeds_001=1, progress_out=progress)
    lines = progress.getvalue().splitlines()
    assert len(lines) == 4 and lines[-1].startswith("bcn: step 4/4 (100%) 001_8023x seed 1:")
    assert set(outcome.studies) == {s.key for s in st.studies()}
    names = [c.name for c in outcome.checks]
    assert "003 50 % counts" in names and "001 + 802.3x no drops" in names
    # Seed 003 at 50 %: within the seed's 2 % and nothing dropped in the switch; 802.3x: no drops.
    assert verdicts(outcome.checks)["003 50 % counts"]
    assert verdicts(outcome.checks)["003 50 % no drop at the congestion point"]
    assert verdicts(outcome.checks)["001 + 802.3x no drops"]
    with (tmp_path / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["study"] for r in rows] == ["003_50", "003_49", "001_baseline", "001_8023x"]
    assert int(rows[0]["switch_drops"]) == 0
    assert (tmp_path / "report.md").read_text().count("PASS") >= 3
    assert all(p.exists() and p.stat().st_size > 0 for p in outcome.plots)


def test_the_sensitivity_sweep_changes_the_decrease_gain_with_every_feature_off():
    from bufferlab.experiments.bcn.sensitivity import with_gd
    from bufferlab.experiments.scenario import load_scenario

    scenario = load_scenario(st.studies()[0].scenario)
    changed = with_gd(scenario, 6.4e-5)
    assert [s.reaction.gd_per_page for s in changed.sources] == [6.4e-5] * 4
    assert [s.reaction.gi for s in changed.sources] == [s.reaction.gi for s in scenario.sources]
    assert scenario.sources[0].reaction.gd_per_page == 2.6e-4
    assert [s.reaction.features() for s in changed.sources] == [{}] * 4


def test_every_check_the_default_misses_has_the_calibrations_evidence():
    from bufferlab.experiments.bcn import evidence

    names = {c.name for c in checks_003("003_50", run003()) + checks_003("003_49", run003())
             + checks_001([run001()], [run001(switch_drops=0)])}
    assert set(evidence.CALIBRATION) <= names
    # The four checks the documented default misses, fed the default's figures.
    missed = checks_003("003_50", run003(egress_min_bps=9.54e9)) + checks_001(
        [run001(switch_drops=0)],
        [run001(switch_drops=0, edge_pause_frames={"s2": 0, "s3": 0})])
    failing = [c.name for c in missed if not c.passed]
    assert failing == ["003 50 % egress at 10 Gbit/s", "001 baseline drops in the switch",
                       "001 + 802.3x PAUSE spreads to an edge switch"]
    assert all("of 22" in evidence.evidence(name) for name in failing)
    assert evidence.evidence("001 mean fairness index") is None


def test_the_cli_and_report_give_each_failing_check_ours_the_seeds_and_the_evidence(
        tmp_path, monkeypatch, capsys):
    from bufferlab.experiments.bcn import __main__ as cli
    from bufferlab.experiments.bcn.experiment import Outcome
    from bufferlab.experiments.bcn.report import write_report

    checks = checks_003("003_49", run003(egress_min_bps=9.66e9)) + checks_001(
        [run001()], [run001(switch_drops=0)])
    report = write_report(tmp_path / "report.md", {}, checks, [])
    monkeypatch.setattr(cli, "run", lambda *a, **k: Outcome({}, checks, report, [], [], 1.0, []))
    assert cli.main(["--jobs", "1", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("FAIL 003 49 % egress"))
    assert "9.660 Gbit/s" in out[at] and "Throughput 10 Gbps" in out[at]
    assert out[at + 1].startswith("     calibration: 0 of 22 documented settings")
    assert sum(line.startswith("     calibration:") for line in out) == 1
    text = report.read_text()
    assert "| 003 49 % egress at 10 Gbit/s | lowest 1-ms throughput 6–95 ms 9.660" in text
    assert "0 of 22 documented settings; lowest 1-ms bins 4.97–9.66" in text
    # The reference runs beside this one: every feature off, and the undocumented bounds.
    assert "bounds at Qeq (undocumented: a finding, not the default)" in text
    assert "| 003 49 % egress at 10 Gbit/s | FAIL (6.612 Gbit/s) | PASS (9.996 Gbit/s) | FAIL |" in text


def test_a_sources_target_rate_ends_with_its_last_frame():
    from types import SimpleNamespace

    import numpy as np

    from bufferlab.experiments.bcn.plots import rate_while_sending

    times = np.arange(6) * 1_000_000
    results = SimpleNamespace(times_ns=times, series={
        "source/S1/rate_bps": np.array([10e9, 2.5e9, 2.4e9, 2.5e9, 2.6e9, 2.7e9]),
        "source/S1/sent_bytes": np.array([0, 1500, 3000, 3000, 3000, 3000]),
        "source/S3/rate_bps": np.full(6, 2.5e9),
        "source/S3/sent_bytes": np.arange(6) * 1500,
    })
    name, rate = rate_while_sending(results, "S1")
    # Its last frame left by 2 ms: shown up to the sample after it, the drift after is not.
    assert name == "S1 (last frame 2.0 ms)"
    assert np.array_equal(rate[:3], [10, 2.5, 2.4]) and np.isnan(rate[3:]).all()
    name, rate = rate_while_sending(results, "S3")
    assert name == "S3" and np.array_equal(rate, np.full(6, 2.5))
