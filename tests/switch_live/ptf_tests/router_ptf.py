"""PTF tests of tests/p4/ipv4_lpm_router.p4, in the p4lang tutorials' convention (their
exercises/basic/ptf): test parameters `grpcaddr`, `p4info` (text) and `config` (BMv2 JSON);
setUp connects as primary and installs the pipeline over P4Runtime wrapped in PI's
`p4.tmp.P4DeviceConfig`, as the tutorials' p4runtime_lib sends it; each test sends frames
into switch ports and verifies what comes out of which port.

Run by ../test_tutorials_ptf.py through the `ptf` command (not collected by pytest).
"""

from pathlib import Path

import ptf
import ptf.testutils as tu
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.tmp import p4config_pb2
from ptf.base_tests import BaseTest
from scapy.layers.inet import IP

from bufferlab.controller import entities
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.p4info import P4InfoIndex

DEVICE_ID = 0
ROUTER_MAC = "00:00:0a:00:00:fe"
HOST_MAC = "08:00:00:00:01:11"


class RouterTest(BaseTest):
    """Primary connection and a freshly installed pipeline (empty tables) for every test."""

    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.p4info = text_format.Parse(Path(tu.test_param_get("p4info")).read_text(),
                                        p4info_pb2.P4Info())
        self.index = P4InfoIndex(self.p4info)
        self.device_config = p4config_pb2.P4DeviceConfig(
            reassign=True, device_data=Path(tu.test_param_get("config")).read_bytes(),
        ).SerializeToString()
        self.switch = SwitchConnection(tu.test_param_get("grpcaddr"), DEVICE_ID)
        self.assertTrue(self.switch.connect(), "not the primary client")
        self.switch.set_pipeline(self.p4info, self.device_config)

    def tearDown(self):
        self.switch.close()
        BaseTest.tearDown(self)

    def add_route(self, prefix: str, prefix_len: int, next_hop_mac: str, port: int):
        self.switch.insert(entity(entities.table_entry(
            self.index, "RouterIngress.ipv4_lpm", match={"hdr.ipv4.dstAddr": (prefix, prefix_len)},
            action_name="RouterIngress.ipv4_forward",
            params={"dstAddr": next_hop_mac, "port": port})))


def to_router(ip_dst: str, ttl: int = 64):
    return tu.simple_tcp_packet(eth_dst=ROUTER_MAC, eth_src=HOST_MAC, ip_dst=ip_dst, ip_ttl=ttl)


def routed(ip_dst: str, next_hop_mac: str, ttl: int = 63):
    """What the router sends on: MACs rewritten, TTL one less, checksum recomputed."""
    return tu.simple_tcp_packet(eth_dst=next_hop_mac, eth_src=ROUTER_MAC, ip_dst=ip_dst,
                                ip_ttl=ttl)


class PipelineReadsBackWrappedTest(RouterTest):
    """The switch keeps the config as it was sent: still wrapped."""

    def runTest(self):
        config = self.switch.get_pipeline()
        self.assertEqual(config.p4_device_config, self.device_config)
        self.assertEqual(config.p4info, self.p4info)


class NoRouteDropsTest(RouterTest):
    """An empty ipv4_lpm table drops everything (its default action)."""

    def runTest(self):
        tu.send_packet(self, 1, to_router("10.0.1.1"))
        tu.verify_no_other_packets(self)


class LongestPrefixWinsTest(RouterTest):
    """Of two matching routes the longer prefix forwards; the shorter one takes the rest."""

    def runTest(self):
        self.add_route("10.0.0.0", 16, "08:00:00:00:00:16", 1)
        self.add_route("10.0.1.0", 24, "08:00:00:00:00:24", 2)
        tu.send_packet(self, 0, to_router("10.0.1.99"))
        tu.verify_packets(self, routed("10.0.1.99", "08:00:00:00:00:24"), [2])
        tu.send_packet(self, 3, to_router("10.0.7.7", ttl=10))
        tu.verify_packets(self, routed("10.0.7.7", "08:00:00:00:00:16", ttl=9), [1])


class BadChecksumDropsTest(RouterTest):
    """A frame whose IPv4 header checksum is wrong is dropped even with a route."""

    def runTest(self):
        self.add_route("10.0.1.0", 24, HOST_MAC, 2)
        good = to_router("10.0.1.5")
        bad = good.copy()
        bad[IP].chksum = good.__class__(bytes(good))[IP].chksum ^ 0x0101
        tu.send_packet(self, 1, bad)
        tu.verify_no_other_packets(self)
        tu.send_packet(self, 1, good)
        tu.verify_packets(self, routed("10.0.1.5", HOST_MAC), [2])


class NonIpv4DropsTest(RouterTest):
    """ARP is not routed: the program drops every frame without an IPv4 header."""

    def runTest(self):
        self.add_route("10.0.1.0", 24, HOST_MAC, 2)
        tu.send_packet(self, 0, tu.simple_arp_packet(ip_tgt="10.0.1.1"))
        tu.verify_no_other_packets(self)
