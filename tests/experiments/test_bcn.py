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
