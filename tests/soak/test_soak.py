"""The soak for 60 s (bench/soak.py --minutes 1): 150 % load through port 3 of a live
bufferlab-switch with live threshold changes; every counter read conserves frames exactly
(quiet reads) or never counts a frame out before it is in (reads during traffic), and the
switch's memory stays flat after warm-up."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for Mininet namespaces"),
]

BENCH = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


def load_soak():
    spec = importlib.util.spec_from_file_location("bench_soak", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_minute_of_soak_conserves_every_frame_and_memory_stays_flat(tmp_path):
    soak = load_soak()
    # Switch s4: not the s5 of a long soak that may be running beside the tests.
    figures, record = soak.run(minutes=1, warmup_s=20, work_dir=tmp_path, switch="s4")
    assert record.failures == []
    # Reads really happened throughout (how many depends on the machine's load: a 4 s epoch
    # and about 0.5 s of reads around it), and the load really overflowed port 3.
    assert figures["reads_quiet_exact"] >= 4 and figures["reads_during_traffic"] >= 10
    assert figures["threshold_changes"] >= 3
    assert figures["frames_dropped_port3"] > 0 and figures["frames_out_port3"] > 0
    assert figures["frames_sent"] == (figures["frames_out_port3"] + figures["frames_dropped_port3"]
                                      + figures["ingress_discards"])
    # After warm-up the RSS swings by a few MiB between reads (the allocator returns and takes
    # memory); a lasting growth would raise its high-water mark: under 1 % in 40 s.
    assert figures["memory_samples"] >= 3
    assert figures["hwm_growth_percent"] < 1.0, figures
