"""The TCP validation without root: a cell's scenario file as both backends read it, what
the live world makes of a scenario (links, flows, sources, refusals), a cell in virtual
time, the comparison and its bands, and a whole run on a test double of the live world."""

import json
import math
from pathlib import Path

import pytest

from bufferlab.experiments.scenario import ScenarioError, load_scenario, parse_scenario
from bufferlab.experiments.tcp_validation.__main__ import main
from bufferlab.experiments.tcp_validation.cells import (
    BOTTLENECK_PORT,
    RECEIVER,
    SENDER,
    UDP_SENDER,
    switch_config,
    write_cell,
)
from bufferlab.experiments.tcp_validation.compare import (
    FAIL,
    INVALID,
    PASS,
    Bands,
    CellRuns,
    compare,
    drop_band,
    pooled_cv,
)
from bufferlab.experiments.tcp_validation.config import (
    DEFAULT_DROP_BAND,
    FULL,
    MBIT,
    MS,
    QUICK,
    Cell,
    ValidationConfig,
)
from bufferlab.experiments.tcp_validation.live import client_argv, generator_argv
from bufferlab.experiments.tcp_validation.live_plan import live_plan, live_topology
from bufferlab.experiments.tcp_validation.measure import FlowResult, RunResult
from bufferlab.experiments.tcp_validation.report import checks
from bufferlab.experiments.tcp_validation.runner import run_cells
from bufferlab.experiments.tcp_validation.virtual_time import run_virtual

CELL = Cell(100 * MBIT, 10 * MS, 0.5, True)


def scenario_of(tmp_path, cell=CELL, config=FULL):
    return load_scenario(write_cell(cell, config, tmp_path))


# -- the grid and the cell's scenario file ----------------------------------------------------

def test_the_grid_is_the_issues_ranges_and_bad_values_name_the_key():
    cells = FULL.cells()
    assert len(cells) == 16
    assert {c.rtt_ns for c in cells} == {10 * MS, 50 * MS}
    assert {c.buffer_bdp for c in cells} == {0.25, 0.5, 1.0, 2.0}
    # BDP at 100 Mbit/s and 10 ms: 125,000 bytes; half of it capped.
    assert CELL.bdp_bytes == 125_000 and CELL.buffer_bytes == 62_500
    assert CELL.name == "100M-10ms-0.5bdp-bg"
    assert len(QUICK.cells()) == 4
    for key, value in (("trial_s", 1), ("rates_bps", (0,)), ("buffers_bdp", ()),
                       ("background_share", 1.0), ("drop_band", 0.0), ("flows", 0)):
        with pytest.raises(ValueError, match=f"^{key}"):
            ValidationConfig(**{key: value})
    with pytest.raises(ValueError, match="colour: unknown key"):
        FULL.with_overrides(colour=1)


def test_a_cells_scenario_file_parses_with_its_network_and_workload(tmp_path):
    scenario = scenario_of(tmp_path)
    links = {(lk.a.node, lk.b.port): lk for lk in scenario.topology.links}
    # snd's NIC at 10 × the bottleneck, rcv's and udp's at it; RTT/4 on snd's and rcv's.
    assert links[SENDER, 1].model.rate_bps == 1000 * MBIT
    assert links[RECEIVER, BOTTLENECK_PORT].model.rate_bps == 100 * MBIT
    assert links[UDP_SENDER, 3].model.rate_bps == 100 * MBIT
    assert [links[h, p].model.delay_ns for h, p in ((SENDER, 1), (RECEIVER, 2), (UDP_SENDER, 3))] \
        == [2_500_000, 2_500_000, 0]
    config = scenario.switches["s61"].config
    assert config.pool_bytes == 16_000_000
    (flow,) = scenario.tcp_flows
    assert (flow.profile, flow.mss_bytes, flow.bytes, flow.start_ns) == \
        ("linux-today", 1460, None, 1_000_000_000)
    (background,) = scenario.sources
    # 20 % of 100 Mbit/s every 10 ms: 250,000 bits = 16.25 frames of 1,538 wire bytes →
    # 16 frames, 16 × 123,040 ns on, the rest of the 10 ms off.
    assert (background.rate_bps, background.on_ns, background.off_ns) == \
        (100 * MBIT, 1_968_640, 8_031_360)
    assert scenario.duration_ns == 19 * 1_000_000_000
    quiet = scenario_of(tmp_path / "quiet", Cell(100 * MBIT, 10 * MS, 0.5, False))
    assert quiet.sources == []


def test_the_bottleneck_queue_is_capped_in_the_switch_config():
    config = switch_config(CELL)
    assert config["ports"][str(BOTTLENECK_PORT)] == {"queue_caps_bytes": {"0": 62_500}}
    assert {e["port"] for e in config["forwarding"]["l2"]} == {1, 2, 3}


# -- the live world's reading of a scenario ---------------------------------------------------

def test_live_folds_host_link_delay_onto_the_switch_and_paces_the_host(tmp_path):
    topology = live_topology(scenario_of(tmp_path).topology)
    links = {(lk.a.node, lk.b.port): lk for lk in topology.links}
    sender = links[SENDER, 1]
    assert sender.model.delay_ns == 5_000_000, "both ways' 2.5 ms on the switch's side"
    assert sender.model.rate_bps == 1000 * MBIT
    assert (sender.host_pacing.rate_bps, sender.host_pacing.burst_bytes) == \
        (1000 * MBIT, 2 * 1514)
    assert links[UDP_SENDER, 3].model.delay_ns == 0


def test_a_link_between_switches_and_a_host_paced_by_the_file_stay_as_written():
    data = {"hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}, "s2": {}},
            "links": [{"a": "h1", "b": "s1-p1", "rate_bps": 10**8, "delay_ns": 1000,
                       "host_pacing": {"rate_bps": 5 * 10**7, "burst_bytes": 3000}},
                      {"a": "s1-p2", "b": "s2-p2", "rate_bps": 10**8, "delay_ns": 7000},
                      {"a": "h2", "b": "s2-p1", "rate_bps": 10**8}]}
    from bufferlab.mininet.topology import parse_topology
    links = live_topology(parse_topology(data)).links
    assert links[0].host_pacing.rate_bps == 5 * 10**7 and links[0].model.delay_ns == 2000
    assert links[1].model.delay_ns == 7000 and links[1].host_pacing is None


def test_live_plan_runs_the_kernels_cubic_with_the_models_frames(tmp_path):
    plan = live_plan(scenario_of(tmp_path), omit_s=3)
    (flow,) = plan.flows
    assert (flow.congestion, flow.port, flow.start_s, flow.bytes) == ("cubic", 5201, 1.0, None)
    argv = client_argv(flow, "10.0.61.2", 3, 19.0)
    assert argv[argv.index("--time") + 1] == "15" and argv[argv.index("--omit") + 1] == "3"
    assert argv[argv.index("--set-mss") + 1] == "1460"
    assert plan.sysctls[SENDER]["net.ipv4.tcp_timestamps"] == "0"
    assert plan.sysctls[RECEIVER]["net.ipv4.tcp_timestamps"] == "0"
    # The connection starts as CUBIC (the route's congctl), not as the machine's default
    # that iperf3's late TCP_CONGESTION would replace (bbr's init leaves pacing on).
    assert plan.route_options[SENDER] == {"congctl": "cubic"}
    assert RECEIVER not in plan.route_options
    (source,) = plan.sources
    # 16 frames of 1,518 bytes (with FCS) per 10-ms tick: 16 × 1,538 × 8 / 10 ms.
    assert (source.burst_frames, source.frame_bytes, source.rate_bps) == (16, 1518, 19_686_400)
    assert source.duration_s == 19.0
    gen = generator_argv(source, "10.0.61.2")
    assert gen[gen.index("--burst-frames") + 1] == "16"
    assert gen[gen.index("--rate-bps") + 1] == "19686400"


def _scenario(tmp_path, flows, sources=()):
    config = {"switch_id": 1, "pool_bytes": 100000, "ports": {"1": {}, "2": {}},
              "forwarding": {"l2": []}}
    (tmp_path / "s1.json").write_text(json.dumps(config))
    return parse_scenario({
        "topology": {"hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}},
                     "links": [{"a": "h1", "b": "s1-p1", "rate_bps": 10**8},
                               {"a": "h2", "b": "s1-p2", "rate_bps": 10**8}]},
        "switches": {"s1": {"config": "s1.json"}}, "sources": list(sources),
        "tcp_flows": flows, "duration_ns": 6 * 10**9}, tmp_path)


def test_live_plan_maps_the_flows_settings_and_refuses_what_it_cannot_run(tmp_path):
    flows = [{"name": "a", "sender": "h1", "receiver": "h2", "profile": "dctcp",
              "initial_window_segments": 4, "rack_tlp": False, "pacing_bps": 50_000_000,
              "gso": False}]
    plan = live_plan(_scenario(tmp_path, flows), omit_s=1)
    assert plan.flows[0].congestion == "dctcp"
    # gso: false is the sender's NIC taking one segment per GSO buffer.
    assert plan.link_options == {"h1": {"gso_max_segs": "1"}}
    gso_on = [{"name": "a", "sender": "h1", "receiver": "h2", "gso": True}]
    assert live_plan(_scenario(tmp_path, gso_on), omit_s=1).link_options == {
        "h1": {"gso_max_segs": "65535"}}
    unset = [{"name": "a", "sender": "h1", "receiver": "h2"}]
    assert live_plan(_scenario(tmp_path, unset), omit_s=1).link_options == {}
    assert plan.sysctls["h1"]["net.ipv4.tcp_ecn"] == "1"
    assert plan.sysctls["h1"]["net.ipv4.tcp_recovery"] == "0"
    assert plan.route_options["h1"] == {"congctl": "dctcp", "initcwnd": "4"}
    assert "--fq-rate" in plan.flows[0].extra_argv
    cases = [
        ([{"name": "a", "sender": "h1", "receiver": "h2", "profile": "linux-2010"}],
         "tcp_flows[0].profile"),
        ([{"name": "a", "sender": "h1", "receiver": "h2", "receive_window_bytes": 10**6}],
         "tcp_flows[0].receive_window_bytes"),
        ([{"name": "a", "sender": "h1", "receiver": "h2", "sack": True},
          {"name": "b", "sender": "h1", "receiver": "h2", "sack": False}],
         "tcp_flows[1].sack"),
        ([{"name": "a", "sender": "h1", "receiver": "h2", "start_ns": 500_000_000}],
         "tcp_flows[0].start_ns"),
        ([{"name": "a", "sender": "h1", "receiver": "h2", "hystart": False}],
         "tcp_flows[0].hystart"),
        ([{"name": "a", "sender": "h1", "receiver": "h2", "prr": False}],
         "tcp_flows[0].prr"),
        ([{"name": "a", "sender": "h1", "receiver": "h2", "gso": False},
          {"name": "b", "sender": "h1", "receiver": "h2", "gso": True}],
         "tcp_flows[1].gso"),
        ([{"name": "a", "sender": "h1", "receiver": "h2"},
          {"name": "b", "sender": "h1", "receiver": "h2", "profile": "newreno"}],
         "tcp_flows[1].algorithm"),
    ]
    for flows, key in cases:
        with pytest.raises(ScenarioError) as error:
            live_plan(_scenario(tmp_path, flows), omit_s=1)
        assert error.value.key == key, error.value
    bernoulli = {"name": "u", "host": "h1", "destination": "h2", "pattern": "bernoulli",
                 "load": 0.1}
    with pytest.raises(ScenarioError) as error:
        live_plan(_scenario(tmp_path, [], [bernoulli]), omit_s=1)
    assert error.value.key == "sources[0].pattern"


# -- virtual time -----------------------------------------------------------------------------

def test_a_cell_in_virtual_time_is_counted_as_iperf3_counts_and_is_deterministic(tmp_path):
    config = FULL.with_overrides(trial_s=2, omit_s=1, rates_bps=(20 * MBIT,))
    cell = Cell(20 * MBIT, 10 * MS, 0.25, False)
    scenario = scenario_of(tmp_path, cell, config)
    first = run_virtual(scenario, config.omit_s)
    assert first.valid and first.backend == "virtual"
    (flow,) = first.flows
    assert flow.seconds == 2.0
    # One flow alone: at most the link's payload share (1,460 of 1,538 wire bytes).
    assert 0.8 * 20e6 * 1460 / 1538 < first.goodput_bps <= 20e6 * 1460 / 1538 * 1.001
    # A quarter BDP (6,250 bytes = 4 frames) overflows: drops counted at admission.
    assert first.admission_drops > 0
    assert run_virtual(scenario, config.omit_s) == first
    with pytest.raises(ValueError, match="omit_s"):
        run_virtual(scenario, 30)


# -- the comparison ---------------------------------------------------------------------------

def run(backend, goodput_bps, drops, losses=None, problems=()):
    return RunResult(backend, (FlowResult("tcp1", round(goodput_bps * 10 / 8), 10.0, 0),),
                     drops, losses or {}, {}, problems)


def test_pooled_cv_by_hand():
    # Groups (90, 110): mean 100, s² 200 → 0.02; (45, 55): 0.02 too; pooled √0.02.
    assert pooled_cv([[90, 110], [45, 55]]) == pytest.approx(math.sqrt(0.02))
    # A single trial or a mean at/below the floor adds nothing.
    assert pooled_cv([[90, 110], [5], [1, 3]], floor=10) == pytest.approx(math.sqrt(0.02))
    assert pooled_cv([[5]]) is None


def test_the_drop_band_is_given_measured_or_the_default():
    cells = [CellRuns("a", (run("live", 9e7, 90), run("live", 9e7, 110)), run("virtual", 9e7, 1))]
    assert drop_band(cells, 0.3, 10, 0.1).drop_band == 0.3
    measured = drop_band(cells, None, 10, 0.1)
    assert measured.drop_band == pytest.approx(2 * math.sqrt(0.02))
    assert "pooled CV" in measured.source
    lonely = [CellRuns("a", (run("live", 9e7, 90),), run("virtual", 9e7, 1))]
    assert drop_band(lonely, None, 10, 0.1).drop_band == DEFAULT_DROP_BAND


def test_a_cell_passes_fails_or_is_invalid():
    bands = Bands(0.10, 0.5, 10, "given")
    lives = (run("live", 100e6, 100), run("live", 100e6, 120),
             run("live", 50e6, 5000, losses={"s61 switch port 1 kernel_drops": 3}))
    good = compare(CellRuns("c", lives, run("virtual", 109e6, 160)), bands)
    # The invalid trial is left out: mean 100 Mbit/s and 110 frames, band 45-175.
    assert (good.valid_trials, good.live_goodput_bps, good.live_drops) == (2, 100e6, 110)
    assert good.drop_limits == (45.0, 175.0)
    assert (good.goodput_verdict, good.drops_verdict, good.verdict) == (PASS, PASS, PASS)
    slow = compare(CellRuns("c", lives, run("virtual", 89e6, 160)), bands)
    assert (slow.goodput_verdict, slow.verdict) == (FAIL, FAIL)
    lossy = compare(CellRuns("c", lives, run("virtual", 100e6, 176)), bands)
    assert (lossy.drops_verdict, lossy.verdict) == (FAIL, FAIL)
    saturated = run("live", 100e6, 100, problems=("s61's packet thread busy 95%",))
    assert not saturated.valid and "packet thread" in saturated.describe()
    none = compare(CellRuns("c", (saturated,), run("virtual", 100e6, 100)), bands)
    assert none.verdict == INVALID
    lines = [c.line() for c in checks([good, none], bands)]
    assert lines[0].startswith("PASS c goodput within 10%")
    assert lines[-1].startswith("FAIL c: INVALID")


# -- the procedure on a test double ----------------------------------------------------------

class FakeLive:
    """Live trials from a table: the first trial of the 0.25-BDP cells loses a frame at a
    veth (invalid, replaced); goodput and drops otherwise near what virtual time gives."""

    def __init__(self):
        self.calls = []

    def trials(self, scenario, omit_s, count, progress):
        self.calls.append(scenario.name)
        out = []
        cap = scenario.switches["s61"].config.ports[2].queue_caps_bytes[0]
        if cap < 20_000:
            out.append(run("live", 1e6, 0, losses={"rcv eth0 rx_dropped": 1}))
        for i in range(count):
            out.append(run("live", 15e6 + i * 1e5, 40 + i))
        for r in out:
            progress(r)
        return out


def test_a_whole_run_on_a_test_double_writes_the_table_and_leaves_invalid_trials_out(tmp_path):
    config = ValidationConfig(rates_bps=(20 * MBIT,), rtts_ns=(10 * MS,),
                              buffers_bdp=(0.25, 1.0), backgrounds=(False,), trial_s=2,
                              omit_s=1, live_repeats=2)
    lines = []
    runs, failures = run_cells(config, tmp_path, FakeLive(), log=lines.append)
    assert failures == []
    assert [r.name for r in runs] == ["20M-10ms-0.25bdp-nobg", "20M-10ms-1bdp-nobg"]
    assert [len(r.live) for r in runs] == [3, 2] and [len(r.valid_live) for r in runs] == [2, 2]
    assert any("INVALID" in line for line in lines) and any("ETA" in line for line in lines)
    # Each cell's scenario file is kept beside the report.
    assert (tmp_path / "cells" / "20M-10ms-1bdp-nobg" / "scenario.json").exists()
    from bufferlab.experiments.tcp_validation.report import write_report
    bands = drop_band(runs, None, 10, 0.1)
    comparisons = [compare(r, bands) for r in runs]
    files = write_report(tmp_path, config, runs, comparisons, bands, [], 1.0, "test")
    report = files[0].read_text()
    assert "rcv eth0 rx_dropped 1" in report and "| 20M-10ms-0.25bdp-nobg |" in report
    rows = (tmp_path / "trials.csv").read_text().splitlines()
    assert rows[0].startswith("cell,backend,trial,valid,goodput_bps,counted_s,"
                              "admission_drops_frames")
    assert len(rows) == 1 + 2 + 3 + 2


def test_the_command_line_refuses_bad_options_with_exit_2(capsys):
    assert main(["--trial-s", "1"]) == 2
    assert "trial_s" in capsys.readouterr().err
    assert main(["--rate-mbps", "0"]) == 2
    assert main(["--jobs", "0"]) == 2


def test_the_example_scenario_is_a_cell_both_worlds_read():
    path = Path(__file__).resolve().parents[2] / "experiments/tcp_validation/examples/cell.json"
    scenario = load_scenario(path)
    assert live_plan(scenario, omit_s=3).flows[0].congestion == "cubic"
    assert scenario.tcp_flows[0].profile == "linux-today"


def test_recorded_live_trials_are_read_back_and_compared_again_without_root(tmp_path):
    config = ValidationConfig(rates_bps=(20 * MBIT,), rtts_ns=(10 * MS,),
                              buffers_bdp=(0.25, 1.0), backgrounds=(False,), trial_s=2,
                              omit_s=1, live_repeats=2)
    first = tmp_path / "first"
    runs, _ = run_cells(config, first, FakeLive(), log=lambda line: None)
    from bufferlab.experiments.tcp_validation.records import read_live_trials
    from bufferlab.experiments.tcp_validation.report import write_report
    bands = drop_band(runs, None, 10, 0.1)
    write_report(first, config, runs, [compare(r, bands) for r in runs], bands, [], 1.0, "t")
    recorded = read_live_trials(first / "trials.csv")
    assert list(recorded) == [r.name for r in runs]
    for cell in runs:
        again = recorded[cell.name]
        assert [r.valid for r in again] == [r.valid for r in cell.live]
        assert [r.admission_drops for r in again] == [r.admission_drops for r in cell.live]
        assert [r.goodput_bps for r in again] == pytest.approx([r.goodput_bps for r in cell.live])
    assert "rcv eth0 rx_dropped 1" in recorded["20M-10ms-0.25bdp-nobg"][0].describe()
    second = tmp_path / "second"
    code = main(["--live-from", str(first), "--rate-mbps", "20", "--rtt-ms", "10",
                 "--buffer-bdp", "0.25", "--buffer-bdp", "1", "--background", "without",
                 "--trial-s", "2", "--omit-s", "1", "--out", str(second)])
    assert code in (0, 1)
    assert (second / "cells.csv").read_text().count("\n") == 3
    assert main(["--live-from", str(tmp_path / "nowhere")]) == 2
