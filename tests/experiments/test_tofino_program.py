"""The seed studies on the TNA port (`--program tna`): seed 000's bursts are counted by the
TM in 80-byte cells (a frame with the 15-byte bridged header in whole cells), the BCN
study's switches run the TNA port (BCN frames from E2E mirror copies truncated to 111
bytes, PAUSE from the TM), and the side-by-side report says why a figure differs. Each
test tells the TNA port from the v1model program by a figure only the port produces."""

from __future__ import annotations

import pytest

from bufferlab.experiments.bcn import __main__ as bcn_main
from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.bcn.experiment import Trial, run_trial
from bufferlab.experiments.common.buffer_engine import TNA_PROGRAM
from bufferlab.experiments.common.checks import Check, all_passed
from bufferlab.experiments.tofino.report import build_up, compare_rows, why
from bufferlab.experiments.tor_switch import __main__ as tor_main
from bufferlab.experiments.tor_switch.backend import BurstCell
from bufferlab.experiments.tor_switch.checks import check_burst_scaling
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.runner import Job, run_cell
from bufferlab.experiments.tor_switch.virtual_time import program_backend

# 50 % of 12,288 B is 6,144 B: 77 cells; 100 %: 154 cells.
SMALL = TorConfig(pool_bytes=12_288, trial_ms=10.0, frame_sizes_bytes=(512, 1024),
                  thresholds_pct=(50, 100), loads_pct=(50.0,))
BURSTS = [BurstCell(size, pct) for pct in (50, 100) for size in (512, 1024)]


@pytest.fixture(scope="module")
def burst_rows() -> dict[str, list[dict]]:
    """Seed 000's buffer-size search on both programs."""
    return {program: [run_cell(Job(program_backend(SMALL, program), SMALL, cell))
                      for cell in BURSTS]
            for program in ("v1model", "tna")}


def test_the_tna_bursts_are_whole_frames_of_cells(burst_rows):
    for row in burst_rows["tna"]:
        # A frame crosses the TM as (frame - 4 FCS + 15 bridged) bytes in 80-byte cells.
        assert row["frame_cells"] == {512: 7, 1024: 13}[row["frame_size_bytes"]]
        assert row["threshold_cells"] == {50: 77, 100: 154}[row["threshold_pct"]]
        fits = row["threshold_cells"] // row["frame_cells"]
        assert fits - 1 <= row["burst_per_port_frames"] <= fits, row
    for row in burst_rows["v1model"]:
        # The v1model share is bytes: floor(share / (frame - 4)) frames.
        assert "frame_cells" not in row
        assert row["burst_per_port_frames"] == row["threshold_bytes"] // (row["frame_size_bytes"] - 4)
    # 1024-byte frames at 50 %: 5 of 13 cells in 77 cells, where 6,144 bytes hold 6 frames.
    by_cell = {p: {(r["frame_size_bytes"], r["threshold_pct"]): r["burst_per_port_frames"]
                   for r in rows} for p, rows in burst_rows.items()}
    assert by_cell["v1model"][(1024, 50)] == 6
    assert by_cell["tna"][(1024, 50)] == 5


def test_the_tna_ratios_are_checked_in_cells_and_shown_in_bytes(burst_rows):
    checks = check_burst_scaling(burst_rows["tna"])
    assert [(c.name, c.binding) for c in checks] == [
        ("frames absorbed scale with the threshold", False),
        ("frames absorbed scale inversely with the frame size", False),
        ("frames absorbed scale with the threshold in cells", True),
        ("frames absorbed scale inversely with the frame's cells", True),
    ]
    v1 = check_burst_scaling(burst_rows["v1model"])
    assert [c.binding for c in v1] == [True, True] and all_passed(v1)


def test_a_check_that_is_not_binding_never_fails_a_run():
    info = Check("ratio in bytes", False, "off by 7.14 %", binding=False)
    assert info.line() == ("INFO ratio in bytes: off by 7.14 % (outside the limit; not "
                           "expected on this program)")
    assert all_passed([info, Check("ratio in cells", True, "off by 0.7 %")])
    assert not all_passed([info, Check("ratio in cells", False, "off by 9 %")])


def test_tor_switch_tna_runs_in_virtual_time_only(capsys):
    assert tor_main.main(["--program", "tna", "--backend", "live"]) == 2
    assert "the TNA port runs on the virtual backend only" in capsys.readouterr().err
    backend = program_backend(SMALL, "tna")
    assert backend.cell_bytes == 80 and backend.tm_overhead_bytes == 15
    assert dict(backend.describe())["switch program"].startswith("p4src/tna/buffer_switch.p4 (TNA)")


def short_trial(key: str, program=TNA_PROGRAM, duration_ns: int = 95_000_000):
    """One BCN study trial of ``duration_ns`` (the shortest its figures take)."""
    study = {s.key: s for s in st.studies(1)}[key]
    return run_trial(Trial(key, study.scenario, 1, duration_ns, program))


def test_bcn_on_the_tna_port_sends_feedback_from_truncated_mirror_copies():
    tna, _figures = short_trial("003_50")
    v1, _figures = short_trial("003_50", program=None)
    cp = tna.ports["s1"][5]
    assert cp["bcn_frames"] > 0
    # Each BCN copy is queued toward its source as the E2E mirror session keeps it: the
    # 21-byte mirror header and 90 sample bytes. The v1model program clones the whole frame.
    assert {tna.ports["s1"][p]["max_queue_bytes"] for p in (1, 2, 3, 4)} == {111}
    assert {v1.ports["s1"][p]["max_queue_bytes"] for p in (1, 2, 3, 4)} == {1500}
    assert "port_drops_frames" not in cp and "port_drops_frames" in v1.ports["s1"][5]
    # Sampling departures (10 Gbit/s) rather than arrivals (20 Gbit/s at the start), the
    # port's first feedback comes later and the queue climbs higher first.
    tna_start, v1_start = build_up(tna.results), build_up(v1.results)
    assert tna_start["first_bcn_us"] > v1_start["first_bcn_us"]
    assert tna_start["peak_queue_first_500us_kb"] > v1_start["peak_queue_first_500us_kb"]


def test_pause_on_the_tna_port_comes_from_the_tm():
    run, figures = short_trial("001_8023x")
    # The core's XOFF is each uplink's ingress limit: its PAUSE frames reach s2 and s3.
    sent = {p: run.ports["s1"][p]["pause_frames"] for p in (1, 2)}
    assert sum(sent.values()) > 0, sent
    assert sum(run.results.switches[e]["pause_frames_honoured"] for e in ("s2", "s3")) \
        == sum(sent.values())
    assert figures.switch_drops == 0


def test_bcn_cli_hands_the_tna_program_to_the_study(monkeypatch, tmp_path):
    seen = {}

    class Done:
        failures, checks, wall_s, report, csv, plots, passed = [], [], 0.0, tmp_path, [], [], True

    def fake_run(out, **kwargs):
        seen.update(out=out, **kwargs)
        return Done()

    monkeypatch.setattr(bcn_main, "run", fake_run)
    assert bcn_main.main(["--program", "tna", "--jobs", "1"]) == 0
    assert seen["program"] == TNA_PROGRAM and seen["out"] == "results/bcn_tna"
    assert bcn_main.main(["--jobs", "1"]) == 0
    assert seen["program"] is None and seen["out"] == "results/bcn"


def test_the_side_by_side_rows_say_why_a_figure_differs():
    rows = compare_rows({
        "v1model": [Check("frames absorbed scale inversely with the frame size", True, "0.00 %"),
                    Check("minimum delay is linear in the frame size", True, "R² 1.0000")],
        "tna": [Check("frames absorbed scale inversely with the frame size", False, "7.14 %",
                      binding=False),
                Check("minimum delay is linear in the frame size", True, "R² 1.0000"),
                Check("frames absorbed scale inversely with the frame's cells", True, "0.74 %")],
    })
    assert rows[0] == {"check": "frames absorbed scale inversely with the frame size",
                       "v1model": "PASS: 0.00 %", "tna": "INFO: 7.14 %",
                       "why_they_differ": why("frames absorbed")}
    assert "cell rounding" in rows[0]["why_they_differ"]
    assert rows[1]["why_they_differ"] == ""
    assert rows[2]["v1model"] == "—" and rows[2]["tna"] == "PASS: 0.74 %"
    assert "egress-only BCN sampling" in why("003 50 % counts")
    assert "TM-native PAUSE" in why("001 + 802.3x no drops")


def test_the_report_puts_both_programs_side_by_side(tmp_path):
    from types import SimpleNamespace

    from bufferlab.experiments.bcn.evaluation import Run003
    from bufferlab.experiments.tofino.report import write_report
    from bufferlab.experiments.tofino.study import Runs

    def tor(rows, checks):
        return SimpleNamespace(burst_rows=rows, checks=checks, passed=True)

    def bcn(egress_bps, checks):
        figures = Run003(transmitted=150_245, received=74_000, dropped_at_rlq=75_000,
                         switch_drops=0, egress_min_bps=egress_bps, egress_mean_bps=9.9e9,
                         peak_queue_bytes=486_315.0)
        return SimpleNamespace(studies={"003_50": SimpleNamespace(figures={1: figures}, runs={})},
                               checks=checks, passed=True)

    size = "frames absorbed scale inversely with the frame size"
    runs = Runs(
        tor={"v1model": tor([{"frame_size_bytes": 512, "threshold_pct": 50,
                              "threshold_bytes": 32_768, "burst_per_port_frames": 64}],
                             [Check(size, True, "0.78 %")]),
             "tna": tor([{"frame_size_bytes": 512, "threshold_pct": 50, "threshold_bytes": 32_768,
                          "threshold_cells": 410, "frame_cells": 7, "burst_per_port_frames": 58}],
                        [Check(size, False, "7.14 %", binding=False)])},
        bcn={"v1model": bcn(9.54e9, [Check("003 50 % egress at 10 Gbit/s", False, "9.540")]),
             "tna": bcn(7.8e9, [Check("003 50 % egress at 10 Gbit/s", False, "7.800")])},
        tor_config=None, bcn_seeds=1, cell_bytes=80,
        mapping_notes={"seed 000 switch": ["`tm_pool_cfg EG_APP_POOL_0 size_cells=819`"]})
    report, checks_csv = write_report(tmp_path, runs)
    text = report.read_text()
    assert f"| {size} | PASS: 0.78 % | INFO: 7.14 % | {why('frames absorbed')} |" in text
    assert "| 512 | 50 | 32768 | 410 | 7 | 64 | 58 | 32512 | 406 |" in text
    assert "| 003_50 | lowest 1-ms egress (Gbit/s) | 9.540 | 7.800 |" in text
    assert "| 003_50 | peak congested queue (KB) | 486 | 486 |" in text
    assert "`tm_pool_cfg EG_APP_POOL_0 size_cells=819`" in text
    lines = checks_csv.read_text().splitlines()
    assert lines[0] == "check,v1model,tna,why_they_differ" and len(lines) == 3


def test_frames_leave_the_tna_port_in_their_wire_time():
    """The engine's TM buffers the TNA port's bridged header with the frame, but the port
    is busy only for what egress emits: a frame leaves as on v1model, (476 + 24) bytes
    at 1 Gbit/s = 4,000 ns apart (the 15 bytes more made it 4,120)."""
    from bufferlab.controller.config import parse_config
    from bufferlab.experiments.common.buffer_engine import (
        PROGRAMS,
        compiled_program,
        programmed_engine,
    )
    from bufferlab.traffic import layers

    macs = {p: f"08:00:00:00:01:0{p}" for p in (1, 3)}
    config = parse_config({"switch_id": 1, "pool_bytes": 100_000, "ports": {"1": {}, "3": {}},
                           "forwarding": {"l2": [{"mac": m, "port": p} for p, m in macs.items()]}})
    times = {}
    for name, path in PROGRAMS.items():
        engine = programmed_engine(config, compiled_program(path), rate_bps={3: 1_000_000_000})
        for seq in range(3):
            engine.send(1, bytes(layers.probe_frame(macs[1], macs[3], "10.0.1.1", "10.0.1.3",
                                                    flow=1, seq=seq, frame_bytes=476)), 1000 + seq)
        engine.drain()
        times[name] = [t for _port, _frame, t in engine.received()]
    assert times["tna"] == times["v1model"] == [5000, 9000, 13000]


def test_a_reduced_side_by_side_run_of_seed_000(tmp_path):
    from bufferlab.experiments.tofino.report import write_report
    from bufferlab.experiments.tofino.study import run

    config = TorConfig(pool_bytes=12_288, trial_ms=20.0, frame_sizes_bytes=(512, 1024),
                       thresholds_pct=(50, 100), loads_pct=(55.0,),
                       burst_frame_sizes_bytes=(512, 1024), burst_thresholds_pct=(50, 100))
    runs = run(tmp_path, config, None, jobs=1)
    assert sorted(runs.tor) == ["tna", "v1model"] and runs.bcn == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tor_switch_tna", "tor_switch_v1model"]
    report, _csv = write_report(tmp_path, runs)
    text = report.read_text()
    # The TNA column has the checks in cells; the v1model column has none of them.
    assert "| frames absorbed scale with the threshold in cells | — | " in text
    assert "| 1024 | 50 | 6144 | 77 | 13 | 6 | 5 | 6120 | 65 |" in text
    assert "`tm_queue_buffer 3 0 pool_id=EG_APP_POOL_0 guaranteed_cells=0 pool_max_cells=77" in text


def test_the_side_by_side_cli_refuses_bad_options(capsys):
    from bufferlab.experiments.tofino.__main__ import main

    assert main(["--seeds", "0"]) == 2
    assert "--seeds 0: need at least 1" in capsys.readouterr().err
    assert main(["--jobs", "0"]) == 2
