"""How the BCN study's figures depend on the reaction point's largest cut (Gd·Fbmax).

    python -m bufferlab.experiments.bcn.sensitivity --gd 2.6e-4 6.4e-5 3.2e-5 --seeds 5

For each decrease gain Gd (per 64-byte page) every source of every scenario uses it; the
table shows seed 003's counts at both loads and seed 001's baseline fairness and drops,
beside the seeds' figures. It is the evidence for the report's explanation of where the
study differs from the seeds: their start-up transient implies a smaller cut per BCN.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence

import numpy as np

from bufferlab.analysis.report import Report
from bufferlab.experiments.bcn import studies as st
from bufferlab.experiments.bcn.evaluation import evaluate_001, evaluate_003
from bufferlab.experiments.bcn.settings import apply, setting
from bufferlab.experiments.scenario import Scenario, load_scenario, run_scenario


def with_gd(scenario: Scenario, gd_per_page: float) -> Scenario:
    """The scenario with every BCN reaction point's decrease gain set to ``gd_per_page`` and
    every 2006 feature and feedback bound off (congestion.md §1.4's reaction point, Fbmax =
    Qeq·(1 + 2W), the loop this table measures)."""
    scenario = apply(scenario, setting())
    sources = [dataclasses.replace(s, reaction=dataclasses.replace(
                   s.reaction, gd_per_page=gd_per_page))
               for s in scenario.sources]
    return dataclasses.replace(scenario, sources=sources)


def sweep(gains: Sequence[float], seeds: int) -> list[list[object]]:
    """One row per gain: the largest cut, 003's counts, 001's mean FI, max deviation, drops."""
    rows = []
    by_key = {s.key: s for s in st.studies()}
    for gd in gains:
        row: list[object] = [gd, 1 - gd * 1875]
        for key in ("003_50", "003_49"):
            f = evaluate_003(run_scenario(with_gd(load_scenario(by_key[key].scenario), gd), 1))
            row += [f"{f.transmitted:,} / {f.received:,} / {f.dropped_at_rlq:,}"]
        scenario = with_gd(load_scenario(by_key["001_baseline"].scenario), gd)
        runs = [evaluate_001(run_scenario(scenario, seed)) for seed in range(1, seeds + 1)]
        row += [float(np.mean([r.fairness_index for r in runs])),
                float(np.mean([r.deviation_max for r in runs])),
                float(np.mean([r.switch_drops for r in runs]))]
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the sweep and prints the table (Markdown)."""
    parser = argparse.ArgumentParser(prog="python -m bufferlab.experiments.bcn.sensitivity",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--gd", type=float, nargs="+", default=[2.6e-4, 6.4e-5, 3.2e-5],
                        help="decrease gains per 64-byte page (default: %(default)s)")
    parser.add_argument("--seeds", type=int, default=5, help="seed-001 runs per gain")
    args = parser.parse_args(argv)
    if args.seeds < 1 or any(not 0 < g * 1875 < 1 for g in args.gd):
        print("error: need --seeds >= 1 and 0 < gd·1875 < 1", file=sys.stderr)
        return 2
    report = Report("BCN: sensitivity to the largest cut per BCN")
    report.table(["Gd (per page)", "rate after a saturated BCN (× R)",
                  "003 50 %: tx / rx / dropped", "003 49 %: tx / rx / dropped",
                  f"001 mean FI ({args.seeds} seeds)", "001 mean max |δ|",
                  "001 switch drops (frames, mean)"],
                 [*sweep(args.gd, args.seeds),
                  ["seeds' figures", "–", "149,978 / 74,945 / 74,611",
                   "146,966 / 74,945 / 71,598", st.SEED_001_MEAN_FI,
                   st.SEED_001_MEAN_MAX_DEVIATION, "1,406 and 1,380"]], digits=3)
    print(report.render("."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
