"""bufferlab's Scapy layers: build, serialise and dissect each format with exact bytes."""

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Padding, Raw

from bufferlab.traffic import layers
from bufferlab.traffic.layers import BCN, PFC, RLT, BufferlabData, MACControl, Pause, Telemetry

HOST_MAC = "08:00:00:00:01:01"
PEER_MAC = "08:00:00:00:01:02"


def test_data_header_bytes_and_magic():
    raw = bytes(BufferlabData(flow=0x0102, seq=0x03040506, tx_ns=0x1122334455667788))
    assert raw == bytes.fromhex("b1ab 0102 03040506 1122334455667788")
    assert len(raw) == layers.DATA_HEADER_BYTES


def test_data_port_binding_decodes_generator_frames():
    layers.bind_data_port(40001)
    frame = Ether(
        bytes(Ether() / IP() / UDP(sport=1, dport=40001) / BufferlabData(flow=7, seq=9) / b"pad")
    )
    assert frame[BufferlabData].flow == 7 and frame[BufferlabData].seq == 9
    assert Telemetry not in frame  # only the probe port carries telemetry
    assert bytes(frame[Raw]) == b"pad"


def test_probe_frame_layout_and_telemetry_offsets():
    frame = layers.probe_frame(HOST_MAC, PEER_MAC, "10.0.1.1", "10.0.1.2", flow=3, seq=42,
                               tx_ns=10**18, dscp=8)
    raw = bytes(frame)
    assert len(raw) == layers.PROBE_MIN_FRAME_BYTES == 106
    assert raw[12:14] == b"\x08\x00"
    assert raw[15] == 8 << 2  # TOS carries the DSCP
    udp = raw[34:42]
    assert udp[2:4] == (47000).to_bytes(2, "big")
    assert udp[4:6] == (72).to_bytes(2, "big")  # 8 + 16 + 48
    assert udp[6:8] == b"\x00\x00"  # checksum 0: the switch rewrites telemetry in place
    payload = raw[42:]
    assert payload[:16] == bytes.fromhex("b1ab 0003 0000002a 0de0b6b3a7640000")
    assert payload[16:] == bytes(48)

    # A switch fills the block at fixed offsets of the UDP payload.
    filled = bytearray(raw)
    tel = bytes.fromhex(
        "01 02 0003 0004 0005"
        " 0000000000000064 00000000000000c8"
        " 00000010 00000020 00000030 00000040 00000050 00000060"
    )
    assert len(tel) == 48
    filled[42 + 16:] = tel
    got = Ether(bytes(filled))
    t = got[Telemetry]
    assert t.tel_flags.filled
    assert (t.qid, t.ingress_port, t.egress_port, t.switch_id) == (2, 3, 4, 5)
    assert (t.ingress_global_ts, t.egress_global_ts) == (100, 200)
    assert (t.enq_timestamp, t.deq_timedelta, t.enq_qdepth, t.deq_qdepth) == (16, 32, 48, 64)
    assert (t.pool_occupancy, t.port_occupancy) == (80, 96)
    assert got[BufferlabData].seq == 42 and got[BufferlabData].tx_ns == 10**18


def test_probe_frame_size_and_minimum():
    assert len(bytes(layers.probe_frame(HOST_MAC, PEER_MAC, "10.0.0.1", "10.0.0.2", 1, 1,
                                        frame_bytes=512))) == 512
    with pytest.raises(ValueError, match="at least 106"):
        layers.probe_frame(HOST_MAC, PEER_MAC, "10.0.0.1", "10.0.0.2", 1, 1, frame_bytes=64)


def test_port_mac_and_cpid():
    assert layers.port_mac(0x1234, 5) == "02:bf:12:34:00:05"
    cpid = layers.make_cpid(0x0A0B0C0D, 3, 1)
    assert cpid == 0x0A0B0C0D00030001
    assert layers.split_cpid(cpid) == (0x0A0B0C0D, 3, 1)
    with pytest.raises(ValueError):
        layers.port_mac(1, 256)


def test_bcn_frame_exact_bytes_and_dissection():
    sampled = bytes(Ether(src=HOST_MAC, dst=PEER_MAC) / IP(src="10.0.1.1", dst="10.0.1.2")
                    / UDP(sport=5, dport=6) / (b"\xaa" * 200))
    frame = layers.bcn_frame(sampled, switch_id=1, port=2, queue=0, qoff_pages=-10,
                             qdelta_pages=3, fb_pages=-4, timestamp_us=0x01020304)
    raw = bytes(frame)
    assert len(raw) == 128  # sample cut so the whole frame is at most 128 bytes
    assert raw[:6] == bytes.fromhex("080000000101")  # DA = SA of the sample
    assert raw[6:12] == bytes.fromhex("02bf00010002")  # SA = CP port MAC
    assert raw[12:14] == b"\x88\xb5"
    assert raw[14:38] == bytes.fromhex(
        "00 00 0000000100020000 fff6 0003 fffffffc 01020304 005a"
    )
    assert raw[38:] == sampled[:90]

    got = Ether(raw)
    bcn = got[BCN]
    assert (bcn.version, int(bcn.flags), bcn.cpid) == (0, 0, 0x0000000100020000)
    assert (bcn.qoff, bcn.qdelta, bcn.fb, bcn.timestamp, bcn.sample_len) == (-10, 3, -4,
                                                                            0x01020304, 90)
    assert bcn.switch_id() == 1
    assert bcn.sampled_frame()[IP].src == "10.0.1.1"


def test_bcn_positive_severe_flags_and_padding():
    sampled = bytes(Ether(src=HOST_MAC, dst=PEER_MAC, type=0x0800))
    raw = bytes(layers.bcn_frame(sampled, 1, 2, 3, 5, 1, 7))
    assert len(raw) == 60  # 14 + 24 + 14 = 52, padded
    assert raw[14] == 0x02  # version 0, flags bit1 positive
    assert raw[36:38] == b"\x00\x0e"
    assert raw[52:] == bytes(8)
    got = Ether(raw)
    assert got[BCN].flags.positive and not got[BCN].flags.severe
    assert got[BCN].sample == sampled
    assert Padding in got
    severe = Ether(bytes(layers.bcn_frame(sampled, 1, 2, 3, 400, 0, -1200, severe=True)))
    assert severe[BCN].flags.severe and not severe[BCN].flags.positive


def test_rlt_insert_strip_and_dissect():
    inner = bytes(Ether(src=HOST_MAC, dst=PEER_MAC) / IP(src="10.0.1.1", dst="10.0.1.2")
                  / UDP(sport=1, dport=2))
    tagged = layers.insert_rlt(inner, 0x0000000100020000)
    assert len(tagged) == len(inner) + 10
    assert tagged[12:24] == bytes.fromhex("88b6 0000000100020000 0800")
    got = Ether(tagged)
    assert got[RLT].cpid == 0x0000000100020000
    assert got[RLT].type == 0x0800
    assert got[IP].dst == "10.0.1.2" and got[UDP].dport == 2
    assert layers.strip_rlt(tagged) == (inner, 0x0000000100020000)
    assert layers.strip_rlt(inner) == (inner, None)
    built = bytes(Ether(src=HOST_MAC, dst=PEER_MAC) / RLT(cpid=5) / IP(src="10.0.1.1",
                                                                       dst="10.0.1.2"))
    assert built[12:24] == bytes.fromhex("88b6 0000000000000005 0800")


def test_pause_exact_bytes_and_dissection():
    raw = bytes(layers.pause_frame("02:bf:00:01:00:02", 0xFFFF))
    assert raw == (bytes.fromhex("0180c2000001 02bf00010002 8808 0001 ffff") + bytes(42))
    got = Ether(raw)
    assert got[MACControl].opcode == 1 and got[Pause].quanta == 0xFFFF
    assert Ether(bytes(layers.pause_frame(HOST_MAC, 0)))[Pause].quanta == 0
    with pytest.raises(ValueError):
        layers.pause_frame(HOST_MAC, 70000)


def test_pfc_exact_bytes_and_dissection():
    raw = bytes(layers.pfc_frame("02:bf:00:01:00:02", {3: 0x1000, 0: 7}))
    assert raw[:16] == bytes.fromhex("0180c2000001 02bf00010002 8808 0101")
    assert raw[16:18] == b"\x00\x09"  # classes 0 and 3 enabled
    assert raw[18:34] == bytes.fromhex("0007 0000 0000 1000 0000 0000 0000 0000")
    assert raw[34:] == bytes(26) and len(raw) == 60
    got = Ether(raw)
    assert got[PFC].class_enable == 9
    assert got[PFC].quanta == [7, 0, 0, 0x1000, 0, 0, 0, 0]
    with pytest.raises(ValueError):
        layers.pfc_frame(HOST_MAC, {8: 1})


def test_pause_seconds():
    assert layers.pause_seconds(0xFFFF, 10e9) == pytest.approx(3.355392e-3)
    assert layers.pause_seconds(1, 1e9) == pytest.approx(512e-9)
