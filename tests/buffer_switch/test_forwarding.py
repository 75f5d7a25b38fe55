"""buffer_switch.p4 forwarding: L2 unicast and flooding, IPv4 LPM routing (port MAC, TTL,
checksum), and the ingress discards with their reasons."""

from buffer_switch_helpers import H1, H2, H3, SWITCH_ID, kinds, on_port, outputs, udp_frame
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers

# ingress_discards reasons (p4src/README.md "Counters")
RUNT, MAC_CONTROL, BAD_CHECKSUM, TTL_EXPIRED, FORWARDING_DROP = range(5)


def test_known_destination_goes_out_unchanged_on_its_port(switch):
    frame = udp_frame(H1, H3, 100)
    switch.send(1, frame, 1000)
    switch.drain()
    assert [(p, f) for p, f, _t in outputs(switch)] == [(3, frame)]


def test_unknown_destination_floods_to_every_port_but_the_ingress(switch):
    frame = udp_frame(H2, "08:00:00:00:09:09", 100)
    switch.send(2, frame, 1000)
    switch.drain()
    assert sorted((p, f) for p, f, _t in outputs(switch)) == [(1, frame), (3, frame)]
    # Flooded frames are not accounted in the shared buffer.
    assert switch.register_read("pool_occupancy", 0) == 0


def test_route_rewrites_macs_decrements_ttl_and_fixes_the_checksum(switch):
    switch.table_add("ipv4_lpm", {"dst_addr": ("10.0.0.0", 8)}, "ipv4_forward",
                     {"dst_mac": "08:00:00:00:02:02", "port": 2})
    switch.table_add("ipv4_lpm", {"dst_addr": ("10.0.3.0", 24)}, "ipv4_forward",
                     {"dst_mac": "08:00:00:00:03:03", "port": 3})
    router_mac = layers.port_mac(SWITCH_ID, 1)
    sent = Ether(udp_frame(H1, router_mac, 100, dst_ip="10.0.3.7", ttl=5))
    switch.send(1, bytes(sent), 1000)
    switch.send(1, udp_frame(H1, router_mac, 100, dst_ip="10.9.0.1", ttl=5), 2000)
    switch.drain()
    frames = outputs(switch)
    (routed,) = on_port(frames, 3)  # the /24 wins over the /8
    assert routed.src == layers.port_mac(SWITCH_ID, 3)
    assert routed.dst == "08:00:00:00:03:03"
    assert routed[IP].ttl == 4
    expected = IP(bytes(sent[IP]))
    expected.ttl = 4
    del expected.chksum
    assert routed[IP].chksum == IP(bytes(expected)).chksum
    assert bytes(routed[IP].payload) == bytes(sent[IP].payload)
    (shorter,) = on_port(frames, 2)
    assert shorter.dst == "08:00:00:00:02:02" and shorter[IP].ttl == 4


def test_expired_ttl_and_bad_checksum_are_dropped_and_counted(switch):
    switch.table_add("ipv4_lpm", {"dst_addr": ("10.0.3.0", 24)}, "ipv4_forward",
                     {"dst_mac": "08:00:00:00:03:03", "port": 3})
    router_mac = layers.port_mac(SWITCH_ID, 1)
    switch.send(1, udp_frame(H1, router_mac, 100, dst_ip="10.0.3.7", ttl=1), 1000)
    bad = bytearray(udp_frame(H1, router_mac, 100, dst_ip="10.0.3.7"))
    bad[24] ^= 0xFF  # IPv4 header checksum
    switch.send(1, bytes(bad), 2000)
    switch.drain()
    assert outputs(switch) == []
    assert switch.counter_read("ingress_discards", TTL_EXPIRED) == (1, 100)
    assert switch.counter_read("ingress_discards", BAD_CHECKSUM) == (1, 100)


def test_received_pause_runts_and_drop_entries_are_discarded_by_reason(switch):
    switch.table_add("l2_forward", {"dst_addr": "08:00:00:00:06:66"}, "drop", {})
    switch.send(1, bytes(layers.pause_frame(H1, 0xFFFF)), 1000)
    switch.send(1, bytes(10), 2000)
    switch.send(1, udp_frame(H1, "08:00:00:00:06:66", 80), 3000)
    switch.drain()
    assert kinds(outputs(switch)) == []
    assert switch.counter_read("ingress_discards", MAC_CONTROL) == (1, 60)
    assert switch.counter_read("ingress_discards", RUNT) == (1, 10)
    assert switch.counter_read("ingress_discards", FORWARDING_DROP) == (1, 80)
