"""The live trials' traffic tools: iperf3 and ping command lines, and their output parsed."""

import json
import math

import pytest

from bufferlab.experiments.common import traffic_tools


def test_command_lines():
    assert traffic_tools.iperf_client_argv("10.0.1.2", 5203, 40, 30.2, "cubic", 8192, 10) == [
        "iperf3", "--client", "10.0.1.2", "--port", "5203", "--tos", "40", "--time", "31",
        "--congestion", "cubic", "--json", "--window", "8192", "--parallel", "10"]
    assert "--window" not in traffic_tools.iperf_client_argv("h", 1, 0, 5, "reno")
    assert traffic_tools.iperf_server_argv(5201) == ["iperf3", "--server", "--port", "5201",
                                                "--one-off"]
    assert traffic_tools.ping_argv("10.0.1.2", 32, 100, 1.0) == [
        "ping", "-n", "-Q", "32", "-c", "100", "-i", "1", "10.0.1.2"]


def test_iperf_report_is_parsed_and_its_errors_named():
    report = {"end": {"sum_sent": {"bytes": 1000, "retransmits": 3},
                      "sum_received": {"bytes": 900, "seconds": 2.0}}}
    result = traffic_tools.parse_iperf_json(json.dumps(report))
    assert (result.sent_bytes, result.received_bytes, result.retransmits) == (1000, 900, 3)
    assert result.received_bps == 3600.0
    with pytest.raises(ValueError, match="iperf3: unable to connect to server"):
        traffic_tools.parse_iperf_json('{"error": "unable to connect to server"}')
    with pytest.raises(ValueError, match="no JSON report"):
        traffic_tools.parse_iperf_json("iperf3: error")
    with pytest.raises(ValueError, match="without end.sum_sent"):
        traffic_tools.parse_iperf_json('{"end": {}}')


PING_OUTPUT = """PING 10.0.1.2 (10.0.1.2) 56(84) bytes of data.
64 bytes from 10.0.1.2: icmp_seq=1 ttl=64 time=0.200 ms
64 bytes from 10.0.1.2: icmp_seq=3 ttl=64 time=0.400 ms
64 bytes from 10.0.1.2: icmp_seq=2 ttl=64 time=0.600 ms

--- 10.0.1.2 ping statistics ---
4 packets transmitted, 3 received, 25% packet loss, time 3004ms
rtt min/avg/max/mdev = 0.200/0.400/0.600/0.163 ms
"""


def test_ping_output_is_parsed_with_ping_s_own_statistics():
    result = traffic_tools.parse_ping(PING_OUTPUT)
    assert (result.transmitted, result.received) == (4, 3)
    assert result.rtts_ms == (0.2, 0.6, 0.4)  # by sequence number
    lo, avg, hi, mdev = result.stats_ms()
    assert (lo, hi) == (0.2, 0.6) and avg == pytest.approx(0.4)
    assert mdev == pytest.approx(0.163, abs=5e-4)  # ping's own figure
    assert result.median_ms() == 0.4
    assert all(math.isnan(v) for v in traffic_tools.PingResult(3, 0, ()).stats_ms())
    with pytest.raises(ValueError, match="no summary"):
        traffic_tools.parse_ping("ping: connect: Network is unreachable")
