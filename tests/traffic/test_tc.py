"""tc helpers against real qdiscs on a veth pair between two namespaces."""

import subprocess
import sys
import uuid

import pytest

from bufferlab.traffic import tc

SENDER_IP = "10.66.0.1"
RECEIVER_IP = "10.66.0.2"

# Fixed-size UDP datagrams from inside a namespace, as fast as the socket accepts them.
_UDP_BLAST = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(sys.argv[4]))
for _ in range(int(sys.argv[3])):
    try:
        s.sendto(b"x" * 958, (sys.argv[1], int(sys.argv[2])))
    except OSError:
        pass
"""


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def veth():
    """Namespaces <tx>, <rx> joined by veth tx0 <-> rx0; yields (tx netns, device)."""
    tag = uuid.uuid4().hex[:6]
    tx, rx = f"bltc{tag}a", f"bltc{tag}b"
    _ip("netns", "add", tx)
    try:
        _ip("netns", "add", rx)
        try:
            _ip("-n", tx, "link", "add", "tx0", "type", "veth", "peer", "name", "rx0", "netns", rx)
            _ip("-n", tx, "addr", "add", f"{SENDER_IP}/24", "dev", "tx0")
            _ip("-n", rx, "addr", "add", f"{RECEIVER_IP}/24", "dev", "rx0")
            _ip("-n", tx, "link", "set", "tx0", "up")
            _ip("-n", rx, "link", "set", "rx0", "up")
            yield tx, "tx0"
        finally:
            subprocess.run(["ip", "netns", "del", rx], check=False)
    finally:
        subprocess.run(["ip", "netns", "del", tx], check=False)


def _blast(netns, count, port=5001, tos=0):
    subprocess.run(
        ["ip", "netns", "exec", netns, sys.executable, "-c", _UDP_BLAST, RECEIVER_IP, str(port),
         str(count), str(tos)],
        check=True,
    )


def test_size_and_rate_parsing_follows_tc_display_units():
    assert tc.parse_rate_bps("10Mbit") == 10_000_000
    assert tc.parse_rate_bps("1234Mbit") == 1_234_000_000
    assert tc.parse_rate_bps("64bit") == 64
    assert tc.parse_size_bytes("1600b") == 1600
    assert tc.parse_size_bytes("3Kb") == 3072
    assert tc.parse_size_bytes("1388b/1") == 1388
    with pytest.raises(ValueError, match="not a tc rate"):
        tc.parse_rate_bps("10 Mbps")


def test_parse_htb_class_text():
    text = (
        "class htb 1:10 parent 1:1 prio 0 quantum 12500 rate 10Mbit ceil 100Mbit "
        "linklayer ethernet burst 3000b/1 mpu 0b cburst 1600b/1 mpu 0b level 0 \n"
        " Sent 4200 bytes 7 pkt (dropped 2, overlimits 5 requeues 0) \n"
        " backlog 3Kb 3p requeues 0\n"
        " lended: 4 borrowed: 3 giants: 0\n"
        " tokens: 37500 ctokens: 2000\n\n"
        "class htb 1:1 root rate 100Mbit ceil 100Mbit burst 1600b cburst 1600b \n"
        " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
        " backlog 0b 0p requeues 0\n"
    )
    leaf, parent = tc.parse_htb_classes(text)
    assert (leaf.classid, leaf.parent, leaf.minor) == ("1:10", "1:1", 16)
    assert (leaf.rate_bps, leaf.ceil_bps) == (10_000_000, 100_000_000)
    assert (leaf.burst_bytes, leaf.cburst_bytes) == (3000, 1600)
    assert (leaf.sent_bytes, leaf.sent_packets, leaf.drops, leaf.overlimits) == (4200, 7, 2, 5)
    assert (leaf.backlog_bytes, leaf.backlog_packets, leaf.lended, leaf.borrowed) == (3072, 3, 4, 3)
    assert parent.parent is None and parent.rate_bps == 100_000_000


def test_bad_arguments_are_refused_before_tc_runs():
    with pytest.raises(ValueError, match="ceil_bps"):
        tc.install_htb("lo", 10**9, [tc.HtbClass(2, 10**6, ceil_bps=10**5)], 2)
    with pytest.raises(ValueError, match="default_minor"):
        tc.install_htb("lo", 10**9, [tc.HtbClass(2, 10**6)], 3)
    with pytest.raises(ValueError, match=">= 2"):
        tc.install_htb("lo", 10**9, [tc.HtbClass(1, 10**6)], 1)
    with pytest.raises(ValueError, match="dscp"):
        tc.add_htb_filter("lo", tc.HtbFilter(2, dscp=64))


@pytest.mark.root
def test_tc_error_names_command_and_message(veth):
    netns, dev = veth
    with pytest.raises(tc.TcError) as info:
        tc.install_tbf("nosuchdev0", 10**6, 1500, 3000, netns)
    assert info.value.command[:3] == ["tc", "-n", netns]
    assert "nosuchdev0" in str(info.value)
    assert info.value.message


@pytest.mark.root
def test_fifo_limits_read_back(veth):
    netns, dev = veth
    tc.install_pfifo(dev, 37, netns)
    root = tc.root_qdisc_stats(dev, netns)
    assert (root.kind, root.limit_packets, root.limit_bytes) == ("pfifo", 37, None)
    tc.install_bfifo(dev, 4500, netns)
    root = tc.root_qdisc_stats(dev, netns)
    assert (root.kind, root.limit_bytes) == ("bfifo", 4500)
    tc.clear_root(dev, netns)
    tc.clear_root(dev, netns)
    assert tc.root_qdisc_stats(dev, netns).kind not in ("pfifo", "bfifo")


@pytest.mark.root
def test_tbf_reads_back_and_live_change_stops_drops(veth):
    netns, dev = veth
    # 8 kbit/s with a 3000-byte queue: a burst of 50 × 1000-byte frames must overflow.
    tc.install_tbf(dev, 8_000, 1600, 3000, netns)
    root = tc.root_qdisc_stats(dev, netns)
    assert (root.kind, root.rate_bps, root.burst_bytes, root.limit_bytes) == (
        "tbf", 8_000, 1600, 3000)
    _blast(netns, 50)
    slow = tc.root_qdisc_stats(dev, netns)
    assert slow.drops > 0
    assert slow.sent_packets < 50

    tc.change_tbf(dev, 1_000_000_000, 200_000, 1_000_000, netns)
    root = tc.root_qdisc_stats(dev, netns)
    assert (root.rate_bps, root.burst_bytes, root.limit_bytes) == (1_000_000_000, 200_000, 1_000_000)
    # The drained backlog from the slow phase is still counted; 50 new frames add no drop.
    _blast(netns, 50)
    fast = tc.root_qdisc_stats(dev, netns)
    assert fast.drops == slow.drops
    assert fast.sent_packets >= slow.sent_packets + 50


@pytest.mark.root
def test_htb_classes_filters_and_live_rate_change(veth):
    netns, dev = veth
    classes = [
        tc.HtbClass(2, 1_000_000, ceil_bps=10_000_000),  # QBSS (DSCP 8)
        tc.HtbClass(3, 30_000_000, burst_bytes=15_000),  # UDP port 5201
        tc.HtbClass(10, 69_000_000),  # default; tc writes minors in hex (1:a)
    ]
    filters = [tc.HtbFilter(2, dscp=8), tc.HtbFilter(3, udp_dport=5201)]
    tc.install_htb(dev, 100_000_000, classes, default_minor=10, filters=filters, netns=netns)

    root = tc.root_qdisc_stats(dev, netns)
    assert (root.kind, root.default_class) == ("htb", "0xa")
    got = tc.class_stats(dev, netns)
    assert sorted(got) == [1, 2, 3, 10]
    assert got[10].classid == "1:a"
    assert (got[1].rate_bps, got[1].ceil_bps) == (100_000_000, 100_000_000)
    assert (got[2].rate_bps, got[2].ceil_bps, got[2].parent) == (1_000_000, 10_000_000, "1:1")
    assert (got[3].rate_bps, got[3].ceil_bps, got[3].burst_bytes) == (30_000_000, 100_000_000, 15_000)
    assert got[10].rate_bps == 69_000_000

    _blast(netns, 5, port=6000, tos=32)  # TOS 32 = DSCP 8
    _blast(netns, 7, port=5201)
    _blast(netns, 3, port=6000)
    moved = tc.class_stats(dev, netns)
    # Each datagram is 958 + 8 + 20 + 14 = 1000 bytes on the veth.
    assert (moved[2].sent_packets, moved[2].sent_bytes) == (5, 5000)
    assert (moved[3].sent_packets, moved[3].sent_bytes) == (7, 7000)
    assert moved[10].sent_packets >= 3  # plus any ARP/IPv6 chatter of the default class
    assert moved[10].sent_bytes >= 3000

    tc.change_htb_rate(dev, 2, 2_000_000, ceil_bps=5_000_000, netns=netns)
    after = tc.class_stats(dev, netns)
    assert (after[2].rate_bps, after[2].ceil_bps) == (2_000_000, 5_000_000)
    assert after[2].sent_packets == 5  # the class was changed, not recreated
    assert after[3].rate_bps == 30_000_000
