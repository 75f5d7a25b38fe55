"""bufferlab-switch's command line: simple_switch_grpc's flags as the tutorials and Mininet
write them, the port model after `--`, and exit status 2 with a message for anything else."""

from __future__ import annotations

import pytest

from bufferlab.mininet.switch import SwitchOptions, switch_argv
from bufferlab.mininet.topology import PortModel as TopologyPortModel
from bufferlab.switch.cli import PortModel, parse_args


def test_the_tutorials_command_line():
    config = parse_args(
        "-i 1@s1-eth1 -i 2@s1-eth2 --pcap pcaps --nanolog ipc:///tmp/bm-0-log.ipc "
        "--device-id 0 build/ecn.json --log-console --thrift-port 9090 "
        "-- --grpc-server-addr 0.0.0.0:50051 --cpu-port 255 --priority-queues 8".split())
    assert config.interfaces == {1: "s1-eth1", 2: "s1-eth2"}
    assert config.pcap_dir == "pcaps"
    assert config.json_path == "build/ecn.json"
    assert (config.device_id, config.thrift_port) == (0, 9090)
    assert config.log_console and config.log_file is None
    assert config.grpc_address == "0.0.0.0:50051"
    assert (config.cpu_port, config.priority_queues) == (255, 8)
    assert config.ignored == ["--nanolog"]


def test_the_tutorials_ptf_command_line():
    # exercises/basic/runptf.sh's switch, plus the --debugger a debugger-enabled Mininet adds.
    config = parse_args(
        "--log-file ss-log --log-flush --dump-packet-data 10000 -i 0@veth0 -i 1@veth2 "
        "--no-p4 --debugger".split())
    assert config.json_path is None and config.interfaces == {0: "veth0", 1: "veth2"}
    assert config.log_file == "ss-log" and not config.log_console
    assert config.ignored == ["--log-flush", "--dump-packet-data", "--debugger"]


def test_defaults_and_no_p4():
    config = parse_args(["--no-p4", "-i", "0@veth0"])
    assert config.json_path is None
    assert config.grpc_address == "127.0.0.1:9559"
    assert config.thrift_port == 9090
    assert config.cpu_port is None and config.pcap_dir is None
    assert config.log_level == "info" and config.drop_port == 511


def test_bmv2s_names_default_to_bmv2s_trace_level():
    # BMv2 logs every packet by default (-L trace): the tutorials' logs/s1.log relies on it.
    for prog in ("/venv/compat/bin/simple_switch_grpc", "simple_switch"):
        assert parse_args(["x.json", "--log-console"], prog).log_level == "trace"
    assert parse_args(["x.json"], "/venv/bin/bufferlab-switch").log_level == "info"
    assert parse_args(["x.json", "-L", "warn"], "simple_switch_grpc").log_level == "warn"


def test_pcap_without_a_directory_means_the_current_one():
    assert parse_args(["x.json", "--pcap"]).pcap_dir == "."


def test_mininet_command_line_with_the_port_model():
    options = SwitchOptions(device_id=2, grpc_port=50053, thrift_port=9092, json_path="b/f.json",
                            cpu_port=255, priority_queues=4, pool_bytes=65536, pcap_dir="pcaps",
                            port_models={1: TopologyPortModel(10**8, 50_000, 24),
                                         2: TopologyPortModel(0, 0, 0)})
    argv = switch_argv("bufferlab-switch", {1: "s3-eth1", 2: "s3-eth2"}, options)
    config = parse_args(argv[1:])
    assert config.interfaces == {1: "s3-eth1", 2: "s3-eth2"}
    assert config.grpc_address == "127.0.0.1:50053"
    assert config.pool_bytes == 65536 and config.priority_queues == 4
    assert config.port_models == {
        1: PortModel(rate_bps=10**8, delay_ns=50_000, wire_overhead_bytes=24),
        2: PortModel(wire_overhead_bytes=0),
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["x.json", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["x.json", "--", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        ([], "give a BMv2 JSON file or --no-p4"),
        (["x.json", "--no-p4"], "mutually exclusive"),
        (["x.json", "-i", "eth0"], "write PORT@IFACE"),
        (["x.json", "-i", "600@eth0"], "ports are 0..511"),
        (["x.json", "-i", "1@a", "-i", "1@b"], "port 1 is already a"),
        (["x.json", "--log-console", "--log-file", "f"], "mutually exclusive"),
        (["x.json", "-L", "loud"], "invalid choice: 'loud'"),
        (["x.json", "-i", "1@a", "--", "--cpu-port", "1"], "also interface a"),
        (["x.json", "--", "--cpu-port", "0"], "must not be 0"),
        (["x.json", "--", "--priority-queues", "9"], "1..8 queues"),
        (["x.json", "--", "--port-rate", "1=5"], "write PORT:VALUE"),
        (["x.json", "--", "--port-delay", "1:-5"], "is negative"),
        (["x.json", "--", "--grpc-server-addr", "50051"], "write HOST:PORT"),
    ],
)
def test_bad_command_lines_exit_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
