"""The TCP validation live (root): one small cell's scenario file run in Mininet (Linux's
CUBIC through bufferlab-switch) and in virtual time (the linux-today model), compared as
the study compares them: goodput within 10 % and admission drops within the band. The
network is gone afterwards, also after a failure."""

import os
import subprocess

import pytest

from bufferlab.experiments.scenario import load_scenario
from bufferlab.experiments.tcp_validation.cells import PORTS, write_cell
from bufferlab.experiments.tcp_validation.compare import PASS, CellRuns, compare, drop_band
from bufferlab.experiments.tcp_validation.config import MBIT, MS, Cell, ValidationConfig
from bufferlab.experiments.tcp_validation.live import LiveRunner
from bufferlab.experiments.tcp_validation.virtual_time import run_virtual

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

PREFIX = "bl-tcpv-test-"
#: Not the study's s61: the test may run beside a run of the study.
INDEX = 62
CONFIG = ValidationConfig(trial_s=6, omit_s=2, lead_s=1)
#: A cell the model matches within both bands in the full run (README "Measured here") and
#: whose live drops repeat in a 6-s trial: 44-45 in 9 trials here, 4 of them at load 2.4
#: (virtual 44). Not 10 ms / 1 BDP: there one live trial drops 12-14 or 22-60 (CI saw 60
#: and 37) as Linux's slow start ends early or late, so one trial cannot judge the model;
#: the quarter-BDP cells are where the worlds' live trials vary most (bimodal at 200 Mbit/s).
CELL = Cell(100 * MBIT, 50 * MS, 1.0, False)


def leftovers():
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return ([n for n in netns.split() if n.startswith(PREFIX)]
            + [w for w in links.split() if w.startswith(f"s{INDEX}-eth")])


@pytest.mark.timeout(240)
def test_one_cell_live_matches_its_virtual_twin_within_the_bands(tmp_path):
    scenario = load_scenario(write_cell(CELL, CONFIG, tmp_path, INDEX))
    virtual = run_virtual(scenario, CONFIG.omit_s)
    with LiveRunner(scenario, CONFIG.omit_s, netns_prefix=PREFIX) as live:
        trial = live.run()
    assert trial.valid, trial.describe()
    assert trial.notes[f"s{INDEX}_packet_thread_cpu"] > 0
    (flow,) = trial.flows
    assert flow.seconds == pytest.approx(CONFIG.trial_s, abs=0.2)
    # TCP alone through one BDP of buffer fills the link (1,460 of 1,538 wire bytes),
    # and CUBIC overflows the buffer in both worlds (its first probe past the path, HyStart
    # having left slow start below it).
    assert trial.goodput_bps > 0.97 * 100e6 * 1460 / 1538
    assert trial.admission_drops > 0 and virtual.admission_drops > 0
    bands = drop_band([], None, CONFIG.drop_floor_frames, CONFIG.goodput_tolerance)
    judged = compare(CellRuns(CELL.name, (trial,), virtual, CELL), bands)
    assert judged.goodput_verdict == PASS, judged
    assert judged.drops_verdict == PASS, judged
    assert leftovers() == []


@pytest.mark.timeout(120)
def test_the_network_is_gone_after_a_failure(tmp_path):
    scenario = load_scenario(write_cell(CELL, CONFIG, tmp_path, INDEX))
    with pytest.raises(RuntimeError, match="on purpose"):
        with LiveRunner(scenario, CONFIG.omit_s, netns_prefix=PREFIX) as live:
            assert sorted(n for n in subprocess.run(
                ["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                if n.startswith(PREFIX)) == sorted(f"{PREFIX}{h}" for h in PORTS)
            assert live.netns("snd") == f"{PREFIX}snd"
            raise RuntimeError("on purpose")
    assert leftovers() == []
