"""bufferlab-switch as a process on veth pairs: hosts ping through forward.p4 programmed from
a tutorials-style runtime file, P4Runtime writes change forwarding live, PacketOut/PacketIn,
arbitration, pcaps read back with Scapy, a shaped port, start-up failures, and nothing left
behind."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys

import pytest
from scapy.utils import RawPcapReader

from bufferlab.controller import entities
from bufferlab.controller.client import P4RuntimeError, SwitchConnection, entity
from bufferlab.controller.runtime_json import load_runtime, program_switch
from bufferlab.switch.runtime_cli import RuntimeCliConnection

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for namespaces and veth pairs"),
]

ETHERTYPE_TEST = 0x88B5


def l2_frame(dst: str, src: str, seq: int, size: int = 64, ether_type: int = ETHERTYPE_TEST) -> bytes:
    """A frame of `size` bytes (no FCS) whose payload starts with its sequence number."""
    head = bytes.fromhex(dst.replace(":", "")) + bytes.fromhex(src.replace(":", ""))
    head += ether_type.to_bytes(2, "big") + seq.to_bytes(4, "big")
    return head + bytes(size - len(head))


def read_pcap(path) -> list[tuple[float, bytes]]:
    """(timestamp in s, frame) of every record, read with Scapy (nanosecond pcap, as BMv2's)."""
    with RawPcapReader(str(path)) as reader:
        assert reader.nano
        return [(meta.sec + meta.usec / 1e9, data) for data, meta in reader]


def runtime_file(tmp_path, prog, hosts: int, ports: dict[int, int] | None = None):
    """An s1-runtime.json as the tutorials write it: l2_forward per host MAC, broadcast
    flooded to every host port through multicast group 1."""
    (tmp_path / "forward.p4.p4info.txtpb").write_text(prog.p4info_text)
    (tmp_path / "forward.json").write_text(prog.json)
    ports = ports or {n: n for n in range(1, hosts + 1)}
    runtime = {
        "target": "bmv2",
        "p4info": "forward.p4.p4info.txtpb",
        "bmv2_json": "forward.json",
        "table_entries": [
            {"table": "l2_forward", "default_action": True, "action_name": "flood",
             "action_params": {"group": 1}},
            *({"table": "l2_forward", "match": {"dst_addr": f"08:00:00:00:01:{n:02x}"},
               "action_name": "l2_to_port", "action_params": {"port": port}}
              for n, port in ports.items()),
        ],
        "multicast_group_entries": [
            {"multicast_group_id": 1,
             "replicas": [{"egress_port": n, "instance": 1} for n in range(1, hosts + 1)]},
        ],
    }
    path = tmp_path / "s1-runtime.json"
    path.write_text(json.dumps(runtime))
    return path


@pytest.fixture
def start_switch(live, tmp_path):
    """Start bufferlab-switch on the hosts' switch ports; stopped at the end."""
    started = []

    def start(hosts, json_path: str | None, *target_args: str, pcap: bool = True,
              cpu_port: int | None = None):
        grpc_port, thrift_port = live.free_port(), live.free_port()
        args = [arg for n in range(1, hosts.count + 1) for arg in ("-i", f"{n}@{hosts.switch_iface(n)}")]
        if pcap:
            args += ["--pcap", str(tmp_path / "pcaps")]
        args += [json_path] if json_path else ["--no-p4"]
        args += ["--log-console", "-L", "debug", "--thrift-port", str(thrift_port), "--",
                 "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        if cpu_port is not None:
            args += ["--cpu-port", str(cpu_port)]
        args += list(target_args)
        switch = live.SwitchProcess(args, tmp_path / "switch.log", grpc_port)
        switch.address = f"127.0.0.1:{grpc_port}"
        switch.thrift_port = thrift_port
        started.append(switch)
        return switch

    yield start
    for switch in started:
        switch.stop()


def test_hosts_ping_through_forward_p4_and_writes_change_forwarding(live, programs, tmp_path,
                                                                    start_switch):
    prog = programs("forward.p4")
    with live.Hosts(3) as hosts:
        switch = start_switch(hosts, None)
        with SwitchConnection(switch.address, 0) as controller:
            assert controller.connect()
            program_switch(controller, load_runtime(runtime_file(tmp_path, prog, 3)))
            ping = hosts.run(1, "ping", "-c", "3", "-i", "0.2", "-W", "2", live.host_ip(2))
            assert ping.returncode == 0, ping.stdout + ping.stderr + switch.log()
            assert "3 received" in ping.stdout

            # Live change: frames for h2's MAC now go to port 3 (h3), not to h2.
            before_h3 = hosts.rx_packets(3)
            controller.modify(entity(entities.table_entry(
                prog.index, "l2_forward", match={"dst_addr": live.host_mac(2)},
                action_name="l2_to_port", params={"port": 3})))
            frames = [l2_frame(live.host_mac(2), live.host_mac(1), seq) for seq in range(5)]
            hosts.send_frames(1, frames)
            for _ in range(100):
                if hosts.rx_packets(3) - before_h3 >= 5:
                    break
                subprocess.run(["sleep", "0.05"], check=False)
            assert hosts.rx_packets(3) - before_h3 >= 5
        assert switch.stop() == 0, switch.log()

    # The captures, written as BMv2 names them, hold the ping and the redirected frames.
    into_switch = read_pcap(tmp_path / "pcaps" / f"{hosts.switch_iface(1)}_in.pcap")
    to_h3 = [f for _, f in read_pcap(tmp_path / "pcaps" / f"{hosts.switch_iface(3)}_out.pcap")]
    to_h2 = [f for _, f in read_pcap(tmp_path / "pcaps" / f"{hosts.switch_iface(2)}_out.pcap")]
    echo_requests = [f for _, f in into_switch if f[12:14] == b"\x08\x00" and f[34] == 8]
    assert len(echo_requests) == 3
    assert [f for f in to_h3 if f[12:14] == ETHERTYPE_TEST.to_bytes(2, "big")] == frames
    assert [f for f in to_h2 if f[12:14] == ETHERTYPE_TEST.to_bytes(2, "big")] == []
    assert "P4Runtime server listening on" in switch.log()
    assert hosts.leftovers() == []
    # At -L debug every packet is traced in BMv2's form: the redirected frames' path.
    trace = [line for line in switch.log().splitlines() if "] [bmv2] [" in line]
    assert any(re.search(r"\[bmv2\] \[D\] \[thread \d+\] \[\d+\.0\] \[cxt 0\] "
                         r"Processing packet received on port 1$", line) for line in trace)
    assert sum(line.endswith("Transmitting packet of size 64 out of port 3") for line in trace) >= 5


def test_packet_out_and_packet_in(live, programs, start_switch):
    prog = programs("packet_io_controller_header.p4")
    with live.Hosts(2) as hosts:
        switch = start_switch(hosts, None, cpu_port=255)
        with SwitchConnection(switch.address, 0) as controller:
            assert controller.connect()
            controller.set_pipeline(prog.p4info, prog.json.encode())
            controller.insert(entity(entities.table_entry(
                prog.index, "punt", match={"hdr.ethernet.etherType": ETHERTYPE_TEST},
                action_name="send_to_cpu")))
            # The runtime CLI follows the pipeline the controller set.
            cli = RuntimeCliConnection(port=switch.thrift_port, timeout_s=10)
            try:
                answer = cli.run("table_num_entries IoIngress.punt")
            finally:
                cli.close()
            assert answer.ok and answer.text.strip().endswith("1"), answer.text
            # A host's frame on port 1 is punted: it reaches the controller with its port.
            punted = l2_frame(live.host_mac(2), live.host_mac(1), 7)
            hosts.send_frames(1, [punted])
            packet_in = controller.packets.get(timeout=10)
            assert packet_in.payload == punted
            assert {m.metadata_id: m.value for m in packet_in.metadata}[1] == b"\x01"
            # The controller's frame leaves on port 2 without its packet_out header.
            before = hosts.rx_packets(2)
            out = l2_frame(live.host_mac(2), "02:00:00:00:00:01", 9, ether_type=0x0801)
            controller.packet_out(out, {1: b"\x00\x02"})
            for _ in range(100):
                if hosts.rx_packets(2) > before:
                    break
                subprocess.run(["sleep", "0.05"], check=False)
            assert hosts.rx_packets(2) == before + 1
        # Ctrl-C stops it as cleanly as SIGTERM.
        assert switch.stop(signal.SIGINT) == 0, switch.log()
        assert "SIGINT: stopping" in switch.log()


def test_a_backup_controller_cannot_write(live, programs, start_switch):
    prog = programs("forward.p4")
    with live.Hosts(1) as hosts:
        switch = start_switch(hosts, None, pcap=False)
        with SwitchConnection(switch.address, 0, election_id=(0, 5)) as primary, \
                SwitchConnection(switch.address, 0, election_id=(0, 2)) as backup:
            assert primary.connect()
            assert not backup.connect()
            primary.set_pipeline(prog.p4info, prog.json.encode())
            entry = entity(entities.table_entry(prog.index, "l2_forward",
                                                match={"dst_addr": live.host_mac(1)},
                                                action_name="l2_to_port", params={"port": 1}))
            with pytest.raises(P4RuntimeError) as refused:
                backup.insert(entry)
            assert refused.value.code == "PERMISSION_DENIED"
            primary.insert(entry)
            assert len(primary.read(entity(entities.table_entry(
                prog.index, "l2_forward", match={"dst_addr": live.host_mac(1)})))) == 1


def test_a_shaped_port_spaces_frames_by_their_serialisation_time(live, programs, tmp_path,
                                                                  start_switch):
    prog = programs("forward.p4")
    rate_bps, size, count = 1_000_000, 1000, 20
    with live.Hosts(2) as hosts:
        switch = start_switch(hosts, None, "--port-rate", f"2:{rate_bps}")
        with SwitchConnection(switch.address, 0) as controller:
            assert controller.connect()
            program_switch(controller, load_runtime(runtime_file(tmp_path, prog, 2)))
            frames = [l2_frame(live.host_mac(2), live.host_mac(1), seq, size) for seq in range(count)]
            hosts.send_frames(1, frames)
            wire_s = (size + 24) * 8 / rate_bps
            for _ in range(200):
                if hosts.rx_packets(2) >= count:
                    break
                subprocess.run(["sleep", "0.05"], check=False)
        assert switch.stop() == 0
    received = [(t, f) for t, f in read_pcap(tmp_path / "pcaps" / f"{hosts.switch_iface(1)}_in.pcap")
                if f[12:14] == ETHERTYPE_TEST.to_bytes(2, "big")]
    sent = [(t, f) for t, f in read_pcap(tmp_path / "pcaps" / f"{hosts.switch_iface(2)}_out.pcap")
            if f[12:14] == ETHERTYPE_TEST.to_bytes(2, "big")]
    # Every frame, in order, and the last one leaves no earlier than `count` serialisation
    # times after the first arrived (the shaper sends one frame per wire time).
    assert [f for _, f in sent] == frames
    assert sent[-1][0] - received[0][0] >= count * wire_s * 0.999


def test_start_up_failures_exit_non_zero_with_a_clear_message(live, programs, tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"header_types": 3}')
    busy = live.free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", busy))
        holder.listen()
        cases = [
            (["-i", "1@blsw-missing0", "--no-p4"], "blsw-missing0"),
            ([str(bad_json)], "cannot load the BMv2 JSON"),
            ([str(tmp_path / "absent.json")], "cannot read the BMv2 JSON"),
            (["--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{busy}"], "cannot listen"),
            (["--no-p4", "--thrift-port", str(busy), "--", "--grpc-server-addr",
              f"127.0.0.1:{live.free_port()}"], "--thrift-port"),
        ]
        for args, message in cases:
            proc = subprocess.run([sys.executable, "-m", "bufferlab.switch.cli", *args],
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
            assert "bufferlab-switch: error:" in proc.stderr and message in proc.stderr, proc.stderr


def test_nothing_is_left_behind_when_a_test_fails_midway(live, start_switch):
    hosts = live.Hosts(2)
    with pytest.raises(RuntimeError, match="a failing step"):
        with hosts:
            switch = start_switch(hosts, None)
            raise RuntimeError("a failing step")
    assert hosts.leftovers() == []
    # The switch lost its interfaces: it either still runs (and stops cleanly) or has
    # stopped with an error naming the port; it never hangs.
    status = switch.stop()
    assert status == 0 or "error:" in switch.log(), switch.log()
