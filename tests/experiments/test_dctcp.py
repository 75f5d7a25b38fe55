"""The DCTCP study: its config's errors, the grid, a cell's scenario (marking only for
DCTCP, the responses' sizes), a reduced run through bufferlab-sim asserting the paper's
headline results, and each check fed rows that break it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bufferlab.experiments.dctcp.backend import INCAST, LONG, Cell
from bufferlab.experiments.dctcp.checks import evaluate
from bufferlab.experiments.dctcp.config import FULL, QUICK, DctcpConfig
from bufferlab.experiments.dctcp.experiment import run
from bufferlab.experiments.dctcp.runner import cells
from bufferlab.experiments.dctcp.virtual_time import (
    cell_scenario,
    duration_ns,
    hosts,
    query_starts_ns,
    response_bytes,
)

MS = 1_000_000


@pytest.mark.parametrize("changes, message", [
    ({"algorithms": ("reno",)}, "algorithms: .* one or more of dctcp, cubic"),
    ({"k_packets": 0}, "k_packets: 0 must be positive"),
    ({"k_packets": 3000}, "k_packets: K = 4500000 bytes must be below pool_bytes"),
    ({"incast_senders": (0,)}, "incast_senders"),
    ({"query_bytes": 10}, "query_bytes: 10 cannot be split among 40 servers"),
    ({"warmup_ns": 15_000}, "warmup_ns: 15000 is not a multiple of long_sample_ns"),
    ({"link_delay_ns": -1}, "link_delay_ns: -1 must be 0 or more"),
])
def test_config_errors_name_the_key(changes, message):
    with pytest.raises(ValueError, match=f"dctcp config: {message}"):
        replace(FULL, **changes)


def test_the_paper_s_k_and_the_link_s_capacity():
    assert (FULL.k_packets, FULL.k_bytes, FULL.rtt_ns) == (65, 97_500, 100_000)
    # 1,514-byte frames with 24 bytes of framing: 9.844 Gbit/s of frames, 9.493 of payload.
    assert round(FULL.frame_capacity_bps) == 9_843_953_186
    assert round(FULL.goodput_capacity_bps) == 9_492_847_854
    with pytest.raises(ValueError, match="nonsense: unknown key"):
        FULL.with_overrides(nonsense=1)


def test_the_grid_runs_long_flows_then_each_fan_in_per_algorithm():
    assert [c.name for c in cells(QUICK)] == [
        "dctcp long", "dctcp incast 8", "dctcp incast 32",
        "cubic long", "cubic incast 8", "cubic incast 32"]


def test_only_dctcp_cells_mark_and_responses_split_the_query():
    config = replace(QUICK, queries=3)
    dctcp = cell_scenario(Cell(INCAST, "dctcp", 7, config))
    cubic = cell_scenario(Cell(INCAST, "cubic", 7, config))
    assert dctcp.switches["s1"].config.ecn_k_bytes == 97_500
    assert cubic.switches["s1"].config.ecn_k_bytes is None
    assert {f.profile for f in dctcp.tcp_flows} == {"dctcp"}
    assert {f.profile for f in cubic.tcp_flows} == {"linux-today"}
    assert {f.rto_min_ns for f in dctcp.tcp_flows} == {10 * MS}
    # 2 long flows, then 3 queries of 7 responses, each query's bytes split among them.
    assert len(dctcp.tcp_flows) == 2 + 3 * 7
    sizes = response_bytes(config, 7)
    assert sum(sizes) == 1_000_000 and max(sizes) - min(sizes) == 1
    starts = [f.start_ns for f in dctcp.tcp_flows[2:]]
    assert starts == [s for s in query_starts_ns(config) for _ in range(7)]
    assert hosts(Cell(INCAST, "dctcp", 7, config)) == {
        "r": 1, "l1": 2, "l2": 3, **{f"q{j}": 3 + j for j in range(1, 8)}}
    assert duration_ns(Cell(LONG, "dctcp", 0, config)) == 40 * MS
    assert dctcp.duration_ns == 10 * MS + 3 * 10 * MS + 40 * MS


#: A run small enough for the suite: a 1 MB buffer CUBIC fills in a few ms.
REDUCED = DctcpConfig(pool_bytes=1_000_000, warmup_ns=5 * MS, long_window_ns=10 * MS,
                      incast_senders=(16,), queries=2, query_interval_ns=5 * MS, tail_ns=30 * MS)


def test_a_reduced_run_shows_the_paper_s_headline_results(tmp_path):
    result = run(REDUCED, tmp_path, jobs=1, progress_out=open("/dev/null", "w"))  # noqa: SIM115
    assert not result.failures
    assert result.passed, [c.line() for c in result.checks if not c.passed]
    by = {(r["algorithm"], r["kind"]): r for r in result.rows}
    dctcp, cubic = by[("dctcp", LONG)], by[("cubic", LONG)]
    # DCTCP: the link full, the queue around K, nothing dropped, frames marked.
    assert dctcp["utilisation"] > 0.99 and dctcp["drops_frames"] == 0
    assert 0.5 * 97_500 < dctcp["queue_mean_bytes"] < 1.5 * 97_500
    assert dctcp["ecn_marked_frames"] > 100
    # CUBIC: the buffer full and dropping.
    assert cubic["max_queue_bytes"] > 0.9 * 1_000_000 and cubic["drops_frames"] > 0
    # Incast beside the long flows: DCTCP finishes both queries without a timeout.
    incast = by[("dctcp", INCAST)]
    assert (incast["queries"], incast["queries_unfinished"], incast["response_timeouts"]) == (
        2, 0, 0)
    report = result.outputs.report.read_text()
    assert "90 % less buffer occupied than with TCP" in report and "K = 97,500 bytes" in report
    assert {p.name for p in result.outputs.plots} == {"queue_long_flows.png",
                                                      "query_completion.png"}
    header = (tmp_path / "cells.csv").read_text().splitlines()[0]
    assert "queue_mean_bytes" in header and "qct_p99_us" in header


def _row(algorithm: str, kind: str, senders: int = 0, **figures) -> dict:
    row = {"algorithm": algorithm, "kind": kind, "senders": senders, "bottleneck_bps": 9.84e9,
           "utilisation": 1.0, "queue_mean_bytes": 93_000.0, "queue_p99_bytes": 103_000.0,
           "max_queue_bytes": 300_000, "buffer_bytes": 4_000_000, "drops_frames": 0,
           "queries": 10, "queries_unfinished": 0, "queries_with_timeouts": 0,
           "response_timeouts": 0, "qct_median_us": 1_600.0, "qct_p99_us": 1_700.0}
    row.update(figures)
    return row


def _good_rows() -> list[dict]:
    return [_row("dctcp", LONG), _row("dctcp", INCAST, 8),
            _row("cubic", LONG, queue_mean_bytes=3.7e6, max_queue_bytes=4_000_000,
                 drops_frames=2940),
            _row("cubic", INCAST, 8, qct_median_us=20_000.0, queries_with_timeouts=3)]


def _checks(rows: list[dict]) -> dict[str, bool]:
    config = replace(FULL, incast_senders=(8,))
    return {c.name: c.passed for c in evaluate(rows, config)}


def test_seed_shaped_rows_pass_every_check():
    assert all(_checks(_good_rows()).values())


SAVING = "DCTCP: 90 % less buffer, same throughput"
NO_TIMEOUTS = "incast 8 → 1 beside long flows: DCTCP no timeouts"
SHORT_FLOWS = "incast 8 → 1 beside long flows: short-flow completion"


@pytest.mark.parametrize("index, change, failing", [
    (0, {"utilisation": 0.8}, ["DCTCP full throughput", SAVING]),
    (0, {"queue_mean_bytes": 300_000.0}, ["DCTCP queue held near K"]),
    (0, {"queue_p99_bytes": 250_000.0}, ["DCTCP queue held near K"]),
    (2, {"max_queue_bytes": 1_000_000}, ["CUBIC fills the buffer"]),
    (2, {"drops_frames": 0}, ["CUBIC fills the buffer"]),
    (2, {"queue_mean_bytes": 500_000.0}, [SAVING]),
    (2, {"utilisation": 0.9}, []),
    (1, {"response_timeouts": 1}, [NO_TIMEOUTS]),
    (1, {"queries_unfinished": 1}, [NO_TIMEOUTS, SHORT_FLOWS]),
    (1, {"qct_p99_us": 25_000.0}, [SHORT_FLOWS]),
])
def test_each_check_fails_on_rows_that_break_it(index, change, failing):
    rows = _good_rows()
    rows[index].update(change)
    got = _checks(rows)
    assert [name for name, ok in got.items() if not ok] == failing


def test_a_cubic_query_that_never_finished_counts_as_slower():
    rows = _good_rows()
    rows[3].update(queries_unfinished=1, qct_median_us="")
    assert all(_checks(rows).values())


def test_cells_that_did_not_run_fail_their_checks():
    checks = evaluate([], replace(FULL, incast_senders=(8,)))
    assert not any(c.passed for c in checks)
    assert all(c.detail.endswith("did not run") for c in checks)


@pytest.mark.parametrize("argv, message", [
    (["--k-packets", "0"], "error: dctcp config: k_packets: 0 must be positive"),
    (["--jobs", "0"], "error: --jobs: 0 processes"),
    (["--senders", "500"], "error: dctcp config: incast_senders"),
])
def test_the_command_line_names_the_bad_option(argv, message, capsys):
    from bufferlab.experiments.dctcp.__main__ import main
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(message)
