"""The expected outcome as PASS/FAIL lines, each with the seed's figure beside ours.

Thresholds, and why:

* **good / cliff**: a buffer is good when TCP gets at least `GOOD_SHARE` of what the
  background leaves it. The cliff is the largest fall in throughput between two adjacent
  buffer sizes; it must be at least `CLIFF_FALL` of the throughput above it, and the
  smallest buffer above it must lie between 0.3 and 1 × BDP (the seed: 60 MB = 0.96 BDP
  good, 36 MB bad).
* **pacing at or below the limit** (the link counts 24 bytes more per frame than HTB): no
  frame dropped and at least `GOOD_SHARE` of the paced rate in TCP throughput (TCP cannot
  get more than its paced rate). The limit is the share the background leaves or, when the
  background comes in bursts, the rate the buffer absorbs while a burst holds the link
  (`evaluation.pacing_limit_bps`): the seed's 6 Gbit/s lost frames beside an 8 Gbit/s share.
* **pacing above the limit**: drops, and no more throughput than the best pacing at or
  below it gave, within noise (pacing faster buys nothing but loss).
* **more buffer never hurts**: throughput never falls by more than `NOISE_SHARE` of the
  share when the buffer grows.
"""

from __future__ import annotations

from bufferlab.experiments.common.checks import Check
from bufferlab.experiments.esnet_buffer.evaluation import Row, tables

GOOD_SHARE = 0.8
CLIFF_FALL = 0.25
#: Trial-to-trial spread of one TCP trial's throughput, as a share of the link's share.
NOISE_SHARE = 0.10
CLIFF_RANGE_BDP = (0.3, 1.0)
#: buffer/BDP is computed from rounded bytes: the seed's 60 MB is 0.96 BDP.
BDP_SLACK = 0.01


def _mbit(bps: float) -> str:
    return f"{bps / 1e6:.0f} Mbit/s"


def _valid(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r["valid"]]


def cliff_check(name: str, rows: list[Row]) -> Check:
    """The cliff in one buffer table lies between 0.3 and 1 × BDP."""
    rows = sorted(_valid(rows), key=lambda r: -r["buffer_over_bdp"])
    if len(rows) < 2:
        return Check(f"cliff {name}", False, "fewer than two valid buffer sizes")
    falls = [(a["tcp_throughput_bps"] - b["tcp_throughput_bps"], a, b)
             for a, b in zip(rows, rows[1:], strict=False)]
    fall, above, below = max(falls, key=lambda f: f[0])
    low, high = CLIFF_RANGE_BDP
    placed = (above["buffer_over_bdp"] <= high + BDP_SLACK
              and below["buffer_over_bdp"] >= low - BDP_SLACK)
    steep = fall >= CLIFF_FALL * above["tcp_throughput_bps"]
    return Check(f"cliff {name}", placed and steep,
                 f"largest fall {_mbit(above['tcp_throughput_bps'])} → "
                 f"{_mbit(below['tcp_throughput_bps'])} between {above['buffer_over_bdp']:.2f} "
                 f"and {below['buffer_over_bdp']:.2f} × BDP (needs ≥ {CLIFF_FALL:.0%} fall, "
                 f"both buffers in {low}-{high} × BDP; seed: 8 → 2 Gbit/s between 0.96 and "
                 "0.58 × BDP)")


def monotone_check(name: str, rows: list[Row]) -> Check:
    """More buffer never lowers throughput by more than noise."""
    rows = sorted(_valid(rows), key=lambda r: r["buffer_over_bdp"])
    if len(rows) < 2:
        return Check(f"more buffer never hurts {name}", False, "fewer than two valid sizes")
    pairs = [((a["tcp_throughput_bps"] - b["tcp_throughput_bps"]) / a["live_share_bps"], a, b)
             for i, a in enumerate(rows) for b in rows[i + 1:]]
    fall, small, big = max(pairs, key=lambda p: p[0])
    return Check(f"more buffer never hurts {name}", fall <= NOISE_SHARE,
                 f"largest fall with more buffer {max(fall, 0):.1%} of the share "
                 f"({small['buffer_over_bdp']:.2f} → {big['buffer_over_bdp']:.2f} × BDP); "
                 f"noise allowed {NOISE_SHARE:.0%} (seed: flat 2 Gbit/s below 60 MB, 8 above)")


def pacing_checks(name: str, rows: list[Row]) -> list[Check]:
    """Pacing at or below the limit: lossless, ≥ 80 % of the paced rate; above: drops and
    no more than the best pacing below the limit (plus noise)."""
    rows = _valid(rows)
    below = [r for r in rows if r["paced_wire_over_limit"] <= 1]
    above = [r for r in rows if r["paced_wire_over_limit"] > 1]
    limits = sorted({round(r["pacing_limit_bps"]) for r in rows})
    limit = " / ".join(_mbit(v) for v in limits) or "none"
    out = []
    if below:
        bad = [r for r in below if r["admission_drops_frames"]
               or r["tcp_throughput_bps"] < GOOD_SHARE * r["live_send_bps"]]
        got = ", ".join(f"{_mbit(r['live_send_bps'])}: {r['admission_drops_frames']} drops, "
                        f"{r['tcp_throughput_bps'] / r['live_send_bps']:.0%}" for r in below)
        out.append(Check(f"paced at or below the limit {name}", not bad,
                         f"limit {limit}; {got} of the paced rate (needs 0 drops, "
                         f"≥ {GOOD_SHARE:.0%}; seed 2 Gbit/s background: 3-5 Gbit/s "
                         "lossless)"))
    else:
        out.append(Check(f"paced at or below the limit {name}", False,
                         f"limit {limit}: no valid trial paced at or below it"))
    if above and below:
        best = max(r["tcp_throughput_bps"] for r in below)
        bad = [r for r in above if not r["admission_drops_frames"]
               or r["tcp_throughput_bps"] > best + NOISE_SHARE * r["live_share_bps"]]
        got = ", ".join(f"{_mbit(r['live_send_bps'])}: {r['admission_drops_frames']} drops, "
                        f"{_mbit(r['tcp_throughput_bps'])}" for r in above)
        out.append(Check(f"paced above the limit {name}", not bad,
                         f"limit {limit}; {got}; best at or below it {_mbit(best)} (needs "
                         f"drops and at most that + {NOISE_SHARE:.0%} of the share; seed: "
                         "6 Gbit/s → 212 drops, 1.5 Gbit/s)"))
    else:
        out.append(Check(f"paced above the limit {name}", False,
                         "needs valid trials paced both above and at or below the limit"))
    return out


def hold_check(rows: list[Row]) -> Check:
    """The larger hold queue gives more throughput (seed: 2000 → 5, 4096 → 8.5 Gbit/s)."""
    rows = sorted(_valid(rows), key=lambda r: r["buffer_over_bdp"])
    if len(rows) < 2:
        return Check("hold queue", False, "fewer than two valid hold-queue sizes")
    small, large = rows[0], rows[-1]
    return Check("hold queue", large["tcp_throughput_bps"] > small["tcp_throughput_bps"],
                 f"{small['live_hold_packets']} packets {_mbit(small['tcp_throughput_bps'])}, "
                 f"{large['live_hold_packets']} packets {_mbit(large['tcp_throughput_bps'])} "
                 "(seed: 2000 → 5 Gbit/s, 4096 → 8.5 Gbit/s)")


def validity_check(rows: list[Row]) -> Check:
    """Every trial lost frames only at the bottleneck's admission."""
    bad = [r for r in rows if not r["valid"]]
    return Check("emulator not the bottleneck", not bad,
                 f"{len(rows) - len(bad)} of {len(rows)} trials lost frames only at admission"
                 + "".join(f"; {r['table']} {r['seed_setting']:,}: {r['accounting']}"
                           for r in bad))


def evaluate(rows: list[Row]) -> list[Check]:
    """Every check the rows allow; a table missing from the rows is a failing check.

    The buffer tables of further congestion controls (`buffer_2g_bbr`) go beyond the seed,
    whose hosts ran loss-based TCP: they are reported, not checked against its figures."""
    by_table = tables(rows)
    checks = []
    buffer_tables = [t for t in by_table if t.startswith("buffer_") and t.count("_") == 1]
    paced_tables = [t for t in by_table if t.startswith("paced_")]
    if not buffer_tables:
        checks.append(Check("cliff", False, "no buffer table was run"))
    for t in buffer_tables:
        checks += [cliff_check(t, by_table[t]), monotone_check(t, by_table[t])]
    if not paced_tables:
        checks.append(Check("pacing", False, "no pacing table was run"))
    for t in paced_tables:
        checks += pacing_checks(t, by_table[t])
    if "hold" in by_table:
        checks.append(hold_check(by_table["hold"]))
    checks.append(validity_check(rows))
    return checks


#: Virtual time has no emulator that could fall behind: its validity check says what it
#: checks.
VIRTUAL_NAMES = {"emulator not the bottleneck": "every loss at the bottleneck's admission"}


def evaluate_by_profile(rows: list[Row]) -> dict[str, list[Check]]:
    """Virtual time: every check per TCP profile (the rows' `congestion`), in the rows'
    order, each name prefixed with its profile."""
    profiles: dict[str, list[Row]] = {}
    for r in rows:
        profiles.setdefault(r["congestion"], []).append(r)
    return {profile: [Check(f"{profile}: {VIRTUAL_NAMES.get(c.name, c.name)}", c.passed,
                            c.detail)
                      for c in evaluate(prows)]
            for profile, prows in profiles.items()}
