"""Scapy layers for bufferlab's frames: data header, probe telemetry, BCN, RLT, PAUSE and PFC.

Importing this module binds the layers so captures decode: EtherType 0x88B5 → BCN,
0x88B6 → RLT (then the inner EtherType as Ethernet would), 0x8808 → MAC control
(opcode 0x0001 → PAUSE, 0x0101 → PFC), UDP destination port 47000 → data header
followed by the telemetry block. Generator frames use a UDP port chosen by the
generator; :func:`bind_data_port` makes such captures decode as well. All fields
are big-endian; the formats are fixed in the project brief and congestion.md §1.3/§2.
"""

from __future__ import annotations

from scapy.fields import (
    BitField,
    ByteField,
    FieldListField,
    FlagsField,
    IntField,
    LongField,
    ShortField,
    SignedIntField,
    SignedShortField,
    StrLenField,
    XByteField,
    XLongField,
    XShortEnumField,
    XShortField,
)
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, ETHER_TYPES, Dot1Q, Ether
from scapy.packet import Packet, Padding, bind_layers

DATA_MAGIC = 0xB1AB
DATA_HEADER_BYTES = 16
TELEMETRY_BYTES = 48
PROBE_UDP_PORT = 47000
# Ethernet 14 + IPv4 20 + UDP 8 + data header 16 + telemetry 48.
PROBE_MIN_FRAME_BYTES = 106
ETHERTYPE_BCN = 0x88B5
ETHERTYPE_RLT = 0x88B6
ETHERTYPE_MAC_CONTROL = 0x8808
OPCODE_PAUSE = 0x0001
OPCODE_PFC = 0x0101
PAUSE_DST_MAC = "01:80:c2:00:00:01"
BCN_HEADER_BYTES = 24
BCN_MAX_FRAME_BYTES = 128
RLT_BYTES = 10
MIN_FRAME_BYTES = 60  # without FCS, which Linux frames exclude
PFC_CLASSES = 8
QUANTUM_BITS = 512
PAGE_BYTES = 64  # BCN's qoff/qdelta/fb unit


class BufferlabData(Packet):
    """Data header: the first 16 bytes of every generator frame's UDP payload."""

    name = "BufferlabData"
    fields_desc = [
        XShortField("magic", DATA_MAGIC),
        ShortField("flow", 0),
        IntField("seq", 0),
        LongField("tx_ns", 0),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        """A data header on the probe port is followed by the telemetry block."""
        under = self.underlayer
        if (
            isinstance(under, UDP)
            and under.dport == PROBE_UDP_PORT
            and len(payload) >= TELEMETRY_BYTES
        ):
            return Telemetry
        return super().guess_payload_class(payload)


class Telemetry(Packet):
    """The 48-byte telemetry block of a probe, overwritten in place by the switch."""

    name = "BufferlabTelemetry"
    fields_desc = [
        FlagsField("tel_flags", 0, 8, ["filled"]),
        ByteField("qid", 0),
        ShortField("ingress_port", 0),
        ShortField("egress_port", 0),
        ShortField("switch_id", 0),
        LongField("ingress_global_ts", 0),  # µs
        LongField("egress_global_ts", 0),  # µs
        IntField("enq_timestamp", 0),  # µs
        IntField("deq_timedelta", 0),  # µs
        IntField("enq_qdepth", 0),  # packets
        IntField("deq_qdepth", 0),  # packets
        IntField("pool_occupancy", 0),  # bytes
        IntField("port_occupancy", 0),  # bytes
    ]


class BCN(Packet):
    """BCN header (EtherType 0x88B5) followed by the first bytes of the sampled frame."""

    name = "BCN"
    fields_desc = [
        BitField("version", 0, 4),
        FlagsField("flags", 0, 4, ["severe", "positive"]),
        XByteField("reserved", 0),
        XLongField("cpid", 0),
        SignedShortField("qoff", 0),  # 64-byte pages
        SignedShortField("qdelta", 0),  # 64-byte pages
        SignedIntField("fb", 0),  # 64-byte pages
        IntField("timestamp", 0),  # µs, switch clock
        ShortField("sample_len", None),
        StrLenField("sample", b"", length_from=lambda pkt: pkt.sample_len),
    ]

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        """Fill sample_len from the sample when it was left unset."""
        if self.sample_len is None:
            n = len(self.sample)
            pkt = pkt[:22] + n.to_bytes(2, "big") + pkt[24:]
        return pkt + pay

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """Anything after the sample is frame padding."""
        return b"", s

    def sampled_frame(self) -> Ether:
        """The sampled frame's bytes dissected as Ethernet (truncated as the switch cut it)."""
        return Ether(self.sample)

    def switch_id(self) -> int:
        """The congestion point's switch id (upper 32 bits of the CPID)."""
        return split_cpid(self.cpid)[0]


class RLT(Packet):
    """Rate-limiter tag inserted after the source MAC of a throttled flow's frames."""

    name = "RLT"
    fields_desc = [
        XLongField("cpid", 0),
        XShortEnumField("type", 0x0800, ETHER_TYPES),
    ]


class MACControl(Packet):
    """IEEE 802.3 MAC control frame (EtherType 0x8808): the opcode selects PAUSE or PFC."""

    name = "MACControl"
    fields_desc = [XShortField("opcode", OPCODE_PAUSE)]


class Pause(Packet):
    """802.3x PAUSE: pause time in quanta of 512 bit times; 0 means XON (resume)."""

    name = "Pause"
    fields_desc = [ShortField("quanta", 0)]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """The reserved zeros after the pause time are padding."""
        return b"", s


class PFC(Packet):
    """802.1Qbb PFC: class-enable vector (bit i ↔ priority i) and 8 pause times in quanta."""

    name = "PFC"
    fields_desc = [
        XShortField("class_enable", 0),
        FieldListField(
            "quanta", [0] * PFC_CLASSES, ShortField("", 0), count_from=lambda pkt: PFC_CLASSES
        ),
    ]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """The reserved zeros after the eight times are padding."""
        return b"", s


bind_layers(UDP, BufferlabData, dport=PROBE_UDP_PORT)
bind_layers(Ether, BCN, type=ETHERTYPE_BCN)
bind_layers(Dot1Q, BCN, type=ETHERTYPE_BCN)
bind_layers(Ether, RLT, type=ETHERTYPE_RLT)
bind_layers(RLT, IP, type=0x0800)
bind_layers(RLT, IPv6, type=0x86DD)
bind_layers(RLT, ARP, type=0x0806)
bind_layers(RLT, Dot1Q, type=0x8100)
bind_layers(Ether, MACControl, type=ETHERTYPE_MAC_CONTROL)
bind_layers(MACControl, Pause, opcode=OPCODE_PAUSE)
bind_layers(MACControl, PFC, opcode=OPCODE_PFC)


def bind_data_port(udp_dport: int) -> None:
    """Decode UDP payloads to ``udp_dport`` as bufferlab data headers (generator frames)."""
    bind_layers(UDP, BufferlabData, dport=udp_dport)


# ---------------------------------------------------------------------------------------
# Identities


def make_cpid(switch_id: int, port: int, queue: int) -> int:
    """CPID = switch_id (32 bits) ‖ port (16 bits) ‖ queue (16 bits)."""
    if not (0 <= switch_id < 1 << 32 and 0 <= port < 1 << 16 and 0 <= queue < 1 << 16):
        raise ValueError(f"CPID parts out of range: switch {switch_id} port {port} queue {queue}")
    return (switch_id << 32) | (port << 16) | queue


def split_cpid(cpid: int) -> tuple[int, int, int]:
    """(switch_id, port, queue) of a CPID."""
    return cpid >> 32, (cpid >> 16) & 0xFFFF, cpid & 0xFFFF


def port_mac(switch_id: int, port: int) -> str:
    """The MAC of a switch port: 02:bf:SS:SS:00:PP (switch id 16 bits, port 8 bits)."""
    if not (0 <= switch_id < 1 << 16 and 0 <= port < 1 << 8):
        raise ValueError(f"port MAC needs switch_id < 2^16 and port < 2^8: {switch_id}, {port}")
    return f"02:bf:{switch_id >> 8:02x}:{switch_id & 0xFF:02x}:00:{port:02x}"


# ---------------------------------------------------------------------------------------
# Frame builders


def pad_frame(frame: Packet) -> Packet:
    """Append zero padding so the frame is at least 60 bytes (the minimum without FCS)."""
    short = MIN_FRAME_BYTES - len(frame)
    return frame / Padding(b"\x00" * short) if short > 0 else frame


def probe_frame(
    src_mac: str,
    dst_mac: str,
    src_ip: str,
    dst_ip: str,
    flow: int,
    seq: int,
    tx_ns: int = 0,
    sport: int = PROBE_UDP_PORT,
    frame_bytes: int = PROBE_MIN_FRAME_BYTES,
    dscp: int = 0,
) -> Packet:
    """An IPv4/UDP probe to port 47000 with an empty telemetry block, ``frame_bytes`` long."""
    if frame_bytes < PROBE_MIN_FRAME_BYTES:
        raise ValueError(f"a probe is at least {PROBE_MIN_FRAME_BYTES} bytes, got {frame_bytes}")
    frame = (
        Ether(src=src_mac, dst=dst_mac)
        / IP(src=src_ip, dst=dst_ip, tos=dscp << 2)
        / UDP(sport=sport, dport=PROBE_UDP_PORT, chksum=0)
        / BufferlabData(flow=flow, seq=seq, tx_ns=tx_ns)
        / Telemetry()
    )
    extra = frame_bytes - PROBE_MIN_FRAME_BYTES
    return frame / Padding(b"\x00" * extra) if extra else frame


def bcn_frame(
    sampled: bytes,
    switch_id: int,
    port: int,
    queue: int,
    qoff_pages: int,
    qdelta_pages: int,
    fb_pages: int,
    timestamp_us: int = 0,
    severe: bool = False,
) -> Packet:
    """A BCN frame for a sampled frame (its bytes from the Ethernet header on).

    DA is the sampled frame's SA, SA the congestion point's port MAC; the positive
    flag follows the sign of ``fb_pages``; the sample is cut so the frame is at most
    128 bytes and padded to 60.
    """
    if len(sampled) < 12:
        raise ValueError(f"sampled frame too short for a source MAC: {len(sampled)} bytes")
    src_of_sample = ":".join(f"{b:02x}" for b in sampled[6:12])
    sample = sampled[: BCN_MAX_FRAME_BYTES - 14 - BCN_HEADER_BYTES]
    flags = (1 if severe else 0) | (2 if fb_pages > 0 else 0)
    frame = Ether(dst=src_of_sample, src=port_mac(switch_id, port), type=ETHERTYPE_BCN) / BCN(
        flags=flags,
        cpid=make_cpid(switch_id, port, queue),
        qoff=qoff_pages,
        qdelta=qdelta_pages,
        fb=fb_pages,
        timestamp=timestamp_us,
        sample=sample,
    )
    return pad_frame(frame)


def pause_frame(src_mac: str, quanta: int) -> Packet:
    """An 802.3x PAUSE frame (quanta 0 = XON), padded to 60 bytes."""
    if not 0 <= quanta <= 0xFFFF:
        raise ValueError(f"quanta must be 0..65535, got {quanta}")
    return pad_frame(
        Ether(dst=PAUSE_DST_MAC, src=src_mac, type=ETHERTYPE_MAC_CONTROL)
        / MACControl(opcode=OPCODE_PAUSE)
        / Pause(quanta=quanta)
    )


def pfc_frame(src_mac: str, quanta_by_class: dict[int, int]) -> Packet:
    """An 802.1Qbb PFC frame enabling the given classes (priority → quanta), padded to 60."""
    quanta = [0] * PFC_CLASSES
    enable = 0
    for cls, q in quanta_by_class.items():
        if not 0 <= cls < PFC_CLASSES or not 0 <= q <= 0xFFFF:
            raise ValueError(f"PFC class must be 0..7 and quanta 0..65535, got {cls}: {q}")
        quanta[cls] = q
        enable |= 1 << cls
    return pad_frame(
        Ether(dst=PAUSE_DST_MAC, src=src_mac, type=ETHERTYPE_MAC_CONTROL)
        / MACControl(opcode=OPCODE_PFC)
        / PFC(class_enable=enable, quanta=quanta)
    )


def insert_rlt(frame: bytes, cpid: int) -> bytes:
    """Insert the rate-limiter tag right after the source MAC of an Ethernet frame."""
    if len(frame) < 14:
        raise ValueError(f"not an Ethernet frame: {len(frame)} bytes")
    tag = ETHERTYPE_RLT.to_bytes(2, "big") + cpid.to_bytes(8, "big")
    return frame[:12] + tag + frame[12:]


def strip_rlt(frame: bytes) -> tuple[bytes, int | None]:
    """Remove a rate-limiter tag if present; returns (frame, cpid or None)."""
    if len(frame) >= 14 + RLT_BYTES and int.from_bytes(frame[12:14], "big") == ETHERTYPE_RLT:
        return frame[:12] + frame[22:], int.from_bytes(frame[14:22], "big")
    return frame, None


def pause_seconds(quanta: int, link_rate_bps: float) -> float:
    """How long ``quanta`` pause quanta last at ``link_rate_bps`` (q · 512 / R)."""
    return quanta * QUANTUM_BITS / link_rate_bps
