"""The 2006 BCN reaction point's features in the simulator: each reaches the sources of a
scenario (seed 003, shortened), and a bad one is refused with the key that names it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from bufferlab.experiments.bcn import settings
from bufferlab.experiments.scenario import ScenarioError, parse_scenario, run_scenario
from bufferlab.sim.network import BcnReaction
from tests.sim.conftest import SEED003

START_NS = 5_000_000
SOURCES = ("EP0", "EP1", "EP2", "EP3")
#: The sources that run to the end (EP0 and EP1 stop early in the shortened scenario).
STAYING = ("EP2", "EP3")


def _with(scenario, qsc_bytes: int = 0, **features):
    """Every feature and bound off but ``features`` (and a severe threshold)."""
    reaction = settings.Choice("test", features, qsc_bytes)
    chosen = settings.Setting((*settings.setting().choices, ("test", reaction)))
    return settings.apply(scenario, chosen)


def _off(scenario):
    return settings.apply(scenario, settings.setting())


def _rates(results, source: str) -> np.ndarray:
    return results.series[f"source/{source}/rate_bps"]


def test_the_study_runs_its_documented_setting_and_the_setting_reproduces_it(seed003):
    scenario = seed003(8_000_000, stop_ns=7_000_000)
    shipped = run_scenario(scenario, 1).results
    chosen = settings.STUDY
    assert chosen.documented and not settings.BOUNDS_AT_QEQ.documented
    reaction = scenario.sources[0].reaction
    assert {**reaction.features(), "fb_max_pages": reaction.fb_max_pages} == chosen.reaction
    core = scenario.switches["s1"].config.ports[5].bcn
    assert {k: getattr(core, k) for k in settings.CP_OFF} == {**settings.CP_OFF, **chosen.cp}
    same = run_scenario(settings.apply(scenario, chosen), 1).results
    off = run_scenario(_off(scenario), 1).results
    names = ("source/EP2/rate_bps", "link/s1-p5>ep4/bytes", "switch/s1/port/5/queue_bytes")
    for name in names:
        assert np.array_equal(shipped.series[name], same.series[name]), name
    assert not np.array_equal(shipped.series[names[0]], off.series[names[0]])


def test_drift_raises_every_limited_source_between_bcns(seed003):
    # 200 Mbit/s every 100 µs: 2 Gbit/s per ms on top of what the BCNs do.
    scenario = seed003(8_000_000, stop_ns=7_000_000)
    plain = run_scenario(_off(scenario), 1).results
    drifting = run_scenario(_with(scenario, drift_interval_ns=100_000, drift_step_bps=200e6),
                            1).results
    # Over 6–7 ms the sources' regulated rates are higher on average by far more than the
    # loop's noise (by about the 2 Gbit/s a millisecond of drift adds).
    window = (plain.times_ns >= 6_000_000) & (plain.times_ns < 7_000_000)
    mean = {run: np.mean([_rates(r, s)[window] for s in SOURCES])
            for run, r in (("plain", plain), ("drifting", drifting))}
    assert mean["drifting"] > mean["plain"] + 0.5e9, mean
    # Rates only change at BCNs without drift; with it, also in 100-µs steps of 200 Mbit/s.
    steps = np.diff(_rates(drifting, "EP2"))
    assert np.any(np.isclose(steps, 200e6, rtol=1e-6))


def test_bcn_0_0_stops_the_sources_and_restarts_them_at_rmin(seed003):
    # Qsc 100 KB: the queue passes it within the first 0.1 ms after the 5-ms start.
    scenario = seed003(8_000_000, stop_ns=7_000_000)
    stopped = run_scenario(_with(scenario, qsc_bytes=100_000, severe="stop",
                                 backoff_max_ns=1_000_000, restart_rate_bps=100e6), 1)
    results = stopped.results
    # Every source that got a BCN got BCN(0,0) (the queue passes Qsc at once) and its
    # regulator sits at exactly the restart rate: too slow for the sampling at the CP
    # (every 150 KB of arrivals) to bring it much positive feedback in 3 ms.
    hit = [s for s in SOURCES if results.sources[s]["feedback_applied"] > 0]
    assert len(hit) >= 3, hit
    for source in hit:
        assert np.any(_rates(results, source) == 100e6), source
        assert results.sources[source]["rate_bps"] < 1e9, source
    # While stopped a source sends nothing: some 100-µs sample interval after the start
    # sees no byte leave a source whose queue holds frames.
    sent = np.diff(results.series["source/EP2/sent_bytes"])
    queued = results.series["source/EP2/rlq_bytes"][1:]
    after = results.times_ns[1:] > START_NS + 100_000
    assert np.any((sent == 0) & (queued > 0) & after)
    plain = run_scenario(_off(scenario), 1).results
    assert results.sources["EP2"]["sent_frames"] < plain.sources["EP2"]["sent_frames"]


def test_a_limiter_from_the_current_rate_cuts_from_what_was_sent(seed003):
    # Sources send 5 Gbit/s at 50 % load; the first cut from 10 Gbit/s leaves ≥ 5 Gbit/s,
    # from the current rate it leaves about half of 5.
    scenario = seed003(7_000_000, stop_ns=6_500_000)
    line = run_scenario(_off(scenario), 1).results
    current = run_scenario(_with(scenario, initial_rate="current"), 1).results
    for source in STAYING:
        first_line = _rates(line, source)[_rates(line, source) < 10e9][0]
        first_current = _rates(current, source)[_rates(current, source) < 10e9][0]
        assert first_line >= 10e9 * (1 - 2.6e-4 * 1875) - 1
        assert first_current < 0.6 * first_line, source


def test_quantisation_and_caps_reach_the_reaction_point(seed003):
    scenario = seed003(7_000_000, stop_ns=6_500_000)
    plain = run_scenario(_off(scenario), 1).results
    capped = run_scenario(_with(scenario, fb_bits=8, fb_range_pages=255), 1).results
    # A saturated cut is at most 2.6e-4 × 255 = 6.6 %: the first cut leaves ≥ 9.33 Gbit/s.
    first = _rates(capped, "EP2")[_rates(capped, "EP2") < 10e9][0]
    assert first >= 10e9 * (1 - 2.6e-4 * 255) - 1
    assert _rates(plain, "EP2")[_rates(plain, "EP2") < 10e9][0] < 5.2e9


def _gains_only() -> dict:
    """Seed 003's scenario with its reaction points' features taken out."""
    data = json.loads(SEED003.read_text())
    gains = {"model", "gi", "gd_per_page", "ru_bps", "fb_max_pages", "min_rate_bps"}
    for source in data["sources"]:
        source["reaction"] = {k: v for k, v in source["reaction"].items() if k in gains}
    return data


@pytest.mark.parametrize(("reaction", "says"), [
    ({"drift_interval_ns": 100_000}, "drift_interval_ns and drift_step_bps go together"),
    ({"severe": "stop"}, "needs backoff_max_ns"),
    ({"severe": "halt"}, "severe \"halt\""),
    ({"max_decrease": 1.5}, "max_decrease must be in (0, 1)"),
    ({"fb_bits": 0}, "fb_bits: must be an integer >= 1"),
    ({"fb_bits": 17}, "quantisation needs 1 <= bits <= 16"),
    ({"positive_from": 3}, "need a string"),
    ({"initial_rate": "now"}, "initial_rate \"now\""),
])
def test_a_bad_feature_in_a_scenario_names_its_key(reaction, says):
    data = _gains_only()
    data["sources"][0]["reaction"].update(reaction)
    with pytest.raises(ScenarioError) as error:
        parse_scenario(data, SEED003.parent)
    assert "sources[0].reaction" in str(error.value) and says in str(error.value)


def test_features_read_back_from_the_scenario():
    data = _gains_only()
    data["sources"][0]["reaction"].update({"max_increase": 0.1, "fb_bits": 6,
                                           "initial_rate": "current"})
    reaction = parse_scenario(data, SEED003.parent).sources[0].reaction
    assert isinstance(reaction, BcnReaction)
    assert reaction.features() == {"max_increase": 0.1, "fb_bits": 6, "initial_rate": "current"}
    assert dataclasses.replace(reaction, fb_bits=None).features() == {
        "max_increase": 0.1, "initial_rate": "current"}
