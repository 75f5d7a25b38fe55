"""P4Runtime over TLS as simple_switch_grpc offers it, with certificates made in the test:
the controller library and bufferlab-ctl connect with client certificates; under mutual TLS
a client without a valid certificate is refused; servers listen on loopback only."""

from __future__ import annotations

import ipaddress
import json
import socket

import grpc
import psutil
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from bufferlab.controller.buffer_program import BufferSwitch
from bufferlab.controller.cli import EXIT_SWITCH, EXIT_USAGE
from bufferlab.controller.cli import main as ctl_main
from bufferlab.controller.client import ClientTls, P4RuntimeError, SwitchConnection
from bufferlab.controller.config import parse_config

# A bound, not a figure: TLS handshakes on a loaded two-core machine can take seconds.
CONNECT_TIMEOUT_S = 30.0
CONFIG = {"switch_id": 1, "pool_bytes": 65536, "ports": {"1": {}, "2": {"threshold": "40%"}},
          "forwarding": {"l2": [{"mac": "08:00:00:00:01:02", "port": 2}]}}


@pytest.fixture
def build(tmp_path, programs):
    """buffer_switch.p4's JSON, P4Info and a config file in tmp_path."""
    program = programs("buffer_switch.p4")
    (tmp_path / "bs.json").write_text(program.json)
    (tmp_path / "bs.p4info.txtpb").write_text(program.p4info_text)
    (tmp_path / "s1.json").write_text(json.dumps(CONFIG))
    return tmp_path


@pytest.fixture
def certs(tmp_path, live):
    return live.make_certificates(tmp_path)


def start_switch(live, tmp_path, build, *tls_args):
    port = live.free_port()
    switch = live.SwitchProcess(
        [str(build / "bs.json"), "--thrift-port", str(live.free_port()), "--log-console",
         "--", "--grpc-server-addr", f"127.0.0.1:{port}", *tls_args],
        tmp_path / "switch.log", port)
    return switch, f"127.0.0.1:{port}"


def mutual_args(certs):
    return ["--grpc-server-ssl", "--grpc-server-cert", str(certs.server_cert),
            "--grpc-server-key", str(certs.server_key), "--grpc-server-cacert", str(certs.ca),
            "--grpc-server-with-client-auth"]


def apply_and_read_back(address, programs, tls):
    """Apply CONFIG over `tls` as primary; the threshold entries read back from the switch."""
    program = programs("buffer_switch.p4")
    with SwitchConnection(address, 0, (0, 1), tls=tls) as connection:
        assert connection.connect(timeout_s=CONNECT_TIMEOUT_S) is True
        switch = BufferSwitch(connection, program.index)
        switch.apply(parse_config(CONFIG), program.json.encode())
        return len(switch.entries("buffer_threshold"))


def test_mutual_tls_admits_the_ca_signed_client_and_refuses_the_rest(tmp_path, build, certs,
                                                                    live, programs):
    switch, address = start_switch(live, tmp_path, build, *mutual_args(certs))
    try:
        assert "TLS, client certificates required" in switch.log_when("TLS, client")
        good = ClientTls(str(certs.ca), str(certs.client_cert), str(certs.client_key))
        assert apply_and_read_back(address, programs, good) == 2  # ports 1 and 2

        refused = {
            "no client certificate": ClientTls(str(certs.ca)),
            "a stranger CA's certificate": ClientTls(str(certs.ca), str(certs.stranger_cert),
                                                     str(certs.stranger_key)),
        }
        for what, tls in refused.items():
            with SwitchConnection(address, 0, (0, 2), tls=tls) as connection:
                with pytest.raises(P4RuntimeError) as error:
                    connection.connect(timeout_s=CONNECT_TIMEOUT_S)
                assert error.value.code == "UNAVAILABLE", what
        # Plain gRPC gets no answer from a TLS server either.
        with grpc.insecure_channel(address) as channel:
            with pytest.raises(grpc.RpcError) as error:
                p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(
                    p4runtime_pb2.CapabilitiesRequest(), timeout=10)
            assert error.value.code() == grpc.StatusCode.UNAVAILABLE

        # After every refusal the good client still works: the entries are all there.
        with SwitchConnection(address, 0, (0, 3), tls=good) as connection:
            assert connection.connect(timeout_s=CONNECT_TIMEOUT_S) is True
            switch_view = BufferSwitch(connection, programs("buffer_switch.p4").index)
            assert len(switch_view.entries("buffer_threshold")) == 2
    finally:
        switch.stop()


def test_bufferlab_ctl_connects_with_client_certificates(tmp_path, build, certs, live, capsys):
    switch, address = start_switch(live, tmp_path, build, *mutual_args(certs))
    common = ["--grpc-addr", address, "--p4info", str(build / "bs.p4info.txtpb"),
              "--json", str(build / "bs.json"), "--timeout-s", str(CONNECT_TIMEOUT_S)]
    try:
        tls = ["--ssl", "--cacert", str(certs.ca), "--cert", str(certs.client_cert),
               "--private-key", str(certs.client_key)]
        assert ctl_main([*common, *tls, "apply", str(build / "s1.json")]) == 0
        assert ctl_main([*common, *tls, "set", "2", "threshold", "25%"]) == 0
        out = capsys.readouterr().out
        assert out.endswith("\nbuffer_threshold port=2 -> static_threshold(percent=25)\n")

        # Without its certificate bufferlab-ctl is refused and says so, once.
        status = ctl_main([*common, "--ssl", "--cacert", str(certs.ca), "dump", "buffer_threshold"])
        err = capsys.readouterr().err
        assert status == EXIT_SWITCH
        assert err.startswith("bufferlab-ctl: switch error: StreamChannel failed: UNAVAILABLE")
        # TLS options without --ssl are a usage error, not a silent plain connection.
        assert ctl_main([*common, "--cacert", str(certs.ca), "dump", "buffer_threshold"]) == (
            EXIT_USAGE)
        assert capsys.readouterr().err == "bufferlab-ctl: error: --cacert needs --ssl\n"
    finally:
        switch.stop()


def test_tls_without_client_auth_needs_no_client_certificate(tmp_path, build, certs, live,
                                                            programs):
    switch, address = start_switch(live, tmp_path, build, "--grpc-server-ssl",
                                   "--grpc-server-cert", str(certs.server_cert),
                                   "--grpc-server-key", str(certs.server_key))
    try:
        assert apply_and_read_back(address, programs, ClientTls(str(certs.ca))) == 2
        # A client that does not trust the switch's CA refuses the switch.
        with SwitchConnection(address, 0, (0, 2), tls=ClientTls(str(certs.stranger_cert))) as c:
            with pytest.raises(P4RuntimeError) as error:
                c.connect(timeout_s=CONNECT_TIMEOUT_S)
            assert error.value.code == "UNAVAILABLE"
    finally:
        switch.stop()


def test_servers_listen_on_loopback_only_by_default(tmp_path, build, live):
    """No --grpc-server-addr: P4Runtime on 127.0.0.1:9559; the runtime CLI on 127.0.0.1."""
    thrift = live.free_port()
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 9559)) == 0:
            pytest.skip("another process holds 127.0.0.1:9559")
    switch = live.SwitchProcess([str(build / "bs.json"), "--thrift-port", str(thrift)],
                                tmp_path / "switch.log", 9559)
    try:
        listening = {(c.laddr.ip, c.laddr.port)
                     for c in psutil.Process(switch.process.pid).net_connections("inet")
                     if c.status == psutil.CONN_LISTEN}
        assert {port for _, port in listening} == {9559, thrift}
        # gRPC may bind 127.0.0.1 as an IPv4-mapped IPv6 socket: still loopback only.
        addresses = {ipaddress.ip_address(ip) for ip, _ in listening}
        assert {getattr(a, "ipv4_mapped", None) or a for a in addresses} == {
            ipaddress.ip_address("127.0.0.1")}
    finally:
        switch.stop()
