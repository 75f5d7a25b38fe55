"""Where a live trial's frames were lost: switch and veth counters read back and compared."""

import json
import sys
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bufferlab.experiments.common import accounting
from bufferlab.switch import Engine
from bufferlab.switch.runtime_cli import Executor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime_cli"))
from cli_helpers import program_json  # noqa: E402


def _counters(live_drops: int = 0, program_drops: int = 0) -> str:
    """What a switch's `show_port_counters` prints (through a real executor)."""
    text = program_json("ipv4_lpm_router")
    live = [{"port": 1, "iface": "s18-eth1", "rx_frames": 10, "kernel_drops": live_drops}]
    x = Executor(Engine(text), text, ports=[1, 2], live_counters=lambda: live)
    for _ in range(program_drops):  # no route: the program drops the frame
        x.engine.send(2, bytes(Ether() / IP(dst="10.9.9.9") / UDP()), x.engine.now())
    x.engine.drain()
    return x.execute("show_port_counters").text


def test_switch_counters_are_read_back_from_the_runtime_cli():
    counters = accounting.parse_switch_counters(_counters(live_drops=2, program_drops=1))
    assert counters.ports == {1: {"rx_frames": 10, "kernel_drops": 2}}
    assert sorted(counters.queues) == [(1, 0), (2, 0)]
    assert counters.switch["dropped_by_program"] == 1
    with pytest.raises(ValueError, match="not a show_port_counters line"):
        accounting.parse_switch_counters("Error: Unknown command")
    with pytest.raises(ValueError, match="no switch line"):
        accounting.parse_switch_counters("port 1 queue 0: dropped_pkts=0")


def test_link_drops_from_ip_json():
    text = json.dumps([{"ifname": "eth0", "stats64": {"rx": {"dropped": 4, "packets": 9},
                                                      "tx": {"dropped": 1}}}])
    assert accounting.link_drops(text) == {"rx_dropped": 4, "tx_dropped": 1}


def _snapshot(live_drops=0, program_drops=0, admission=0, veth_drops=0):
    return accounting.Snapshot(
        accounting.parse_switch_counters(_counters(live_drops, program_drops)),
        {"bl-snd eth0": {"rx_dropped": 0, "tx_dropped": veth_drops}}, admission)


def test_accounting_allows_admission_drops_only():
    clean = accounting.account(_snapshot(), _snapshot(program_drops=2, admission=2))
    assert clean.valid and clean.admission_drops == 2
    assert clean.describe() == "valid: 2 frames dropped by admission, nothing else"
    lossy = accounting.account(_snapshot(), _snapshot(live_drops=3, program_drops=2,
                                                      admission=1, veth_drops=5),
                               capture_drops=7)
    assert not lossy.valid
    assert lossy.losses == {"switch port 1 kernel_drops": 3,
                            "P4 program drops other than admission": 1,
                            "bl-snd eth0 tx_dropped": 5}
    assert lossy.describe() == (
        "INVALID: frames lost outside admission: switch port 1 kernel_drops 3, P4 program "
        "drops other than admission 1, bl-snd eth0 tx_dropped 5, capture (tcpdump) 7")
    assert not accounting.account(_snapshot(), _snapshot(), capture_drops=1).valid
