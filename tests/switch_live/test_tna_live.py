"""bufferlab-switch running a TNA program on veth pairs (ports are Tofino dev-port
numbers given with -i): hosts ping through tests/p4/tna/l2_forward.p4 set and programmed
over P4Runtime (a table entry per host, flooding through a multicast group written to
the PRE), the egress drops the copy flooded back to its ingress port (the switch's trace
says so)."""

from __future__ import annotations

import os

import pytest

from bufferlab.controller import entities
from bufferlab.controller.client import SwitchConnection, entity

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for namespaces and veth pairs"),
]


def test_hosts_ping_through_a_tna_l2_switch_set_by_p4runtime(live, programs, tmp_path):
    prog = programs("tna/l2_forward.p4")
    with live.Hosts(3) as hosts:
        grpc_port = live.free_port()
        # Dev ports 1..3 (pipe 0): the program has one pipe, which serves every port.
        args = [arg for n in range(1, 4) for arg in ("-i", f"{n}@{hosts.switch_iface(n)}")]
        args += ["--no-p4", "--log-console", "-L", "debug", "--thrift-port", str(live.free_port()),
                 "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        switch = live.SwitchProcess(args, tmp_path / "switch.log", grpc_port)
        try:
            with SwitchConnection(f"127.0.0.1:{grpc_port}", 0) as controller:
                assert controller.connect()
                controller.set_pipeline(prog.p4info, prog.json.encode())
                for n in range(1, 4):
                    controller.insert(entity(entities.table_entry(
                        prog.index, "pipe.Ingress.l2_forward", match={"hdr.ethernet.dst_addr": live.host_mac(n)},
                        action_name="Ingress.to_port", params={"port": n})))
                controller.insert(entity(entities.multicast_group(1, [(n, n) for n in range(1, 4)])))
                ping = hosts.run(1, "ping", "-c", "3", "-i", "0.2", "-W", "2", live.host_ip(2))
                assert ping.returncode == 0, ping.stdout + ping.stderr + switch.log()
                assert "3 received" in ping.stdout
        finally:
            assert switch.stop() == 0, switch.log()
    assert hosts.leftovers() == []
    log = switch.log()
    # Unicast to h2 by its table entry; h1's ARP request flooded through group 1, its
    # copy back to port 1 dropped by egress.
    assert "Egress port is 2, queue 0" in log
    assert "Dropping packet at the end of egress (drop_ctl 1)" in log


def test_a_switch_started_with_a_tna_json_is_programmed_by_the_runtime_cli(live, programs, tmp_path):
    from bufferlab.switch.runtime_cli import RuntimeCliConnection

    prog = programs("tna/l2_forward.p4")
    json_path = tmp_path / "l2_forward.json"
    json_path.write_text(prog.json)
    with live.Hosts(2) as hosts:
        grpc_port, thrift_port = live.free_port(), live.free_port()
        args = [arg for n in (1, 2) for arg in ("-i", f"{n}@{hosts.switch_iface(n)}")]
        args += [str(json_path), "--log-console", "--thrift-port", str(thrift_port),
                 "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        switch = live.SwitchProcess(args, tmp_path / "switch.log", grpc_port)
        try:
            cli = RuntimeCliConnection(port=thrift_port, timeout_s=10)
            try:
                # simple_switch_CLI's commands on a TNA program's tables, by P4Info's names.
                for n in (1, 2):
                    answer = cli.run(f"table_add pipe.Ingress.l2_forward Ingress.to_port "
                                     f"{live.host_mac(n)} => {n}")
                    assert answer.ok, answer.text
                answer = cli.run("mc_mgrp_create 1")
                assert answer.ok, answer.text
                answer = cli.run("table_num_entries pipe.Ingress.l2_forward")
            finally:
                cli.close()
            assert answer.ok and answer.text.strip().endswith("2"), answer.text
            # The PRE group is empty: ARP is flooded to nobody, so ping fails; a static
            # neighbour entry needs no ARP, and unicast goes by the table.
            hosts.run(1, "ip", "neigh", "add", live.host_ip(2), "lladdr", live.host_mac(2), "dev", "eth0")
            hosts.run(2, "ip", "neigh", "add", live.host_ip(1), "lladdr", live.host_mac(1), "dev", "eth0")
            ping = hosts.run(1, "ping", "-c", "2", "-i", "0.2", "-W", "2", live.host_ip(2))
            assert ping.returncode == 0, ping.stdout + ping.stderr + switch.log()
        finally:
            assert switch.stop() == 0, switch.log()
    assert hosts.leftovers() == []
    assert f"program {json_path} (tna for tofino)" in switch.log()
