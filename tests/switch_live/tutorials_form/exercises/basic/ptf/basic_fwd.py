"""PTF tests of the tutorials-form basic exercise (../../../README.md): each test installs the
pipeline over P4Runtime in PI's P4DeviceConfig wrapper (utils/p4rt.py, in the place of the
tutorials' p4runtime_lib), writes its routes, sends frames into switch ports and checks what
leaves which port."""

from pathlib import Path

import ptf
import ptf.testutils as tu
from p4rt import Connection, P4Info
from ptf.base_tests import BaseTest

HOST_MAC = "ee:cd:00:7e:70:00"
ROUTER_MAC = "ee:30:ca:9d:1e:00"
TABLE = "RouterIngress.ipv4_lpm"


class BasicTest(BaseTest):
    """A freshly installed pipeline (empty table) and a primary connection per test."""

    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.p4info = P4Info(tu.test_param_get("p4info"))
        self.switch = Connection(tu.test_param_get("grpcaddr"), 0)
        self.switch.become_primary()
        self.switch.set_pipeline(self.p4info, Path(tu.test_param_get("config")))

    def tearDown(self):
        self.switch.close()
        BaseTest.tearDown(self)

    def route(self, prefix, prefix_len, mac, port):
        self.switch.write(self.p4info.table_entry({
            "table": TABLE, "match": {"hdr.ipv4.dstAddr": [prefix, prefix_len]},
            "action_name": "RouterIngress.ipv4_forward",
            "action_params": {"dstAddr": mac, "port": port}}))


class DropWithoutRoutes(BasicTest):
    def runTest(self):
        tu.send_packet(self, 1, tu.simple_tcp_packet(eth_src=HOST_MAC, eth_dst=ROUTER_MAC,
                                                     ip_dst="10.0.1.1"))
        tu.verify_no_other_packets(self)


class ForwardByLongestPrefix(BasicTest):
    def runTest(self):
        self.route("10.0.0.0", 16, "08:00:00:00:11:11", 1)
        self.route("10.0.2.0", 24, "08:00:00:00:02:22", 2)
        tu.send_packet(self, 0, tu.simple_tcp_packet(eth_src=HOST_MAC, eth_dst=ROUTER_MAC,
                                                     ip_dst="10.0.2.7", ip_ttl=64))
        tu.verify_packets(self, tu.simple_tcp_packet(eth_src=ROUTER_MAC,
                                                     eth_dst="08:00:00:00:02:22",
                                                     ip_dst="10.0.2.7", ip_ttl=63), [2])
