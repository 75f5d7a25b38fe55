"""bufferlab-ctl without a switch: argument handling, dry runs, and one clear message with a
non-zero exit (never a traceback) for each user error."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.cli import EXIT_SWITCH, EXIT_USAGE, main

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "buffer_switch.p4"
NOBODY = "127.0.0.1:1"  # nothing listens there


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    """build/ as `make build` leaves it: the program's BMv2 JSON and P4Info text."""
    out = tmp_path_factory.mktemp("build")
    document, p4info = compile_p4(PROGRAM)
    (out / "buffer_switch.json").write_text(json.dumps(document))
    (out / "buffer_switch.p4.p4info.txtpb").write_text(text_format.MessageToString(p4info))
    return out


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "s1.json"
    path.write_text(json.dumps({
        "switch_id": 1, "pool_bytes": 100_000, "ports": {"1": {}, "2": {}, "3": {"threshold": "50%"}},
        "forwarding": {"l2": [{"mac": "08:00:00:00:01:03", "port": 3}]}}))
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def pipeline_args(build: Path) -> list[str]:
    return ["--p4info", str(build / "buffer_switch.p4.p4info.txtpb"),
            "--json", str(build / "buffer_switch.json")]


def test_dry_run_prints_every_update_without_a_switch(capsys, build, config):
    status, out, err = run(capsys, "--grpc-addr", NOBODY, *pipeline_args(build),
                           "apply", str(config), "--dry-run")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == ("MODIFY switch_config (default) -> set_switch(switch_id=1, pool_bytes=100000,"
                        " port_session_base=1, all_ports_session=511)")
    assert "INSERT l2_forward dst_addr=08:00:00:00:01:03 -> l2_to_port(port=3)" in lines
    assert "INSERT buffer_threshold port=3 -> static_threshold(percent=50)" in lines
    assert len(lines) == 8 + 5 + 1 + 3 * 5  # defaults, PRE, forwarding, 5 tables × 3 ports


def test_bad_config_names_the_key_and_exits_2(capsys, build, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"switch_id": 1, "pool_bytes": 100_000,
                                "ports": {"3": {"threshold": "150%"}},
                                "pause": {"xoff_bytes": 20_000, "xon_bytes": 30_000,
                                          "refresh_us": 100}}))
    status, out, err = run(capsys, *pipeline_args(build), "apply", str(path), "--dry-run")
    assert (status, out) == (EXIT_USAGE, "")
    assert err == ("bufferlab-ctl: error: pause.xon_bytes: 30000 is above pause.xoff_bytes 20000\n"
                   "ports.3.threshold: 150% is above 100%\n")


def test_missing_pipeline_files_are_usage_errors(capsys, build, config, tmp_path):
    status, _out, err = run(capsys, "--p4info", str(tmp_path / "none.txtpb"), "apply",
                            str(config), "--dry-run")
    assert status == EXIT_USAGE
    assert err == f"bufferlab-ctl: error: --p4info {tmp_path / 'none.txtpb'}: cannot read: No such file or directory\n"
    status, _out, err = run(capsys, "--p4info", str(build / "buffer_switch.p4.p4info.txtpb"),
                            "--json", str(tmp_path / "none.json"), "apply", str(config))
    assert status == EXIT_USAGE
    assert err == f"bufferlab-ctl: error: --json {tmp_path / 'none.json'}: cannot read: No such file or directory\n"
    (tmp_path / "junk.txtpb").write_text("tables { nonsense")
    status, _out, err = run(capsys, "--p4info", str(tmp_path / "junk.txtpb"), "apply",
                            str(config), "--dry-run")
    assert status == EXIT_USAGE and "not a P4Info text file" in err


def test_unreachable_switch_is_a_switch_error(capsys, build, config):
    status, out, err = run(capsys, "--grpc-addr", NOBODY, "--timeout-s", "0.2",
                           *pipeline_args(build), "apply", str(config))
    assert (status, out) == (EXIT_SWITCH, "")
    # Refused at once (UNAVAILABLE) or no answer within --timeout-s, whichever comes first.
    assert re.fullmatch("bufferlab-ctl: switch error: StreamChannel failed:"
                        " (DEADLINE_EXCEEDED|UNAVAILABLE)"
                        f" cannot reach the switch at {re.escape(NOBODY)} \\(device 0\\)\n", err)


@pytest.mark.parametrize(("argv", "message"), [
    (["set", "3", "threshold", "150%"], "ports.3.threshold: 150% is above 100%"),
    (["set", "3", "threshold", "50"], 'ports.3.threshold: write a percentage of the pool such as "50%", not \'50\''),
    (["set", "3", "alpha", "1/3"], "ports.3.alpha: 1/3 is not n/2^k with k ≤ 16 (the program divides by shifting)"),
    (["set", "3", "alpha", "1/8", "2"], "set 3 alpha: expected FRACTION"),
    (["set", "3", "queue-cap", "1"], "set 3 queue-cap: expected QUEUE BYTES|none"),
    (["set", "3", "queue-cap", "1", "lots"], "BYTES: 'lots' is not a whole number"),
    (["set", "3", "ecn-k", "97500"], "set 3 ecn-k: expected QUEUE BYTES|none"),
    (["set", "3", "ecn-k", "0", "-1"], "ports.3.ecn_k_bytes: -1 is outside 0..4294967295"),
    (["set", "3", "ecn-k", "0", "4294967296"], "ports.3.ecn_k_bytes: 4294967296 is outside 0..4294967295"),
    (["set", "3", "ecn-k", "q", "100"], "queue: 'q' is not a whole number"),
    (["set", "3", "threshold", "50%", "--queue", "1"], "--queue goes with set PORT bcn only"),
    (["set", "3", "bcn", "qeq"], "bcn: give NAME VALUE pairs (names: enable, qeq, w, qsc, sample, jitter, fb_bits, fb_range, positive_to, qoff_max)"),
    (["set", "3", "pause", "xoff", "big"], "pause.xoff_bytes: 'big' is not a whole number"),
])
def test_bad_set_values_fail_before_any_connection(capsys, argv, message):
    # Nothing listens on NOBODY and the timeout is long: reaching it would be EXIT_SWITCH.
    status, out, err = run(capsys, "--grpc-addr", NOBODY, "--timeout-s", "30", *argv)
    assert (status, out, err) == (EXIT_USAGE, "", f"bufferlab-ctl: error: {message}\n")


@pytest.mark.parametrize(("argv", "fragment"), [
    ([], "the following arguments are required: COMMAND"),
    (["set", "3", "depth", "5"], "argument item: invalid choice: 'depth'"),
    (["set", "port3", "threshold", "50%"], "argument port: invalid int value: 'port3'"),
    (["read", "meter", "x"], "argument kind: invalid choice: 'meter'"),
    (["--election-id", "0", "dump", "l2_forward"], "election id must be a positive 128-bit value"),
    (["--election-id", "a,b", "dump", "l2_forward"], "is not N or HIGH,LOW"),
])
def test_argument_errors_exit_2_with_usage(capsys, argv, fragment):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: bufferlab-ctl") and fragment in err


def test_the_command_never_shows_a_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = subprocess.run(
        [sys.executable, "-m", "bufferlab.controller.cli", "apply", str(bad), "--dry-run"],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == EXIT_USAGE
    assert result.stderr == f"bufferlab-ctl: error: {bad}: not JSON: Expecting property name enclosed in double quotes at line 1 column 2\n"


def test_scheduler_prints_runtime_cli_lines_without_a_switch(capsys, config):
    examples = Path(__file__).resolve().parents[2] / "experiments" / "configs"
    status, out, err = run(capsys, "scheduler", str(examples / "seed002_qbss.json"))
    assert (status, out, err) == (0, "set_port_scheduler 2 drr 15 435 1050\n", "")
    status, out, err = run(capsys, "scheduler", str(config))
    assert status == EXIT_USAGE and out == ""
    assert err == f"bufferlab-ctl: error: {config} has no scheduler section\n"
