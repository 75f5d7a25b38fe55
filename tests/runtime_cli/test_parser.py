"""The command parser: every command's syntax, its argument values, and its errors."""

import pytest

from bufferlab.switch.runtime_cli import CommandError, Key, Number, parse_command
from bufferlab.switch.runtime_cli.commands import SPECS, parse_key, parse_number


def args(line: str) -> dict:
    cmd = parse_command(line)
    assert cmd is not None
    return cmd.args


def error(line: str) -> str:
    with pytest.raises(CommandError) as e:
        parse_command(line)
    return str(e.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10), ("0x0a", 10), ("0b101", 5), ("10.0.1.1", 0x0A000101),
        ("08:00:00:00:01:11", 0x080000000111), ("08-00-00-00-01-11", 0x080000000111),
        ("a:b:c:d:e:f", 0x0A0B0C0D0E0F), ("::1", 1), ("2001:db8::1", 0x20010DB8 << 96 | 1),
    ],
)
def test_numbers_decimal_hex_ipv4_mac_ipv6(text, value):
    assert parse_number(text) == Number(value, text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10.0.1.300", "Invalid IPv4 address"), ("zz", "could not cast to integer"),
        ("-3", "non-negative"), ("08:00:00:00:01:zz", "Invalid MAC address"), ("1::x", "Invalid IPv6"),
    ],
)
def test_bad_numbers_are_named(text, message):
    with pytest.raises(CommandError, match=message):
        parse_number(text)


def test_key_forms():
    assert parse_key("10.0.1.0/24") == Key("lpm", Number(0x0A000100, "10.0.1.0"), Number(24, "24"), "10.0.1.0/24")
    assert parse_key("0x0a000000&&&0xff000000").form == "ternary"
    assert parse_key("0x0a000000&&&0xff000000").b.value == 0xFF000000
    assert parse_key("1024->2047").form == "range"
    assert (parse_key("1024->2047").a.value, parse_key("1024->2047").b.value) == (1024, 2047)
    assert parse_key("*") == Key("any", None, None, "*")
    assert parse_key("7") == Key("value", Number(7, "7"), None, "7")


def test_table_add_splits_keys_and_params_at_arrow():
    a = args("table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1")
    assert a["table"] == "MyIngress.ipv4_lpm" and a["action"] == "MyIngress.ipv4_forward"
    assert [k.form for k in a["keys"]] == ["lpm"]
    assert [p.value for p in a["params"]] == [0x080000000111, 1]


def test_table_add_keeps_trailing_priority_with_params():
    a = args("table_add acl permit 10.0.0.0&&&0xff000000 * => 2 10")
    assert [k.form for k in a["keys"]] == ["ternary", "any"]
    assert [p.value for p in a["params"]] == [2, 10]


def test_table_add_without_params_or_keys():
    a = args("table_add t NoAction 5 =>")
    assert a["params"] == [] and [k.a.value for k in a["keys"]] == [5]
    assert args("table_add t NoAction =>")["keys"] == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("table_add t a 1 2", "Missing '=>'"),
        ("table_add t", "Insufficient number of args"),
        ("table_add t a 10.0.0.0/x => 1", "Invalid match key: Bad format for prefix length"),
        ("table_add t a 1 => zz", "Invalid runtime data"),
    ],
)
def test_table_add_errors(line, message):
    assert message in error(line)
    assert "Usage: table_add <table name> <action name> <match fields> => <action parameters> [priority]" in error(line)


def test_table_modify_set_default_and_members():
    assert args("table_modify t a 3 => 1 2") == {"owner": "t", "action": "a", "handle": 3,
                                                 "params": [Number(1, "1"), Number(2, "2")]}
    assert args("table_modify t a 3 1")["params"] == [Number(1, "1")]
    assert args("table_set_default t drop") == {"owner": "t", "action": "drop", "params": []}
    assert args("act_prof_create_member p a 0x1 2")["params"] == [Number(1, "0x1"), Number(2, "2")]
    assert args("act_prof_modify_member p a 4 9")["handle"] == 4
    assert "Bad format for entry handle" in error("table_modify t a x 1")
    assert "Insufficient number of args" in error("table_set_default t")


def test_indirect_adds():
    a = args("table_indirect_add t 10.0.0.1 => 3")
    assert (a["handle"], a["priority"], a["keys"][0].a.value) == (3, None, 0x0A000001)
    a = args("table_indirect_add_with_group t 10.0.0.0/8 => 1 7")
    assert (a["handle"], a["priority"]) == (1, 7)
    assert "Bad format for group handle" in error("table_indirect_add_with_group t 1 => g")
    assert "one handle and an optional priority" in error("table_indirect_add t 1 => 1 2 3")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("table_delete t 3", {"table_name": "t", "entry_handle": 3}),
        ("table_dump_entry t 0x10", {"table_name": "t", "entry_handle": 16}),
        ("counter_read c 2", {"name": "c", "index": 2}),
        ("counter_write c 2 10 1000", {"name": "c", "index": 2, "packets": 10, "bytes": 1000}),
        ("register_read r", {"name": "r", "index": None}),
        ("register_write r 1 10.0.0.1", {"name": "r", "index": 1, "value": Number(0x0A000001, "10.0.0.1")}),
        ("meter_set_rates m 1 0.5:10 1:20", {"name": "m", "index": 1, "rates": [(0.5, 10), (1.0, 20)]}),
        ("meter_array_set_rates m 0.001:1 0.002:2", {"name": "m", "rates": [(0.001, 1), (0.002, 2)]}),
        ("mirroring_add 5 3", {"mirror_id": 5, "egress_port": 3}),
        ("mirroring_add_mc 5 7", {"mirror_id": 5, "mgrp": 7}),
        ("mirroring_get 5", {"mirror_id": 5}),
        ("mc_mgrp_create 1", {"group_id": 1}),
        ("mc_node_create 0 3 1 2", {"rid": 0, "ports": [1, 2, 3], "lags": []}),
        ("mc_node_create 4 1 | 2", {"rid": 4, "ports": [1], "lags": [2]}),
        ("mc_node_update 0 5", {"node_handle": 0, "ports": [5], "lags": []}),
        ("mc_node_associate 1 0", {"group_handle": 1, "node_handle": 0}),
        ("set_queue_depth 64", {"nb_pkts": 64, "egress_port": None, "priority": None}),
        ("set_queue_rate 1000 2 1", {"rate_pps": 1000, "egress_port": 2, "priority": 1}),
        ("set_all_queue_rate 1000 3", {"rate_pps": 1000, "priority": 3}),
        ("set_port_rate 1 10M", {"port": 1, "bits_per_s": 10_000_000}),
        ("set_port_rate 1 2.5G", {"port": 1, "bits_per_s": 2_500_000_000}),
        ("set_port_rate 1 1000000", {"port": 1, "bits_per_s": 1_000_000}),
        ("set_port_delay 1 5000", {"port": 1, "delay_ns": 5000}),
        ("set_port_overhead 1 0", {"port": 1, "overhead_bytes": 0}),
        ("set_pool_size 65536", {"pool_bytes": 65536}),
        ("set_port_threshold 1 30000", {"port": 1, "threshold": ("static_bytes", 30000, None)}),
        ("set_port_threshold 1 50%", {"port": 1, "threshold": ("percent_of_pool", 50, None)}),
        ("set_port_threshold 1 alpha 1/4", {"port": 1, "threshold": ("dynamic", 1, 4)}),
        ("set_port_threshold 1 alpha 2", {"port": 1, "threshold": ("dynamic", 2, 1)}),
        ("set_port_threshold 1 none", {"port": 1, "threshold": ("none", None, None)}),
        ("set_port_scheduler 2 strict", {"port": 2, "quantum_bytes": None}),
        ("set_port_scheduler 2 drr 15 435 1050", {"port": 2, "quantum_bytes": [15, 435, 1050]}),
        ("show_ports", {"port": []}),
        ("show_ports 2 1", {"port": [2, 1]}),
        ("show_port_counters", {"port": []}),
        ("show_port_counters 2", {"port": [2]}),
        ("pvs_add s 0x8847", {"pvs_name": "s", "value": Number(0x8847, "0x8847")}),
        ("help", {"command": None}),
        ("help table_add", {"command": "table_add"}),
        ("get_time_elapsed", {}),
    ],
)
def test_command_arguments(line, expected):
    assert args(line) == expected


@pytest.mark.parametrize(
    ("line", "message", "usage"),
    [
        ("mirroring_add 5", "Wrong number of args, expected 2 but got 1", "mirroring_add <mirror_id> <egress_port>"),
        ("mirroring_add 5 3 4", "Wrong number of args, expected 2 but got 3", "mirroring_add <mirror_id> <egress_port>"),
        ("mirroring_add x 3", "Bad format for mirror_id, expected integer", "mirroring_add"),
        ("set_queue_rate", "Insufficient number of args", "set_queue_rate <rate_pps> [<egress_port> [<priority>]]"),
        ("set_queue_rate 10 1 2 3", "expected at most 3 but got 4", "set_queue_rate"),
        ("set_queue_depth many", "Bad format for nb_pkts", "set_queue_depth <nb_pkts>"),
        ("set_port_rate 1 fast", "not a rate in bit/s", "set_port_rate <port> <bits_per_s>"),
        ("set_port_delay 1 -5", "Bad format for delay_ns", "set_port_delay <port> <delay_ns>"),
        ("set_port_threshold 1 150%", "percent of pool must be 1..100", "set_port_threshold"),
        ("set_port_threshold 1 alpha 1/0", "alpha denominator must be at least 1", "set_port_threshold"),
        ("set_port_scheduler 2", "Insufficient number of args, expected at least 2 but got 1",
         "set_port_scheduler <port> (strict | drr <quantum_bytes> ...)"),
        ("set_port_scheduler 2 wfq 1 2", "Unknown scheduling 'wfq'", "set_port_scheduler"),
        ("set_port_scheduler 2 strict 5", "strict takes no quanta, got 1", "set_port_scheduler"),
        ("set_port_scheduler 2 drr", "one quantum per queue (1 to 8), got 0", "set_port_scheduler"),
        ("set_port_scheduler 2 drr 1 2 3 4 5 6 7 8 9", "got 9", "set_port_scheduler"),
        ("set_port_scheduler 2 drr 100 0", "at least 1 byte (queue 1 has 0)", "set_port_scheduler"),
        ("set_port_scheduler 2 drr 100 lots", "Bad format for quantum_bytes", "set_port_scheduler"),
        ("meter_set_rates m 0 fast", "Error while parsing rates", "meter_set_rates"),
        ("mc_node_create 0 1 1", "Found duplicate port number '1'", "mc_node_create <rid>"),
        ("counter_write c 0 1", "Wrong number of args, expected 4 but got 3", "counter_write <name> <index> <packets> <bytes>"),
        ("register_read", "Insufficient number of args", "register_read <name> [<index>]"),
        ("show_tables now", "Wrong number of args, expected 0 but got 1", "show_tables"),
    ],
)
def test_errors_name_the_problem_and_show_usage(line, message, usage):
    text = error(line)
    assert text.startswith("Error: ")
    assert message in text
    assert f"Usage: {usage}" in text


def test_unknown_command():
    assert error("tabel_add t a 1 => 2") == "Error: Unknown command 'tabel_add' (type 'help' for the list of commands)"


def test_blank_lines_and_comments_parse_to_nothing():
    assert parse_command("") is None
    assert parse_command("   ") is None
    assert parse_command("# set up s1") is None
    assert parse_command("mirroring_add 5 3  # to the monitor").args == {"mirror_id": 5, "egress_port": 3}


def test_every_command_has_help_naming_its_usage():
    for name, spec in SPECS.items():
        assert spec.help, name
        assert spec.usage.startswith(name)


@pytest.mark.parametrize("name", ["set_queue_depth", "set_all_queue_depth", "set_port_overhead", "set_pool_size",
                                  "set_port_scheduler"])
def test_help_says_the_unit(name):
    assert any(u in SPECS[name].help + SPECS[name].usage for u in ("packets", "bytes", "pkts"))


def test_rates_help_says_units():
    assert "packets per second" in SPECS["set_queue_rate"].help
    assert "bit/s" in SPECS["set_port_rate"].help
    assert "nanoseconds" in SPECS["set_port_delay"].help
    assert "microsecond" in SPECS["meter_set_rates"].help
    assert "microseconds" in SPECS["get_time_elapsed"].help
