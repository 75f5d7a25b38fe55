"""TCP transport and the bufferlab-switch-cli client end to end: a server thread on a free
port, the client as a subprocess fed a script on stdin, answers and exit codes."""

import io
import socket
import subprocess
import sys
import threading

import pytest
from cli_helpers import program_json

from bufferlab.switch import Engine
from bufferlab.switch.runtime_cli import Answer, Executor
from bufferlab.switch.runtime_cli.transport import (
    RuntimeCliConnection,
    RuntimeCliServer,
    read_answer,
    write_answer,
)


@pytest.fixture
def server():
    text = program_json("ipv4_lpm_router")
    executor = Executor(Engine(text), text)
    srv = RuntimeCliServer(executor, port=0)
    srv.start()
    yield srv, executor
    srv.close()


def run_client(port: int, script: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bufferlab.switch.runtime_cli.client", "--thrift-port", str(port), *extra],
        input=script, capture_output=True, text=True, timeout=60,
    )


def test_answers_round_trip_through_the_wire_format():
    buf = io.BytesIO()
    write_answer(buf, Answer("two\nlines é", True))
    write_answer(buf, Answer("", False))
    assert buf.getvalue() == "ok 12\ntwo\nlines é".encode() + b"error 0\n"
    buf.seek(0)
    assert read_answer(buf) == Answer("two\nlines é", True)
    assert read_answer(buf) == Answer("", False)
    with pytest.raises(ConnectionError):
        read_answer(io.BytesIO(b"maybe 3\nabc"))
    with pytest.raises(ConnectionError):
        read_answer(io.BytesIO(b"ok 10\nabc"))


def test_connection_runs_commands_in_turn(server):
    srv, executor = server
    conn = RuntimeCliConnection(port=srv.port)
    try:
        assert conn.run("table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1").text.endswith(
            "Entry has been added with handle 0")
        answer = conn.run("table_add ipv4_lpm nothing 10.0.1.1/32 => 1")
        assert not answer.ok and "Invalid action name" in answer.text
        assert conn.run("table_num_entries ipv4_lpm") == Answer("1", True)
    finally:
        conn.close()
    assert len(executor.engine.table_entries("RouterIngress.ipv4_lpm")) == 1


def test_client_script_prints_answers_and_exits_zero(server):
    srv, executor = server
    script = (
        "# routes for s1\n"
        "table_add RouterIngress.ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1\n"
        "\n"
        "table_add ipv4_lpm drop 10.0.9.9/32 =>\n"
        "mirroring_add 5 3\n"
        "set_queue_rate 1000 2\n"
        "table_num_entries ipv4_lpm\n"
    )
    r = run_client(srv.port, script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "Adding entry to lpm match table RouterIngress.ipv4_lpm"
    assert "Entry has been added with handle 1" in r.stdout
    assert r.stdout.splitlines()[-1] == "2"
    assert executor.engine.clone_session_get(5) == (3, None, None)
    assert executor.engine.port_config(2)["queue_rate_pps"][0] == 1000


def test_client_exit_status_is_one_when_a_command_failed(server):
    srv, executor = server
    r = run_client(srv.port, "table_add nope a 1 => 2\nmirroring_add 5 3\n")
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == "Error: Invalid table name (nope)"
    # The script goes on after a failure, as simple_switch_CLI does.
    assert executor.engine.clone_session_get(5) == (3, None, None)


def test_client_reports_usage_errors(server):
    srv, _ = server
    r = run_client(srv.port, "set_queue_rate\n")
    assert r.returncode == 1
    assert r.stdout == (
        "Error: Insufficient number of args, expected at least 1 but got 0\n"
        "Usage: set_queue_rate <rate_pps> [<egress_port> [<priority>]]\n"
    )
    assert "Traceback" not in r.stdout + r.stderr


def test_client_without_a_switch_says_so_and_exits_one():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_client(port, "show_tables\n")
    assert r.returncode == 1
    assert f"Could not connect to the switch's runtime CLI on 127.0.0.1:{port}" in r.stderr
    assert "--thrift-port" in r.stderr


def test_client_accepts_simple_switch_cli_options(server):
    srv, _ = server
    r = run_client(srv.port, "get_time_elapsed\n", "--thrift-ip", "127.0.0.1", "--json", "build/x.json")
    assert (r.returncode, r.stdout) == (0, "0\n")


def test_internal_errors_are_answered_not_raised(server):
    srv, executor = server

    def broken(a, out):
        raise RuntimeError("boom")

    executor._handlers["show_tables"] = broken
    conn = RuntimeCliConnection(port=srv.port)
    try:
        answer = conn.run("show_tables")
        assert not answer.ok
        assert answer.text == "Error: internal error while running 'show_tables': RuntimeError: boom"
        assert conn.run("get_time_elapsed").ok  # the connection survives
    finally:
        conn.close()


def test_clients_are_served_concurrently_and_serialised(server):
    srv, executor = server
    errors = []

    def worker(i):
        conn = RuntimeCliConnection(port=srv.port)
        try:
            for j in range(10):
                a = conn.run(f"table_add ipv4_lpm ipv4_forward 10.{i}.{j}.0/24 => 08:00:00:00:01:11 1")
                if not a.ok:
                    errors.append(a.text)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    handles = sorted(e["handle"] for e in executor.engine.table_entries("RouterIngress.ipv4_lpm"))
    assert handles == list(range(40))


def test_overlong_line_is_refused(server):
    srv, _ = server
    conn = RuntimeCliConnection(port=srv.port)
    try:
        answer = conn.run("show_tables " + "x" * 70000)
        assert not answer.ok and "longer than" in answer.text
    finally:
        conn.close()


def test_terminal_gets_the_prompt_and_exits_on_eof(server):
    import os
    import pty

    srv, executor = server
    main_fd, sub_fd = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bufferlab.switch.runtime_cli.client", "--thrift-port", str(srv.port)],
        stdin=sub_fd, stdout=sub_fd, stderr=sub_fd, close_fds=True,
    )
    os.close(sub_fd)
    seen, pos = b"", 0

    def read_until(marker: bytes) -> None:
        """Reads until `marker` appears after everything matched so far."""
        nonlocal seen, pos
        while marker not in seen[pos:]:
            chunk = os.read(main_fd, 4096)
            assert chunk, seen
            seen += chunk
        pos = seen.index(marker, pos) + len(marker)

    try:
        read_until(b"RuntimeCmd: ")
        os.write(main_fd, b"mirroring_add 7 2\n")
        read_until(b"RuntimeCmd: ")
        os.write(main_fd, b"mirroring_get 7\n")
        read_until(b"MirroringSessionConfig(port=2, mgid=None)")
        read_until(b"RuntimeCmd: ")
        os.write(main_fd, b"\x04")  # Ctrl-D: end of input
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main_fd)
    assert seen.startswith(b"Control utility for runtime P4 table manipulation")
    assert executor.engine.clone_session_get(7) == (2, None, None)


def test_tab_completes_command_names():
    from bufferlab.switch.runtime_cli.client import _complete_command

    assert [_complete_command("mirroring_a", i) for i in range(3)] == ["mirroring_add", "mirroring_add_mc", None]
    assert _complete_command("zzz", 0) is None
