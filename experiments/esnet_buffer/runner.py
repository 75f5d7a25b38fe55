"""The procedure: the trials of every table at the live scale, one after another.

Tables (each row one trial):

* `buffer_<bg>`: per background, the seed's buffers (P4 cap, bytes × k), sender at the
  link rate (its NIC); `buffer_2g_<cc>` the same with each further congestion control;
* `paced_<bg>`: per background, the seed's paced rates × k at the 12 MB × k buffer, plus
  one rate above the share the background leaves, which the seed did not run;
* `hold`: the hold queue (traffic-manager depth, packets × k), 2 Gbit/s × k background;
* `hold_paced`: the seed's paced rates × k with the 4096 × k packet hold queue.

Virtual time runs the same tables at k = 1, once per TCP profile (`virtual_trials`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from bufferlab.experiments.esnet_buffer.backend import Lab, Trial, TrialSpec
from bufferlab.experiments.esnet_buffer.config import SEED_BACKGROUNDS, EsnetConfig
from bufferlab.experiments.esnet_buffer.virtual_time import VirtualTrial

#: A rate above the share either background leaves (seed scale, bit/s): the check that
#: pacing above the share does not help needs one, and the seed's rates are all below it.
ABOVE_SHARE_BPS = 9_000_000_000
#: Background of the hold-queue tables (the seed's experiment 2), seed scale.
HOLD_BACKGROUND_BPS = SEED_BACKGROUNDS[0]


def table_name(kind: str, background_bps: int) -> str:
    """`buffer_2g`, `paced_3g`: a table's name with its seed-scale background."""
    return f"{kind}_{background_bps / 1e9:g}g"


def trial_specs(c: EsnetConfig) -> list[TrialSpec]:
    """Every trial of the study, in run order."""
    specs = []

    def spec(table: str, seed_setting: int, buffer_bytes: int | None, hold: int | None,
             send_bps: int, background_bps: int, congestion: str = c.congestion) -> TrialSpec:
        live_bg = c.live(background_bps)
        return TrialSpec(table, seed_setting, c.link_bps, buffer_bytes, hold, send_bps,
                         live_bg, c.trial_s, c.omit_s, congestion,
                         background_burst_frames=c.background_burst_frames(live_bg))

    for bg in c.backgrounds_bps:
        specs += [spec(table_name("buffer", bg), b, c.live(b), None, c.link_bps, bg)
                  for b in c.buffers_bytes]
    for cc in c.extra_congestion:
        bg = SEED_BACKGROUNDS[0]
        specs += [spec(f"{table_name('buffer', bg)}_{cc}", b, c.live(b), None, c.link_bps, bg,
                       cc) for b in c.buffers_bytes]
    for bg in c.backgrounds_bps:
        rates = sorted({*c.paced_bps, ABOVE_SHARE_BPS})
        specs += [spec(table_name("paced", bg), p, c.live(c.paced_buffer_bytes), None,
                       c.live(p), bg) for p in rates]
    specs += [spec("hold", h, None, c.live(h), c.link_bps, HOLD_BACKGROUND_BPS)
              for h in c.hold_packets]
    specs += [spec("hold_paced", p, None, c.live(c.hold_paced_packets), c.live(p),
                   HOLD_BACKGROUND_BPS) for p in c.hold_paced_bps]
    return specs


def virtual_trials(c: EsnetConfig) -> list[VirtualTrial]:
    """Every trial of a virtual run: the whole grid once per TCP profile, in run order."""
    return [VirtualTrial(spec, profile, c.receive_window_bytes)
            for profile in c.profiles
            for spec in trial_specs(replace(c, congestion=profile))]


def run_trials(specs: list[TrialSpec], lab: Lab,
               progress: Callable[[str], None] = print) -> list[Trial]:
    """Run ``specs`` one by one, printing a line per trial with the ETA."""
    trials: list[Trial] = []
    start = time.monotonic()
    for i, spec in enumerate(specs):
        trial = lab.trial(spec)
        trials.append(trial)
        elapsed = time.monotonic() - start
        eta = elapsed / (i + 1) * (len(specs) - i - 1)
        thr = trial.iperf.received_bps / 1e6 if trial.iperf else 0.0
        progress(f"[{i + 1}/{len(specs)}] {spec.table} {spec.seed_setting:,}: "
                 f"TCP {thr:.1f} Mbit/s, {trial.accounting.describe()}"
                 f"{f' (after {len(trial.reruns)} rerun)' if trial.reruns else ''}; "
                 f"ETA {eta / 60:.1f} min")
    return trials
