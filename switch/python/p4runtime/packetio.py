"""Packet I/O through the CPU port: packet_out/packet_in controller headers (formats.md §2.9)."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from . import codec
from .p4info_index import ControllerHeader
from .status import P4RuntimeError


def encode_packet_out(header: ControllerHeader | None, packet: p4runtime_pb2.PacketOut) -> bytes:
    """The frame injected on the CPU port: packed packet_out header, then the payload.

    Fields are packed MSB-first in P4Info order; a field the client left out stays 0 (PI's
    leniency). Unknown or repeated metadata ids are INVALID_ARGUMENT, values too wide for
    their field OUT_OF_RANGE.
    """
    if header is None:
        if packet.metadata:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", "PacketOut has metadata but P4Info has no packet_out header"
            )
        return packet.payload
    by_id = {f.id: f for f in header.fields}
    values: dict[int, int] = {}
    for metadata in packet.metadata:
        field = by_id.get(metadata.metadata_id)
        if field is None:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"unknown packet_out metadata id {metadata.metadata_id}"
            )
        if metadata.metadata_id in values:
            raise P4RuntimeError(
                "INVALID_ARGUMENT", f"packet_out metadata id {metadata.metadata_id} repeated"
            )
        values[metadata.metadata_id] = codec.to_int(
            codec.decode(metadata.value, field.bitwidth, f"packet_out.{field.name}")
        )
    word = 0
    total = 0
    for field in header.fields:
        word = (word << field.bitwidth) | values.get(field.id, 0)
        total += field.bitwidth
    padding = header.byte_length * 8 - total
    return (word << padding).to_bytes(header.byte_length, "big") + packet.payload


def decode_packet_in(
    header: ControllerHeader | None, frame: bytes
) -> p4runtime_pb2.PacketIn | None:
    """The PacketIn for a frame that left on the CPU port, or None if it is too short."""
    if header is None:
        return p4runtime_pb2.PacketIn(payload=frame)
    length = header.byte_length
    if len(frame) < length:
        return None
    word = int.from_bytes(frame[:length], "big") >> (length * 8 - sum(
        f.bitwidth for f in header.fields))
    packet = p4runtime_pb2.PacketIn(payload=frame[length:])
    values = []
    for field in reversed(header.fields):
        values.append((field, word & ((1 << field.bitwidth) - 1)))
        word >>= field.bitwidth
    for field, value in reversed(values):
        packet.metadata.add(
            metadata_id=field.id, value=codec.canonical(codec.from_int(value, field.bitwidth))
        )
    return packet
