"""The grid runner: the same rows wherever the cells ran, and failed cells named."""

import csv
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bufferlab.experiments.common.grid import run_grid, scheduler_address, where
from bufferlab.experiments.tor_switch.backend import BurstCell, DelayCell
from bufferlab.experiments.tor_switch.config import TorConfig
from bufferlab.experiments.tor_switch.runner import Job, cell_name, run_cell, run_tests
from bufferlab.experiments.tor_switch.virtual_time import VirtualTimeBackend

SMALL = TorConfig(pool_bytes=12_288, trial_ms=2.0, frame_sizes_bytes=(64, 1518),
                  thresholds_pct=(20, 100), loads_pct=(50.2,), burst_frame_sizes_bytes=(512,),
                  burst_thresholds_pct=(50,))
DASK = Path(sys.executable).parent / "dask"


def rows_csv(rows, path):
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path.read_bytes()


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A Dask cluster started as a user starts one: `dask scheduler`, `dask worker`."""
    from distributed import Client

    state = tmp_path_factory.mktemp("dask")
    scheduler_file = state / "scheduler.json"
    processes = [subprocess.Popen(
        [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(scheduler_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            if time.monotonic() > deadline:
                pytest.fail("dask scheduler did not write its scheduler file within 60 s")
            time.sleep(0.2)
        processes.append(subprocess.Popen(
            [str(DASK), "worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
             "--nworkers", "2", "--dashboard-address", ":0", "--local-directory", str(state)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(2, timeout=120)
            address = client.scheduler.address
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.mark.timeout(400)
def test_rows_are_identical_serially_locally_and_on_a_scheduler(tmp_path, scheduler):
    backend = VirtualTimeBackend(SMALL)
    serial = run_tests(backend, SMALL, jobs=1)
    local = run_tests(backend, SMALL, jobs=2)
    remote = run_tests(backend, SMALL, scheduler=scheduler)
    assert serial.failures == local.failures == remote.failures == []
    assert [(r["frame_size_bytes"], r["threshold_pct"]) for r in serial.delay_rows] == [
        (64, 20), (64, 100), (1518, 20), (1518, 100)]
    assert all(r["received_frames"] > 0 for r in serial.delay_rows)
    assert serial.burst_rows[0]["burst_per_port_frames"] > 0
    for name, rows in (("burst", "burst_rows"), ("delay", "delay_rows")):
        want = rows_csv(getattr(serial, rows), tmp_path / f"{name}_serial.csv")
        assert rows_csv(getattr(local, rows), tmp_path / f"{name}_local.csv") == want
        assert rows_csv(getattr(remote, rows), tmp_path / f"{name}_remote.csv") == want


@pytest.mark.timeout(300)
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failed_cell_is_named_and_the_others_are_kept(jobs):
    backend = VirtualTimeBackend(SMALL)
    work = [Job(backend, SMALL, DelayCell(64, 100, 50.2, SMALL.trial_ns)),
            Job(backend, SMALL, DelayCell(32, 100, 50.2, SMALL.trial_ns)),  # below 64 bytes
            Job(backend, SMALL, BurstCell(512, 50))]
    done = []
    outcome = run_grid(work, run_cell, cell_name, jobs=jobs,
                       on_done=lambda job, row: done.append(row is None))
    assert outcome.results[0]["frame_size_bytes"] == 64 and outcome.results[1] is None
    assert outcome.results[2]["burst_per_port_frames"] > 0
    assert [f.name for f in outcome.failures] == ["delay 32 B, 100 %, 50.2 % per port"]
    assert "ValueError" in outcome.failures[0].error and "64" in outcome.failures[0].error
    assert sorted(done) == [False, False, True]


def test_the_scheduler_comes_from_the_argument_or_the_environment(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert scheduler_address(None) is None
    assert where(1, None) == "this process, one trial at a time"
    assert where(3, None) == "embedded Dask LocalCluster, 3 worker processes"
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://10.9.9.9:8786")
    assert scheduler_address(None) == "tcp://10.9.9.9:8786"
    assert where(None, None) == "Dask cluster at tcp://10.9.9.9:8786"
    assert scheduler_address("tcp://127.0.0.1:1") == "tcp://127.0.0.1:1"
    with pytest.raises(ValueError, match="need at least 1"):
        run_grid([1], str, str, jobs=0)
