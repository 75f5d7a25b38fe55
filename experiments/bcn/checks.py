"""The expected outcome of the BCN study (issue 10), as PASS/FAIL lines.

Seed 003, per load: transmitted, received and dropped frames in 5–95 ms within 2 % of the
seed's; no drop at the congestion point; the egress link at 10 Gbit/s (every 1-ms bin from
6 ms to 95 ms at ≥ 99 %). Seed 001 over its seeds: mean Jain's index ≥ 0.95 and mean
normalised maximum deviation ≤ 0.30 (baseline); switch drops > 0 without PAUSE and exactly
0 with 802.3x (and none at the hosts, whose sources wait); with 802.3x, an edge switch's
uplink queue reaches XOFF and it pauses its hosts (PAUSE spreads, to B1 or B2: the core
pauses the uplink whose frame crossed XOFF) while the congested link stays ≥ 95 % utilised.
"""

from __future__ import annotations

import numpy as np

from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.bcn.evaluation import EDGES, Run001, Run003
from bufferlab.experiments.common.checks import Check

COUNT_TOLERANCE = 0.02
EGRESS_FLOOR = 0.99
MEAN_FI_FLOOR = 0.95
MEAN_MAX_DEVIATION_CEILING = 0.30
CONGESTED_FLOOR = 0.95


def checks_003(key: str, run: Run003) -> list[Check]:
    """Seed 003's checks for one load."""
    expected = st.SEED_003[key]
    got = (run.transmitted, run.received, run.dropped_at_rlq)
    errors = [abs(g / e - 1) for g, e in zip(got, expected, strict=True)]
    label = key.replace("003_", "")
    return [
        Check(f"003 {label} % counts", max(errors) <= COUNT_TOLERANCE,
              "transmitted/received/dropped " + "/".join(f"{g:,}" for g in got)
              + " vs the seed's " + "/".join(f"{e:,}" for e in expected)
              + f" (worst {100 * max(errors):.2f} %, limit {100 * COUNT_TOLERANCE:g} %)"),
        Check(f"003 {label} % no drop at the congestion point", run.switch_drops == 0,
              f"{run.switch_drops} frames dropped in the switch (seed: \"0 drop at CP\")"),
        Check(f"003 {label} % egress at 10 Gbit/s", run.egress_min_bps >= EGRESS_FLOOR * st.LINK_BPS,
              f"lowest 1-ms throughput 6–95 ms {run.egress_min_bps / 1e9:.3f} Gbit/s "
              f"(mean {run.egress_mean_bps / 1e9:.4f}; floor {EGRESS_FLOOR * st.LINK_BPS / 1e9:g}; "
              "seed: \"Throughput 10 Gbps, except when 2 flows end\")"),
    ]


def checks_001(baseline: list[Run001], pause: list[Run001]) -> list[Check]:
    """Seed 001's checks over all seeds of both variants."""
    out = []
    if baseline:
        fi = float(np.mean([r.fairness_index for r in baseline]))
        dev = float(np.mean([r.deviation_max for r in baseline]))
        drops = [r.switch_drops for r in baseline]
        out += [
            Check("001 mean fairness index", fi >= MEAN_FI_FLOOR,
                  f"{fi:.3f} over {len(baseline)} seeds (seed: {st.SEED_001_MEAN_FI}; "
                  f"floor {MEAN_FI_FLOOR})"),
            Check("001 mean normalised max deviation", dev <= MEAN_MAX_DEVIATION_CEILING,
                  f"{dev:.3f} (seed: {st.SEED_001_MEAN_MAX_DEVIATION}; ceiling "
                  f"{MEAN_MAX_DEVIATION_CEILING})"),
            Check("001 baseline drops in the switch", all(d > 0 for d in drops),
                  f"per seed {drops} (seed: {st.SEED_001_DROPS['001_baseline'][0]:,} and "
                  f"{st.SEED_001_DROPS['001_baseline'][1]:,})"),
        ]
    if pause:
        drops = [r.switch_drops + r.host_drops for r in pause]
        link = min(r.congested_link_bps for r in pause)
        spread = [[e for e in EDGES if r.edge_pause_frames[e] > 0
                   and r.edge_max_queue_bytes[e] >= st.XOFF_BYTES] for r in pause]
        b1 = sum("s2" in edges for edges in spread)
        out += [
            Check("001 + 802.3x no drops", all(d == 0 for d in drops),
                  f"switch + host drops per seed {drops} (seed: 0)"),
            Check("001 + 802.3x PAUSE spreads to an edge switch", all(spread),
                  f"edge switches whose uplink queue reached XOFF ({st.XOFF_BYTES:,} B) and "
                  f"that paused their hosts, per seed: {[','.join(e) or '-' for e in spread]} "
                  f"(s2 = B1: {b1} of {len(pause)} seeds; the core pauses only the uplink whose "
                  "frame crossed XOFF; seed: the uncongested switch B1's buffer fills)"),
            Check("001 + 802.3x congested link utilised", link >= CONGESTED_FLOOR * st.LINK_BPS,
                  f"lowest 5–85 ms throughput to S5 {link / 1e9:.3f} Gbit/s "
                  f"(floor {CONGESTED_FLOOR * st.LINK_BPS / 1e9:g}; seed: the link stays busy)"),
        ]
    return out
