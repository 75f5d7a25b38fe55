"""The switch command line: simple_switch_grpc's, plus the port model for bufferlab-switch only."""

from bufferlab.mininet.switch import SwitchOptions, switch_argv
from bufferlab.mininet.topology import PortModel

OPTIONS = SwitchOptions(
    device_id=0,
    grpc_port=50051,
    thrift_port=9090,
    json_path="build/buffer_switch.json",
    cpu_port=255,
    priority_queues=8,
    pool_bytes=1_000_000,
    pcap_dir="pcaps",
    port_models={2: PortModel(rate_bps=100_000_000, delay_ns=50_000), 1: PortModel()},
)


def test_bufferlab_switch_gets_the_tutorials_command_line_and_the_port_model():
    argv = switch_argv("/work/.venv/bin/bufferlab-switch", {2: "s1-eth2", 1: "s1-eth1"}, OPTIONS)
    assert argv == [
        "/work/.venv/bin/bufferlab-switch",
        "-i", "1@s1-eth1", "-i", "2@s1-eth2",
        "--pcap", "pcaps", "--device-id", "0", "build/buffer_switch.json", "--log-console",
        "--thrift-port", "9090", "--",
        "--grpc-server-addr", "127.0.0.1:50051", "--cpu-port", "255", "--priority-queues", "8",
        "--pool-bytes", "1000000",
        "--port-overhead", "1:24",
        "--port-rate", "2:100000000", "--port-delay", "2:50000", "--port-overhead", "2:24",
    ]


def test_real_bmv2_gets_no_port_model_options_and_no_p4_without_a_program():
    options = SwitchOptions(device_id=1, grpc_port=50052, thrift_port=9091,
                            port_models={1: PortModel(rate_bps=10)}, log_console=False)
    argv = switch_argv("simple_switch_grpc", {1: "s2-eth1"}, options)
    assert argv == [
        "simple_switch_grpc", "-i", "1@s2-eth1", "--device-id", "1", "--no-p4",
        "--thrift-port", "9091", "--", "--grpc-server-addr", "127.0.0.1:50052",
    ]
