"""The ESnet buffer study's pure parts: scaling, the trial grid, the tools' command lines
and outputs, the two-switch loss accounting, the rows, each check on data that meets it
and data that breaks it, and a whole run on a test double of the lab."""

import json

import pytest

from bufferlab.experiments.common.accounting import SwitchCounters
from bufferlab.experiments.common.traffic_tools import IperfResult
from bufferlab.experiments.esnet_buffer.accounting import Snapshot, account
from bufferlab.experiments.esnet_buffer.backend import Trial, TrialSpec
from bufferlab.experiments.esnet_buffer.checks import (
    cliff_check,
    evaluate,
    hold_check,
    monotone_check,
    pacing_checks,
    validity_check,
)
from bufferlab.experiments.esnet_buffer.config import (
    FULL,
    QUICK,
    EsnetConfig,
    bdp_bytes,
    burst_frames,
    sqrt_n_bytes,
)
from bufferlab.experiments.esnet_buffer.evaluation import (
    burst_s,
    paced_wire_bps,
    pacing_limit_bps,
    seed_row,
    trial_row,
)
from bufferlab.experiments.esnet_buffer.experiment import run
from bufferlab.experiments.esnet_buffer.runner import trial_specs
from bufferlab.experiments.esnet_buffer.workload import (
    generator_argv,
    pacing_classes,
    parse_generator,
    parse_receiver,
)

MB = 1_000_000
G = 1_000_000_000


# -- scaling -------------------------------------------------------------------------------

def test_the_seed_bdp_and_its_scaled_buffers():
    assert bdp_bytes(10 * G) == 62_500_000
    assert bdp_bytes(1 * G) == 6_250_000
    assert sqrt_n_bytes(10 * G) == 44_194_174
    c = EsnetConfig(k=0.1)
    assert c.link_bps == 1 * G
    assert c.bdp_bytes == 6_250_000
    assert [c.live(b) for b in c.buffers_bytes] == [12_000_000, 6_000_000, 3_600_000,
                                                    2_400_000, 1_200_000, 600_000]
    assert [c.live(h) for h in c.hold_packets] == [200, 410]
    assert [c.live(b) for b in c.backgrounds_bps] == [200_000_000, 300_000_000]


@pytest.mark.parametrize(("change", "message"), [
    ({"k": 0}, "k: must be above 0"),
    ({"k": 1.5}, "k: must be above 0"),
    ({"trial_s": 2}, "trial_s: at least 3 s"),
    ({"omit_s": 30}, "omit_s: must be 0 or more and below trial_s"),
    ({"buffers_bytes": (12 * MB, 0)}, "buffers_bytes: every value must be positive"),
    ({"backgrounds_bps": (10 * G,)}, "backgrounds_bps: below the link"),
    ({"paced_bps": (11 * G,)}, "paced rates: at most the link"),
    ({"tcp_buffer_bytes": 1000}, "tcp_buffer_bytes: at least 1 MB"),
    ({"bogus": 1}, "bogus: unknown key"),
])
def test_bad_parameters_name_the_key(change, message):
    with pytest.raises(ValueError, match=message):
        FULL.with_overrides(**change)


def test_presets_differ_only_in_timing():
    assert (FULL.trial_s, FULL.omit_s, QUICK.trial_s, QUICK.omit_s) == (30.0, 5.0, 12.0, 3.0)
    assert FULL.with_overrides(trial_s=12.0, omit_s=3.0) == QUICK


# -- the grid ------------------------------------------------------------------------------

def test_the_grid_scales_every_setting_and_adds_a_rate_above_the_share():
    specs = trial_specs(EsnetConfig(k=0.1, trial_s=10, omit_s=2))
    by_table: dict[str, list[TrialSpec]] = {}
    for s in specs:
        by_table.setdefault(s.table, []).append(s)
    assert list(by_table) == ["buffer_2g", "buffer_3g", "buffer_2g_bbr", "paced_2g", "paced_3g",
                              "hold", "hold_paced"]
    assert [s.buffer_bytes for s in by_table["buffer_3g"]] == [12_000_000, 6_000_000, 3_600_000,
                                                               2_400_000, 1_200_000, 600_000]
    assert {s.background_bps for s in by_table["buffer_3g"]} == {300_000_000}
    assert {s.send_bps for s in by_table["buffer_2g"]} == {1_000_000_000}
    assert {s.congestion for s in by_table["buffer_2g_bbr"]} == {"bbr"}
    paced = by_table["paced_2g"]
    assert [s.send_bps for s in paced] == [300_000_000, 400_000_000, 500_000_000,
                                          600_000_000, 900_000_000]
    assert {s.buffer_bytes for s in paced} == {1_200_000}
    # iperf3's 100 ms timer: 200 Mbit/s leaves 2.5 MB (278 frames) a tick, 300 Mbit/s 417.
    assert {s.background_burst_frames for s in paced} == {278}
    assert {s.background_burst_frames for s in by_table["paced_3g"]} == {417}
    assert [(s.hold_packets, s.buffer_bytes) for s in by_table["hold"]] == [(200, None),
                                                                           (410, None)]
    assert [(s.send_bps, s.hold_packets) for s in by_table["hold_paced"]] == [
        (500_000_000, 410), (600_000_000, 410), (700_000_000, 410), (800_000_000, 410)]
    assert {(s.trial_s, s.omit_s, s.link_bps) for s in specs} == {(10, 2, 1_000_000_000)}


# -- tools ---------------------------------------------------------------------------------

def test_generator_command_and_outputs():
    argv = generator_argv("10.0.4.4", 200_000_000, 14.0)
    assert argv[0].endswith("bufferlab-gen")
    assert argv[1:] == ["--dst", "10.0.4.4", "--port", "5001", "--rate-bps", "200000000",
                        "--frame-size", "9000", "--duration-s", "14", "--spin-ns", "0",
                        "--burst-frames", "1"]
    assert generator_argv("10.0.4.4", 200_000_000, 14.0, 278)[-2:] == ["--burst-frames", "278"]
    assert parse_generator('{"sent_frames": 38803, "rate_bps": 2e8}\n') == 38803
    assert parse_receiver(json.dumps({"total": {"received_frames": 38790}})) == 38790


def test_pacing_is_one_htb_leaf_with_a_two_frame_bucket():
    (leaf,), default = pacing_classes(300_000_000)
    assert default == leaf.minor == 2
    assert (leaf.rate_bps, leaf.burst_bytes, leaf.cburst_bytes) == (300_000_000, 18_028, 18_028)


# -- accounting ----------------------------------------------------------------------------

def _counters(queue_drops: int = 0, tm: int = 0, program: int = 0, kernel: int = 0):
    return SwitchCounters({5: {"kernel_drops": kernel}},
                          {(5, 0): {"dropped_pkts": queue_drops}},
                          {"dropped_by_program": program, "dropped_by_tm": tm})


def _snapshot(s41, s42, veth=0, admission=0):
    return Snapshot({"s41": s41, "s42": s42}, {"bl-snd eth0": {"rx_dropped": 0,
                                                              "tx_dropped": veth}}, admission)


def test_admission_drops_are_valid_and_every_other_loss_is_named():
    before = _snapshot(_counters(), _counters())
    ok = account(before, _snapshot(_counters(program=40), _counters(), admission=40),
                 "s41", 5, 0)
    assert (ok.valid, ok.admission_drops) == (True, 40)
    bad = account(before, _snapshot(_counters(program=40), _counters(kernel=3), veth=2,
                                    admission=38), "s41", 5, 0)
    assert not bad.valid
    assert bad.losses == {"s41 P4 program drops other than admission": 2,
                          "s42 switch port 5 kernel_drops": 3, "bl-snd eth0 tx_dropped": 2}
    assert "INVALID" in bad.describe()


def test_a_hold_queue_counts_its_traffic_manager_drops_as_admission():
    before = _snapshot(_counters(), _counters())
    after = _snapshot(_counters(queue_drops=25, tm=25), _counters())
    assert account(before, after, "s41", 5, 0, tm_admission=True).admission_drops == 25
    assert account(before, after, "s41", 5, 0, tm_admission=True).valid
    # Without a hold queue the same drops are the emulator's.
    assert account(before, after, "s41", 5, 0).losses == {"s41 switch dropped_by_tm": 25}
    # A traffic-manager drop elsewhere is still a loss with a hold queue.
    other = _snapshot(_counters(queue_drops=25, tm=27), _counters())
    assert account(before, other, "s41", 5, 0, tm_admission=True).losses == {
        "s41 switch dropped_by_tm": 2}


# -- rows ----------------------------------------------------------------------------------

def _trial(table, setting, throughput_bps, drops=0, buffer_bytes=1_200_000, hold=None,
           send_bps=1_000_000_000, background_bps=200_000_000, valid=True, burst=1):
    spec = TrialSpec(table, setting, 1_000_000_000, buffer_bytes, hold, send_bps,
                     background_bps, 10.0, 2.0, background_burst_frames=burst)
    iperf = IperfResult(round(throughput_bps * 10 / 8), round(throughput_bps * 10 / 8), 10.0, 3)
    from bufferlab.experiments.esnet_buffer.accounting import Accounting
    losses = {} if valid else {"s42 switch port 5 kernel_drops": 4}
    return Trial(spec, iperf, 1000, 1000 - drops, Accounting(drops, losses))


def test_a_row_carries_the_seed_beside_ours():
    row = trial_row(_trial("buffer_2g", 36 * MB, 400e6, drops=180, buffer_bytes=3_600_000),
                    0.1)
    assert row["buffer_over_bdp"] == pytest.approx(0.576)
    assert row["tcp_throughput_bps"] == pytest.approx(400e6)
    assert row["tcp_throughput_seed_scale_bps"] == pytest.approx(4e9)
    assert row["tcp_throughput_over_share"] == pytest.approx(0.5)
    assert (row["seed_drops_packets"], row["seed_tcp_throughput_bps"]) == ("200", 2e9)
    assert row["seed_background_bps"] == 2 * G
    hold = trial_row(_trial("hold", 2000, 500e6, buffer_bytes=None, hold=200), 0.1)
    assert hold["buffer_over_bdp"] == pytest.approx(200 * 9014 / 6_250_000)
    assert hold["seed_drops_packets"] == "700-800"
    assert seed_row("buffer_3g", 3 * G, 36 * MB) is None


def test_a_background_timer_sends_what_is_due_per_tick_and_lowers_the_pacing_limit():
    assert burst_frames(200_000_000, 100.0) == 278
    assert burst_frames(200_000_000, 0.0) == 1 == burst_frames(1_000, 100.0)
    assert EsnetConfig(background_timer_ms=0).background_burst_frames(200_000_000) == 1
    # 278 frames of 9000 bytes hold a 1 Gbit/s link 20 ms; 1.2 MB absorbs 480 Mbit/s then.
    assert burst_s(278, 1_000_000_000) == pytest.approx(0.020016)
    assert pacing_limit_bps(800_000_000, 1_200_000, 0.020016) == pytest.approx(479.6e6, rel=1e-3)
    assert pacing_limit_bps(800_000_000, 1_200_000, 0.0) == 800e6
    assert pacing_limit_bps(800_000_000, 12_000_000, 0.020016) == 800e6
    with pytest.raises(ValueError, match="background_timer_ms"):
        EsnetConfig(background_timer_ms=-1)


@pytest.mark.parametrize("setting", ["tcp_recovery", "tcp_sack=", "ip_forward=1",
                                     "tcp_x;rm=1", "=0"])
def test_a_tcp_sysctl_must_be_a_tcp_setting_with_a_value(setting):
    assert EsnetConfig(tcp_sysctls=("tcp_recovery=0", "tcp_rmem=4096 1 2")).tcp_sysctls
    with pytest.raises(ValueError, match=f"tcp_sysctls: {setting!r} is not"):
        EsnetConfig(tcp_sysctls=(setting,))


def test_the_link_counts_24_bytes_more_per_frame_than_htb():
    assert paced_wire_bps(800_000_000) == pytest.approx(800_000_000 * 9038 / 9014)


# -- checks --------------------------------------------------------------------------------

SEED_SHAPED = [(120, 12_000_000, 800e6), (60, 6_000_000, 800e6), (36, 3_600_000, 200e6),
               (24, 2_400_000, 200e6), (12, 1_200_000, 200e6), (6, 600_000, 200e6)]


def _buffer_rows(points, table="buffer_2g"):
    return [trial_row(_trial(table, mb * MB, thr, buffer_bytes=b), 0.1) for mb, b, thr in points]


def test_the_seed_shaped_buffer_table_passes_and_a_flat_one_fails():
    assert cliff_check("buffer_2g", _buffer_rows(SEED_SHAPED)).passed
    flat = [(mb, b, 780e6) for mb, b, _ in SEED_SHAPED]
    assert not cliff_check("buffer_2g", _buffer_rows(flat)).passed
    # A cliff below 0.3 × BDP (between 24 MB and 12 MB) is not the seed's.
    late = [(mb, b, 800e6 if mb >= 24 else 200e6) for mb, b, _ in SEED_SHAPED]
    check = cliff_check("buffer_2g", _buffer_rows(late))
    assert not check.passed and "0.38 and 0.19 × BDP" in check.detail


def test_more_buffer_must_never_cost_more_than_noise():
    assert monotone_check("buffer_2g", _buffer_rows(SEED_SHAPED)).passed
    dip = [(mb, b, 600e6 if mb == 120 else thr) for mb, b, thr in SEED_SHAPED]
    check = monotone_check("buffer_2g", _buffer_rows(dip))
    assert not check.passed and "25.0% of the share" in check.detail


def _paced_rows(points, burst=1):
    return [trial_row(_trial("paced_2g", round(p * 10), thr, drops=d, send_bps=p, burst=burst),
                      0.1) for p, d, thr in points]


def test_pacing_below_the_share_must_be_lossless_and_above_it_must_not_pay():
    good = [(300e6, 0, 296e6), (500e6, 0, 493e6), (900e6, 150, 350e6)]
    assert [c.passed for c in pacing_checks("paced_2g", _paced_rows(good))] == [True, True]
    lossy = [(300e6, 3, 296e6), (500e6, 0, 493e6), (900e6, 150, 350e6)]
    assert [c.passed for c in pacing_checks("paced_2g", _paced_rows(lossy))] == [False, True]
    slow = [(300e6, 0, 200e6), (900e6, 150, 150e6)]
    assert [c.passed for c in pacing_checks("paced_2g", _paced_rows(slow))] == [False, True]
    # Above the share with all of it and no loss: the seed's collapse did not happen.
    no_collapse = [(500e6, 0, 493e6), (900e6, 150, 790e6)]
    assert [c.passed for c in pacing_checks("paced_2g", _paced_rows(no_collapse))] == [True,
                                                                                      False]
    # A bursty background lowers the limit to 480 Mbit/s: 500 Mbit/s is above it (the seed's
    # 6 Gbit/s lost frames beside an 8 Gbit/s share), and may not lose nothing there.
    bursty = [(400e6, 0, 396e6), (500e6, 50, 388e6), (600e6, 139, 394e6)]
    assert [c.passed for c in pacing_checks("paced_2g", _paced_rows(bursty, 278))] == [True,
                                                                                        True]
    assert [c.passed for c in pacing_checks("paced_2g", _paced_rows(bursty))] == [False, False]
    only_below = [(300e6, 0, 296e6)]
    checks = pacing_checks("paced_2g", _paced_rows(only_below))
    assert not checks[1].passed and "needs valid trials" in checks[1].detail


def test_the_hold_queue_and_validity_checks():
    rows = [trial_row(_trial("hold", h, thr, buffer_bytes=None, hold=h // 10), 0.1)
            for h, thr in ((2000, 500e6), (4096, 790e6))]
    assert hold_check(rows).passed
    assert not hold_check(rows[::-1][:1]).passed
    swapped = [trial_row(_trial("hold", h, thr, buffer_bytes=None, hold=h // 10), 0.1)
               for h, thr in ((2000, 790e6), (4096, 500e6))]
    assert not hold_check(swapped).passed
    invalid = trial_row(_trial("buffer_2g", 6 * MB, 1e8, buffer_bytes=600_000, valid=False),
                        0.1)
    check = validity_check([*rows, invalid])
    assert not check.passed and "2 of 3 trials" in check.detail and "kernel_drops 4" in check.detail


def test_invalid_trials_are_left_out_of_the_figures():
    rows = _buffer_rows(SEED_SHAPED)
    rows[2] = trial_row(_trial("buffer_2g", 36 * MB, 800e6, buffer_bytes=3_600_000,
                               valid=False), 0.1)
    check = cliff_check("buffer_2g", rows)
    assert check.passed and "0.96 and 0.38 × BDP" in check.detail


def test_a_further_congestion_control_is_reported_not_checked_against_the_seed():
    flat_bbr = [(mb, b, 780e6 if mb != 24 else 600e6) for mb, b, _ in SEED_SHAPED]
    rows = _buffer_rows(SEED_SHAPED) + _buffer_rows(flat_bbr, "buffer_2g_bbr")
    names = [c.name for c in evaluate(rows)]
    assert "cliff buffer_2g" in names and not any("bbr" in n for n in names)


def test_missing_tables_fail():
    checks = evaluate([])
    assert [(c.name, c.passed) for c in checks] == [
        ("cliff", False), ("pacing", False), ("emulator not the bottleneck", True)]
    assert checks[0].detail == "no buffer table was run"


# -- a whole run ---------------------------------------------------------------------------

class SeedLikeLab:
    """Answers every trial as the seed's switch would have, scaled: 0.99 of the share above
    0.58 BDP of buffer, a quarter at or below; paced TCP gets its rate below the share."""

    def __init__(self) -> None:
        self.specs: list[TrialSpec] = []

    def trial(self, spec: TrialSpec) -> Trial:
        from bufferlab.experiments.esnet_buffer.accounting import Accounting
        self.specs.append(spec)
        share = spec.link_bps - spec.background_bps
        held = spec.buffer_bytes or (spec.hold_packets or 0) * 9014
        if spec.send_bps < spec.link_bps:
            # While a burst of the background holds the link, the buffer absorbs the pacing.
            burst = 8 * spec.background_burst_frames * 9000 / spec.link_bps
            fits = spec.send_bps * 9038 / 9014 <= min(share, held * 8 / burst)
            thr, drops = (spec.send_bps * 0.99, 0) if fits else (0.2 * share, 200)
        else:
            thr, drops = (0.99 * share, 0) if held > 3_650_000 else (0.25 * share, 200)
        got = round(thr * spec.trial_s / 8)
        return Trial(spec, IperfResult(got, got, spec.trial_s, drops), 100, 100,
                     Accounting(drops, {}))


def test_a_whole_run_writes_the_tables_with_the_seed_beside_ours(tmp_path):
    lab = SeedLikeLab()
    config = QUICK.with_overrides(extra_congestion=())
    result = run(config, lab, tmp_path, [("network", "a test double")], progress=lambda _: None)
    assert len(lab.specs) == 12 + 10 + 2 + 4
    assert result.passed, [c.line() for c in result.checks if not c.passed]
    report = result.outputs.report.read_text()
    # Ours beside the seed's: drops, retransmits, Mbit/s, × 1/k, the seed's drops and Gbit/s.
    assert "| 36 MB | 3,600,000 B | 0.58 | 200 | 200 | 200.0 | 2.00 | 200 | 2.00 | valid |" \
        in report
    assert "| 4096 packets (36 MB) | 410 packets | 0.59 |" in report
    assert "k = 0.1" in report
    assert "| 100: bursts of 278 frames, 417 frames |" in report
    assert {p.name for p in result.outputs.plots} == {"throughput_vs_buffer.png",
                                                      "throughput_vs_paced_rate.png"}
    header = (tmp_path / "buffer_2g.csv").read_text().splitlines()[0]
    assert "tcp_throughput_bps" in header and "live_buffer_bytes" in header


def test_a_frame_by_frame_background_says_so_in_the_report(tmp_path):
    lab = SeedLikeLab()
    config = QUICK.with_overrides(extra_congestion=(), background_timer_ms=0.0)
    result = run(config, lab, tmp_path, [("network", "a test double")], progress=lambda _: None)
    assert {s.background_burst_frames for s in lab.specs} == {1}
    assert "| 0: frame by frame |" in result.outputs.report.read_text()


# -- headroom ------------------------------------------------------------------------------

def test_headroom_probes_run_unshaped_and_count_a_rate_carried_only_without_loss():
    from bufferlab.experiments.esnet_buffer.accounting import Accounting
    from bufferlab.experiments.esnet_buffer.headroom import headroom_row, headroom_specs
    specs = headroom_specs(8.0, (1_000_000_000, 2_000_000_000))
    assert [(s.table, s.seed_setting, s.link_bps, s.buffer_bytes, s.tcp) for s in specs] == [
        ("headroom_udp", 1_000_000_000, 0, None, False),
        ("headroom_udp", 2_000_000_000, 0, None, False),
        ("headroom_tcp", 1_000_000_000, 0, None, True),
        ("headroom_tcp", 2_000_000_000, 0, None, True)]
    assert [s.send_bps for s in specs[2:]] == [1_000_000_000, 2_000_000_000]
    udp, tcp = specs[1], specs[3]
    assert headroom_row(Trial(udp, None, 249_446, 249_446, Accounting(0, {})))["carried"]
    lossy = Trial(udp, None, 374_169, 372_658,
                  Accounting(0, {"s42 switch port 5 kernel_drops": 1511}))
    assert not headroom_row(lossy)["carried"]
    fast = IperfResult(2_470_000_000, 2_470_000_000, 10.0, 0)
    assert headroom_row(Trial(tcp, fast, 0, 0, Accounting(0, {})))["carried"]
    slow = IperfResult(2_000_000_000, 2_000_000_000, 10.0, 0)
    row = headroom_row(Trial(tcp, slow, 0, 0, Accounting(0, {})))
    assert (row["carried"], row["tcp_throughput_bps"]) == (False, 1.6e9)


@pytest.mark.parametrize("argv, key", [(["--background-timer-ms", "-5"], "background_timer_ms"),
                                       (["--tcp-sysctl", "ip_forward=1"], "tcp_sysctls"),
                                       (["--k", "2"], "k")])
def test_the_command_line_names_the_bad_key_and_exits_2(argv, key, capsys):
    from bufferlab.experiments.esnet_buffer.__main__ import main
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(f"error: {key}:")
