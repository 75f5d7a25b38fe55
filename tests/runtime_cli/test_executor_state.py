"""Counters, registers, meters, clone sessions, multicast, value sets, queues and ports
through the CLI: each command's effect seen in forwarding or in the engine's state."""

from cli_helpers import program_json, run_err, run_ok, send
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether

from bufferlab.switch.runtime_cli import Executor


def ipv4_frame(dst: str = "10.0.0.1", src_mac: str = "00:00:00:00:00:01", tos: int = 0, size: int = 0) -> bytes:
    f = bytes(Ether(dst="00:00:00:00:00:02", src=src_mac) / IP(src="10.0.0.1", dst=dst, tos=tos) / UDP(sport=1, dport=2))
    return f + bytes(max(0, size - len(f)))


def ports_of(outputs):
    return sorted(p for p, _ in outputs)


def test_counter_read_write_reset(cli):
    x = cli("counters_indirect")
    run_ok(x, "table_add fwd to_port 3 => 2")
    frame = ipv4_frame(size=100)
    assert ports_of(send(x, 3, frame)) == [2]
    assert run_ok(x, "counter_read rx_both 2") == "rx_both[2]=  BmCounterValue(packets=1, bytes=100)"
    assert run_ok(x, "counter_read CntIngress.rx_packets 3").endswith("BmCounterValue(packets=1, bytes=100)")
    assert run_ok(x, "counter_write rx_both 2 10 1000") == "rx_both[2] has been updated"
    send(x, 3, frame)
    assert run_ok(x, "counter_read rx_both 2").endswith("(packets=11, bytes=1100)")
    run_ok(x, "counter_reset rx_both")
    assert run_ok(x, "counter_read rx_both 2").endswith("(packets=0, bytes=0)")
    assert run_err(x, "counter_read rx_both 512").startswith("Invalid counter operation (INVALID_INDEX)")
    assert run_err(x, "counter_read rx_nothing 0") == "Error: Invalid counter name (rx_nothing)"


def test_direct_counter_reads_by_entry_handle(tables_cli):
    x = tables_cli
    # The protocol key is masked with 0xf0 (p4c's form of protocol[7:4]); BMv2 matches
    # `protocol & 0xf0` against the entry's value as given, so UDP's 0x11 matches 0x10.
    run_ok(x, "table_add t_exact_multi set_res 10.0.0.1 10.0.0.2 0x10 1 => 5")
    frame = ipv4_frame("10.0.0.2", size=80)
    assert ports_of(send(x, 2, frame)) == [1]
    assert run_ok(x, "counter_read exact_hits 0") == (
        "this is the direct counter for table MyIngress.t_exact_multi\n"
        "exact_hits[0]=  BmCounterValue(packets=1, bytes=80)")
    run_ok(x, "counter_reset exact_hits")
    assert run_ok(x, "counter_read exact_hits 0").endswith("(packets=0, bytes=0)")
    assert run_err(x, "counter_read exact_hits 9").splitlines()[-1].startswith("Invalid counter operation (INVALID_INDEX)")
    assert run_ok(x, "counter_write exact_hits 0 10 1000") == (
        "this is the direct counter for table MyIngress.t_exact_multi\nexact_hits[0] has been updated")
    send(x, 2, frame)
    assert run_ok(x, "counter_read exact_hits 0").endswith("(packets=11, bytes=1080)")
    assert run_err(x, "counter_write exact_hits 9 1 1").splitlines()[-1].startswith(
        "Invalid counter operation (INVALID_INDEX)")


def test_register_read_write_reset(cli):
    x = cli("register_flow_state")
    run_ok(x, "register_write flow_packets 1 41")
    send(x, 0, ipv4_frame("10.0.0.1"))
    assert run_ok(x, "register_read flow_packets 1") == "flow_packets[1]= 42"
    assert run_ok(x, "register_read flow_packets").startswith("flow_packets= 0, 42, 0, ")
    run_ok(x, "register_reset flow_packets")
    assert run_ok(x, "register_read RegIngress.flow_packets 1") == "RegIngress.flow_packets[1]= 0"
    assert run_err(x, "register_read flow_packets 1024").startswith("Invalid register operation (INVALID_INDEX)")
    assert "does not fit in 32 bits" in run_err(x, "register_write flow_packets 0 0x100000000")
    run_ok(x, "register_write flow_last_seen 2 08:00:00:00:01:11")
    assert run_ok(x, "register_read flow_last_seen 2") == f"flow_last_seen[2]= {0x080000000111}"


def test_direct_meter_rates_in_units_per_microsecond(tables_cli):
    x = tables_cli
    run_ok(x, "table_add t_direct_meter set_res_colour 10.0.0.3 =>")

    def colours():
        out = []
        for _ in range(3):
            x.engine.send(2, ipv4_frame("10.0.0.3", tos=7), 10)
            x.engine.drain()
            [(_, f, _)] = x.engine.received()
            out.append(int.from_bytes(f[18:20], "big"))
        return out

    assert colours() == [0, 0, 0]
    # 0.001 packets/µs = 1000 packets/s; bursts of 1 and 2 packets: green, yellow, red.
    run_ok(x, "meter_set_rates dm 0 0.001:1 0.001:2")
    assert colours() == [0, 1, 2]
    assert run_err(x, "meter_set_rates dm 0 0.001:1") == "Error: Invalid number of rates, expected 2 but got 1"


def test_indirect_meter_rates(cli):
    x = cli("meter_color_marking")
    run_ok(x, "meter_set_rates class_meter 3 0.01:1500 0.02:3000", "meter_array_set_rates port_meter 0.5:10 1:20")
    assert run_err(x, "meter_set_rates class_meter 256 1:1 2:2").startswith("Invalid meter operation (INVALID_INDEX)")
    assert run_err(x, "meter_set_rates nometer 0 1:1 2:2") == "Error: Invalid meter name (nometer)"


def test_mirroring_sessions_clone_to_port_and_group(cli):
    x = cli("clone_sessions_mirror")
    run_ok(x, "table_add mirror_select mirror_plain 0&&&0 => 1")
    assert ports_of(send(x, 0, ipv4_frame())) == [1]  # no session: no clone
    run_ok(x, "mirroring_add 5 4")
    assert ports_of(send(x, 0, ipv4_frame())) == [1, 4]
    assert run_ok(x, "mirroring_get 5") == "MirroringSessionConfig(port=4, mgid=None)"
    run_ok(x, "mc_mgrp_create 7", "mc_node_create 0 5 6", "mc_node_associate 7 0", "mirroring_add_mc 5 7")
    assert run_ok(x, "mirroring_get 5") == "MirroringSessionConfig(port=None, mgid=7)"
    assert ports_of(send(x, 0, ipv4_frame())) == [1, 5, 6]
    run_ok(x, "mirroring_delete 5")
    assert ports_of(send(x, 0, ipv4_frame())) == [1]
    assert run_err(x, "mirroring_get 5").startswith("Invalid mirroring operation (SESSION_NOT_FOUND)")
    assert run_err(x, "mirroring_delete 5").startswith("Invalid mirroring operation (SESSION_NOT_FOUND)")


def test_multicast_groups_and_nodes_replicate(cli):
    x = cli("multicast_truncate")
    frame = ipv4_frame()  # untagged frames go to group 1
    assert send(x, 0, frame) == []
    assert run_ok(x, "mc_mgrp_create 1") == "Creating multicast group 1"
    assert run_ok(x, "mc_node_create 0 1 2 3") == (
        "Creating node with rid 0 , port map 1110 and lag map\nnode was created with handle 0")
    assert run_ok(x, "mc_node_associate 1 0") == "Associating node 0 to multicast group 1"
    assert ports_of(send(x, 0, frame)) == [1, 2, 3]
    assert ports_of(send(x, 2, frame)) == [1, 3]  # egress drops the copy back to the ingress port
    run_ok(x, "mc_node_create 9 4", "mc_node_associate 1 1", "mc_node_update 0 2")
    assert ports_of(send(x, 0, frame)) == [2, 4]
    assert x.engine.mc_group_get(1) == [(2, 0), (4, 9)]
    assert run_ok(x, "mc_dump") == "\n".join([
        "==========", "MC ENTRIES", "**********", "mgrp(1)",
        "  -> (L1h=0, rid=0) -> (ports=[2], lags=[])",
        "  -> (L1h=1, rid=9) -> (ports=[4], lags=[])",
        "==========", "LAGS", "None for this PRE type", "==========",
    ])
    assert run_err(x, "mc_node_associate 1 1").startswith("Invalid PRE operation (ERROR)")
    assert run_err(x, "mc_node_associate 2 1").startswith("Invalid PRE operation (INVALID_MGID)")
    assert run_err(x, "mc_node_update 7 1").startswith("Invalid PRE operation (INVALID_L1_HANDLE)")
    assert run_err(x, "mc_mgrp_create 1").startswith("Invalid PRE operation (INVALID_MGID)")
    run_ok(x, "mc_node_dissociate 1 0")
    assert ports_of(send(x, 0, frame)) == [4]
    run_ok(x, "mc_node_destroy 1")
    assert send(x, 0, frame) == []
    assert run_err(x, "mc_node_dissociate 1 1").startswith("Invalid PRE operation (INVALID_L1_HANDLE)")
    run_ok(x, "mc_node_associate 1 0", "mc_mgrp_destroy 1")
    assert send(x, 0, frame) == []
    assert "LAGs are not supported" in run_err(x, "mc_node_create 0 1 | 2")


def test_multicast_copies_carry_the_replication_id(cli):
    x = cli("multicast_truncate")
    run_ok(x, "table_add vlan_flood set_group 10 => 3", "table_add replica untag 7 =>",
           "mc_mgrp_create 3", "mc_node_create 7 1", "mc_node_create 8 2",
           "mc_node_associate 3 0", "mc_node_associate 3 1")
    tagged = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01") / Dot1Q(vlan=10) / IP() / UDP())
    out = dict(send(x, 0, tagged))
    assert out[1][12:14] == b"\x08\x00"  # rid 7: untagged
    assert out[2][12:14] == b"\x81\x00"  # rid 8: left tagged


def test_parser_value_set_add_and_clear(cli):
    x = cli("parser_value_set")
    tunnel = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x9999)) + bytes(32)
    run_ok(x, "table_add tunnel_exit to_port 0 => 3")
    assert ports_of(send(x, 1, tunnel)) == [0]
    assert run_ok(x, "show_pvs") == f"{'PvsParser.tunnel_ethertypes':30} [compressed bitwidth:16]"
    run_ok(x, "pvs_add tunnel_ethertypes 0x9999", "pvs_add tunnel_ethertypes 0x9999")  # BMv2: no error twice
    assert ports_of(send(x, 1, tunnel)) == [3]
    run_ok(x, "pvs_clear tunnel_ethertypes")
    assert ports_of(send(x, 1, tunnel)) == [0]
    assert "does not fit in 16 bits" in run_err(x, "pvs_add tunnel_ethertypes 0x10000")
    assert run_err(x, "pvs_add nothing 1") == "Error: Invalid parser value set name (nothing)"


def test_queue_depth_and_rate_commands(cli):
    x = cli("ipv4_lpm_router")
    e = x.engine
    run_ok(x, "set_queue_depth 64")
    assert e.port_config(5)["queue_limits"][0] == ("packets", 64)
    run_ok(x, "set_queue_depth 16 1")
    assert [e.port_config(p)["queue_limits"][0] for p in (1, 2)] == [("packets", 16), ("packets", 64)]
    run_ok(x, "set_queue_depth 8 1 2")
    assert e.port_config(1)["queue_limits"][:3] == [("packets", 16), ("packets", 16), ("packets", 8)]
    run_ok(x, "set_queue_rate 1000 2")
    assert e.port_config(2)["queue_rate_pps"][0] == 1000 and e.port_config(1)["queue_rate_pps"][0] == 0
    run_ok(x, "set_queue_rate 500")
    assert {e.port_config(p)["queue_rate_pps"][0] for p in (0, 1, 2, 511)} == {500}
    run_ok(x, "set_all_queue_rate 250 3", "set_all_queue_depth 4 1")
    assert e.port_config(9)["queue_rate_pps"][:4] == [500, 500, 500, 250]
    assert e.port_config(9)["queue_limits"][1] == ("packets", 4)
    assert run_err(x, "set_queue_rate 10 600").startswith("Invalid port operation")


def test_queue_rate_spaces_departures(cli):
    x = cli("ipv4_lpm_router")
    run_ok(x, "table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1", "set_queue_rate 1000 1")
    for _ in range(3):
        x.engine.send(0, ipv4_frame("10.0.1.1"), 0)
    x.engine.drain()
    times = [t for _, _, t in x.engine.received()]
    assert [b - a for a, b in zip(times, times[1:], strict=False)] == [1_000_000, 1_000_000]  # 1000 pps: 1 ms apart


def test_port_model_commands_and_show_ports(cli):
    x = cli("ipv4_lpm_router")
    e = x.engine
    assert run_ok(x, "set_port_rate 1 10M") == "port 1: rate 10000000 bit/s"
    assert run_ok(x, "set_port_delay 1 5000") == "port 1: delay 5000 ns"
    assert run_ok(x, "set_port_overhead 1 0") == "port 1: wire overhead 0 bytes per frame"
    assert run_ok(x, "set_port_threshold 1 alpha 1/2") == "port 1: threshold alpha 1/2"
    assert run_ok(x, "set_pool_size 65536") == "shared buffer pool: 65536 bytes"
    c = e.port_config(1)
    assert (c["rate_bps"], c["delay_ns"], c["wire_overhead_bytes"], c["threshold"]) == (
        10_000_000, 5000, 0, ("dynamic", 1, 2))
    run_ok(x, "set_port_threshold 2 30000", "set_port_threshold 3 25%")
    assert e.port_config(2)["threshold"] == ("static_bytes", 30000, None)
    assert e.port_config(3)["threshold"] == ("percent_of_pool", 25, None)
    lines = run_ok(x, "show_ports").splitlines()
    assert "rate (bit/s)" in lines[0] and "delay (ns)" in lines[0] and "occupancy (B)" in lines[0]
    assert [line.split()[0] for line in lines[2:]] == ["1", "2", "3"]
    assert lines[2].split() == ["1", "10000000", "0", "5000", "1", "sp", "-", "-", "alpha", "1/2", "0"]
    assert "30000 bytes" in run_ok(x, "show_ports 2")


def test_port_scheduler_sets_strict_priority_or_drr_quanta_per_queue(cli):
    x = cli("ipv4_lpm_router")
    e = x.engine
    assert run_err(x, "set_port_scheduler 1 drr 100 300") == (
        "Error: port 1 has 1 queue(s): give one quantum per queue, not 2\n"
        "Usage: set_port_scheduler <port> (strict | drr <quantum_bytes> ...)")
    e.configure_port(1, num_queues=3)
    assert run_ok(x, "set_port_scheduler 1 drr 15 435 1050") == (
        "port 1: deficit round robin, quanta 15 435 1050 bytes")
    c = e.port_config(1)
    assert c["scheduling"] == "drr" and c["drr_quantum_bytes"][:3] == [15, 435, 1050]
    assert run_ok(x, "show_ports 1").splitlines()[2].split()[5] == "drr:15/435/1050"
    assert run_ok(x, "set_port_scheduler 1 strict") == "port 1: strict priority"
    assert e.port_config(1)["scheduling"] == "strict_priority"
    assert run_ok(x, "show_ports 1").splitlines()[2].split()[5] == "sp"


def test_show_port_counters_lists_live_ports_queues_and_drops(cli):
    live = [{"port": 1, "iface": "s1-eth1", "rx_frames": 7, "kernel_drops": 2, "tx_dropped": 0}]
    base = cli("ipv4_lpm_router")
    x = Executor(base.engine, program_json("ipv4_lpm_router"), ports=[1, 2],
                 live_counters=lambda: live)
    run_ok(x, "table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1")
    assert ports_of(send(x, 2, ipv4_frame("10.0.1.1", size=100))) == [1]
    send(x, 2, ipv4_frame("10.9.9.9", size=100))  # no route: the program drops it
    lines = run_ok(x, "show_port_counters").splitlines()
    assert lines[0] == "port 1 (s1-eth1): rx_frames=7 kernel_drops=2 tx_dropped=0"
    assert lines[1] == ("port 1 queue 0: enqueued_pkts=1 enqueued_bytes=100 dequeued_pkts=1 "
                        "dequeued_bytes=100 dropped_pkts=0 dropped_bytes=0 max_depth_bytes=100")
    assert lines[2].startswith("port 2 queue 0: enqueued_pkts=0 ")
    assert lines[3] == ("switch: received=2 transmitted=1 dropped_by_program=1 dropped_by_tm=0 "
                        "dropped_priority_out_of_range=0 parser_errors=0")
    assert run_ok(x, "show_port_counters 2").splitlines()[0].startswith("port 2 queue 0:")
    # Without live ports (the STF runner, tests), only the engine's counters.
    assert run_ok(base, "show_port_counters 1").splitlines()[0].startswith("port 1 queue 0:")


def test_port_rate_and_delay_set_arrival_time(cli):
    x = cli("ipv4_lpm_router")
    run_ok(x, "table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1",
           "set_port_rate 1 1M", "set_port_overhead 1 0", "set_port_delay 1 5000")
    frame = ipv4_frame("10.0.1.1", size=125)  # 1000 bits: 1 ms at 1 Mbit/s
    x.engine.send(0, frame, 0)
    x.engine.drain()
    [(port, _, t_ns)] = x.engine.received()
    assert (port, t_ns) == (1, 1_000_000 + 5000)


def test_get_time_elapsed_in_microseconds(cli):
    x = cli("ipv4_lpm_router")
    x.engine.advance(5_000_000)
    assert run_ok(x, "get_time_elapsed") == "5000"


def test_help_lists_commands_and_usage(cli):
    x = cli("ipv4_lpm_router")
    text = run_ok(x, "help")
    assert text.startswith("Documented commands (type help <topic>):")
    assert "table_add" in text and "set_port_threshold" in text
    assert run_ok(x, "help set_queue_depth") == (
        "Set the depth in packets of every egress queue, of a port's queues, or of one priority queue: "
        "set_queue_depth <nb_pkts> [<egress_port> [<priority>]]")
    assert run_err(x, "help nothing") == "Error: No help on nothing"


def test_blank_and_comment_lines_succeed_silently(cli):
    x = cli("ipv4_lpm_router")
    assert run_ok(x, "") == ""
    assert run_ok(x, "# comment") == ""


def test_groups_made_by_another_client_are_not_wiped(cli):
    x = cli("multicast_truncate")
    x.engine.mc_group_set(4, [(1, 0), (2, 0)])  # as the P4Runtime server would
    assert run_err(x, "mc_mgrp_create 4").startswith("Invalid PRE operation (INVALID_MGID)")
    assert x.engine.mc_group_get(4) == [(1, 0), (2, 0)]
    assert run_err(x, "mc_mgrp_create 0").splitlines()[-1].startswith("Invalid PRE operation (INVALID_MGID)")


def test_pvs_remove_and_get(cli):
    x = cli("parser_value_set")
    tunnel = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x9999)) + bytes(32)
    run_ok(x, "table_add tunnel_exit to_port 0 => 3", "pvs_add tunnel_ethertypes 0x9999", "pvs_add tunnel_ethertypes 0x88b5")
    x.engine.value_set_add("PvsParser.tunnel_ethertypes", 0x9900, 0xFF00)  # as the P4Runtime server would
    assert run_ok(x, "pvs_get tunnel_ethertypes") == "9999\n88b5\n9900 &&& ff00"
    assert ports_of(send(x, 1, tunnel)) == [3]
    assert run_ok(x, "pvs_remove tunnel_ethertypes 0x9999") == ""
    assert run_ok(x, "pvs_remove tunnel_ethertypes 0x9999") == ""  # BMv2: no error for a missing value
    assert run_ok(x, "pvs_get tunnel_ethertypes") == "88b5\n9900 &&& ff00"
    assert ports_of(send(x, 1, tunnel)) == [3]  # still matched, by the masked value
    x.engine.value_set_remove("PvsParser.tunnel_ethertypes", 0x9900, 0xFF00)
    assert ports_of(send(x, 1, tunnel)) == [0]
    assert "does not fit in 16 bits" in run_err(x, "pvs_remove tunnel_ethertypes 0x10000")
    assert run_err(x, "pvs_get nothing") == "Error: Invalid parser value set name (nothing)"


def test_meter_get_rates_reads_back_indirect_and_direct_meters(cli, tables_cli):
    x = cli("meter_color_marking")
    assert run_ok(x, "meter_get_rates class_meter 3") == "WARNING: expected 2 rates but only received 0"
    run_ok(x, "meter_set_rates class_meter 3 0.01:1500 0.02:3000")
    assert run_ok(x, "meter_get_rates class_meter 3") == (
        "0: info rate = 0.01, burst size = 1500\n1: info rate = 0.02, burst size = 3000")
    assert run_err(x, "meter_get_rates class_meter 256").startswith("Invalid meter operation (INVALID_INDEX)")
    t = tables_cli
    run_ok(t, "table_add t_direct_meter set_res_colour 10.0.0.3 =>", "meter_set_rates dm 0 0.001:1 0.5:2")
    assert run_ok(t, "meter_get_rates dm 0") == (
        "0: info rate = 0.001, burst size = 1\n1: info rate = 0.5, burst size = 2")
    assert run_err(t, "meter_get_rates dm 7").startswith("Invalid meter operation (INVALID_INDEX)")


def test_mc_dump_shows_groups_of_every_client(cli):
    x = cli("multicast_truncate")
    run_ok(x, "mc_mgrp_create 1", "mc_node_create 0 1 2", "mc_node_create 5 3", "mc_node_associate 1 0",
           "mc_node_associate 1 1")
    x.engine.mc_group_set(4, [(1, 0), (2, 0), (6, 9)])  # as the P4Runtime server would
    assert run_ok(x, "mc_dump") == "\n".join([
        "==========", "MC ENTRIES",
        "**********", "mgrp(1)",
        "  -> (L1h=0, rid=0) -> (ports=[1, 2], lags=[])",
        "  -> (L1h=1, rid=5) -> (ports=[3], lags=[])",
        "**********", "mgrp(4)",
        "  -> (L1h=-, rid=0) -> (ports=[1, 2], lags=[])",
        "  -> (L1h=-, rid=9) -> (ports=[6], lags=[])",
        "==========", "LAGS", "None for this PRE type", "==========",
    ])
    # Group 1 rewritten by the other client: shown as the engine has it.
    x.engine.mc_group_set(1, [(7, 2)])
    assert "mgrp(1)\n  -> (L1h=-, rid=2) -> (ports=[7], lags=[])" in run_ok(x, "mc_dump")
    x.engine.mc_group_delete(4)
    assert "mgrp(4)" not in run_ok(x, "mc_dump")
