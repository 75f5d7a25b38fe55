"""The paper's headline results as PASS/FAIL lines, each with the paper's claim beside our
figures. A check whose cells did not run fails and says so.

Thresholds, and why:

* **full throughput**: the bottleneck carries at least `FULL_UTILISATION` of what full-size
  frames can carry (a saturated link less nothing but framing).
* **queue near K**: DCTCP's mean queue within `K_BAND` × K and its 99th percentile at most
  `K_P99` × K: the queue oscillates around K by a few packets of each flow.
* **CUBIC fills the buffer**: its largest queue is at least `FILLED` of the buffer and the
  buffer dropped frames (loss is its only signal).
* **90 % less buffer**: DCTCP's mean queue is at most `BUFFER_SHARE` of CUBIC's, with no
  less throughput (within `SAME_THROUGHPUT`).
* **incast beside long flows**: DCTCP loses no response to a timeout and finishes every
  query at every fan-in, and its 99th-percentile query completion time is below CUBIC's
  median (low latency for short flows).
"""

from __future__ import annotations

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.dctcp.backend import INCAST, LONG
from bufferlab.experiments.dctcp.config import PAPER, DctcpConfig
from bufferlab.experiments.dctcp.evaluation import Row, find

FULL_UTILISATION = 0.95
K_BAND = (0.5, 1.5)
K_P99 = 2.0
FILLED = 0.9
BUFFER_SHARE = 0.1
SAME_THROUGHPUT = 0.01


def _kb(value: float) -> str:
    return f"{value / 1e3:,.1f} kB"


def _missing(name: str, what: str) -> Check:
    return Check(name, False, f"{what} did not run")


def throughput_check(rows: list[Row]) -> Check:
    """DCTCP's long flows fill the link."""
    name = "DCTCP full throughput"
    d = find(rows, "dctcp", LONG)
    if d is None:
        return _missing(name, "the DCTCP long-flow cell")
    return Check(name, d["utilisation"] >= FULL_UTILISATION,
                 f"bottleneck {d['bottleneck_bps'] / 1e9:.3f} Gbit/s, {d['utilisation']:.1%} "
                 f"of what full frames carry (needs ≥ {FULL_UTILISATION:.0%}; paper: "
                 f"{PAPER['throughput'].what})")


def queue_near_k_check(rows: list[Row], config: DctcpConfig) -> Check:
    """DCTCP's queue stays near K."""
    name = "DCTCP queue held near K"
    d = find(rows, "dctcp", LONG)
    if d is None:
        return _missing(name, "the DCTCP long-flow cell")
    k = config.k_bytes
    low, high = K_BAND
    ok = low * k <= d["queue_mean_bytes"] <= high * k and d["queue_p99_bytes"] <= K_P99 * k
    return Check(name, ok,
                 f"mean {_kb(d['queue_mean_bytes'])}, p99 {_kb(d['queue_p99_bytes'])} against "
                 f"K = {_kb(k)} ({config.k_packets} packets; needs mean in {low}-{high} × K, "
                 f"p99 ≤ {K_P99:g} × K; paper: {PAPER['k'].what})")


def cubic_fills_check(rows: list[Row]) -> Check:
    """CUBIC's queue reaches the buffer's size, and the buffer drops."""
    name = "CUBIC fills the buffer"
    c = find(rows, "cubic", LONG)
    if c is None:
        return _missing(name, "the CUBIC long-flow cell")
    ok = c["max_queue_bytes"] >= FILLED * c["buffer_bytes"] and c["drops_frames"] > 0
    return Check(name, ok,
                 f"largest queue {_kb(c['max_queue_bytes'])} of {_kb(c['buffer_bytes'])}, mean "
                 f"{_kb(c['queue_mean_bytes'])}, {c['drops_frames']} frames dropped (needs ≥ "
                 f"{FILLED:.0%} of the buffer and drops)")


def buffer_saving_check(rows: list[Row]) -> Check:
    """DCTCP needs a tenth of CUBIC's buffer, for no less throughput."""
    name = "DCTCP: 90 % less buffer, same throughput"
    d, c = find(rows, "dctcp", LONG), find(rows, "cubic", LONG)
    if d is None or c is None:
        return _missing(name, "a long-flow cell of each algorithm")
    share = d["queue_mean_bytes"] / c["queue_mean_bytes"] if c["queue_mean_bytes"] else 1.0
    ok = share <= BUFFER_SHARE and d["utilisation"] >= c["utilisation"] - SAME_THROUGHPUT
    return Check(name, ok,
                 f"mean queue {_kb(d['queue_mean_bytes'])} against CUBIC's "
                 f"{_kb(c['queue_mean_bytes'])} ({share:.1%}); utilisation {d['utilisation']:.1%}"
                 f" against {c['utilisation']:.1%} (needs ≤ {BUFFER_SHARE:.0%} and within "
                 f"{SAME_THROUGHPUT:.0%}; paper: {PAPER['buffer'].what}, "
                 f"{PAPER['throughput'].what})")


def incast_checks(rows: list[Row], config: DctcpConfig) -> list[Check]:
    """Per fan-in: DCTCP without timeouts, and its short flows faster than CUBIC's."""
    out = []
    for n in config.incast_senders:
        d, c = find(rows, "dctcp", INCAST, n), find(rows, "cubic", INCAST, n)
        name = f"incast {n} → 1 beside long flows"
        if d is None:
            out.append(_missing(f"{name}: DCTCP no timeouts", "the DCTCP incast cell"))
        else:
            ok = not d["response_timeouts"] and not d["queries_unfinished"]
            out.append(Check(f"{name}: DCTCP no timeouts", ok,
                             f"{d['queries']} queries of {config.query_bytes:,} bytes, "
                             f"{d['response_timeouts']} response timeouts, "
                             f"{d['queries_unfinished']} unfinished, {d['drops_frames']} "
                             f"frames dropped (needs no timeout; paper: "
                             f"{PAPER['incast'].what})"))
        if d is None or c is None:
            out.append(_missing(f"{name}: short-flow completion", "a cell of each algorithm"))
            continue
        cubic_median = (float("inf") if c["queries_unfinished"] or c["qct_median_us"] == ""
                        else c["qct_median_us"])
        ok = d["qct_p99_us"] != "" and not d["queries_unfinished"] \
            and d["qct_p99_us"] < cubic_median
        cubic = ("unfinished" if cubic_median == float("inf")
                 else f"median {c['qct_median_us']:,.0f} µs")
        dctcp = ("unfinished" if d["qct_p99_us"] == "" or d["queries_unfinished"]
                 else f"p99 {d['qct_p99_us']:,.0f} µs, median {d['qct_median_us']:,.0f} µs")
        out.append(Check(f"{name}: short-flow completion", ok,
                         f"DCTCP {dctcp}; CUBIC {cubic}, {c['queries_with_timeouts']} of "
                         f"{c['queries']} queries with timeouts (needs DCTCP's p99 below "
                         f"CUBIC's median; paper: {PAPER['latency'].what})"))
    return out


def evaluate(rows: list[Row], config: DctcpConfig) -> list[Check]:
    """Every check, in the README's order."""
    return [throughput_check(rows), queue_near_k_check(rows, config), cubic_fills_check(rows),
            buffer_saving_check(rows), *incast_checks(rows, config)]
