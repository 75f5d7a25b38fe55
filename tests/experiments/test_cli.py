"""python -m bufferlab.experiments.tor_switch: bad options exit 2 and name the problem."""

from bufferlab.experiments.tor_switch.__main__ import main


def test_too_small_pool_is_refused_with_the_key(capsys, tmp_path):
    assert main(["--pool-bytes", "100", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: tor_switch config: pool_bytes: the smallest threshold holds 10")
    assert not any(tmp_path.iterdir())


def test_jobs_below_one_are_refused(capsys, tmp_path):
    assert main(["--jobs", "0", "--out", str(tmp_path)]) == 2
    assert "--jobs: 0 processes, need at least 1" in capsys.readouterr().err


def test_full_grid_refuses_a_pool_whose_1_percent_drops_1518_byte_frames(capsys, tmp_path):
    assert main(["--full", "--pool-bytes", "100000", "--out", str(tmp_path)]) == 2
    assert "holds 1000 bytes, less than one 1518-byte frame" in capsys.readouterr().err


def test_live_backend_refuses_the_full_grid(capsys, tmp_path):
    assert main(["--backend", "live", "--full", "--out", str(tmp_path)]) == 2
    assert "--full: the seed's whole grid runs on the virtual backend only" in \
        capsys.readouterr().err


def test_live_backend_refuses_parallel_cells(capsys, tmp_path):
    assert main(["--backend", "live", "--jobs", "2", "--out", str(tmp_path)]) == 2
    assert "the live backend has one switch" in capsys.readouterr().err
