"""Packet out/in and digest lists with acks through the StreamChannel."""

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from bufferlab.switch.p4runtime import target as tgt
from bufferlab.switch.p4runtime.digests import DigestManager
from bufferlab.switch.p4runtime.p4info_index import P4InfoIndex

DIGEST_ID = 385875969


def packet_out(payload, *metadata):
    request = p4runtime_pb2.StreamMessageRequest()
    request.packet.payload = payload
    for metadata_id, value in metadata:
        request.packet.metadata.add(metadata_id=metadata_id, value=value)
    return request


def sync(stream):
    """Stream messages are handled in order: once this bad PacketOut's error is back, every
    earlier message has reached the target."""
    stream.send(packet_out(b"sync", (9, b"\x01")))
    assert stream.recv().error.packet_out.packet_out.payload == b"sync"


def test_packet_out_header_packed_msb_first(primary, target):
    # egress_port (9 bits) = 3, mcast_grp (16 bits) = 0x0102, padded to 4 bytes:
    # 000000011 0000000100000010 0000000 -> 0x01 0x80 0x81 0x00.
    primary.send(packet_out(b"payload", (1, b"\x00\x03"), (2, b"\x01\x02")))
    sync(primary)
    assert target.packets_out == [b"\x01\x80\x81\x00payload"]
    # A missing field stays 0.
    primary.send(packet_out(b"x", (2, b"\xff\xff")))
    sync(primary)
    assert target.packets_out[1] == b"\x00\x7f\xff\x80x"


def test_bad_packet_out_gets_stream_error_and_is_dropped(primary, target):
    primary.send(packet_out(b"p", (9, b"\x01")))
    error = primary.recv().error
    assert error.canonical_code == code_pb2.INVALID_ARGUMENT
    assert error.packet_out.packet_out.payload == b"p"
    primary.send(packet_out(b"p", (1, b"\x02\x00")))  # 512 does not fit 9 bits
    assert primary.recv().error.canonical_code == code_pb2.OUT_OF_RANGE
    assert target.packets_out == []


def test_backup_packet_out_is_refused(primary, open_stream, target):
    backup = open_stream((0, 0))
    assert backup.recv().arbitration.status.code == code_pb2.ALREADY_EXISTS
    backup.send(packet_out(b"p", (1, b"\x01")))
    assert backup.recv().error.canonical_code == code_pb2.PERMISSION_DENIED
    assert target.packets_out == []


def test_packet_in_goes_to_primary_with_decoded_metadata(primary, open_stream, target):
    backup = open_stream((0, 0))
    backup.recv()
    # ingress_port 9 bits = 5, _pad 7 bits = 0 -> 0x02 0x80.
    target.packet_in_handler(b"\x02\x80frame")
    packet = primary.recv().packet
    assert packet.payload == b"frame"
    assert [(m.metadata_id, m.value) for m in packet.metadata] == [(1, b"\x05"), (2, b"\x00")]
    target.packet_in_handler(b"\x02")  # shorter than the header: dropped
    target.packet_in_handler(b"\x00\x80next")
    assert primary.recv().packet.payload == b"next"
    assert backup.pending() == 0


def enable_digest(stub, helpers, **config):
    entity = p4runtime_pb2.Entity()
    entity.digest_entry.digest_id = DIGEST_ID
    for name, value in config.items():
        setattr(entity.digest_entry.config, name, value)
    stub.Write(helpers.write_request((p4runtime_pb2.Update.INSERT, entity)))


def learn(target, mac: bytes, port: bytes):
    target.digest_handler(tgt.DigestMessage("mac_learn_digest_t", (mac, port)))


MAC_A = b"\x00\x00\x00\x00\x00\x0a"
MAC_B = b"\x00\x00\x00\x00\x00\x0b"


def test_digest_lists_are_batched_and_acked(stub, primary, target, helpers):
    learn(target, MAC_A, b"\x00\x01")  # not enabled yet: discarded
    enable_digest(stub, helpers, max_list_size=2, max_timeout_ns=10**12,
                  ack_timeout_ns=10**12)
    learn(target, MAC_A, b"\x00\x01")
    learn(target, MAC_A, b"\x00\x01")  # duplicate of a pending sample
    learn(target, MAC_B, b"\x00\x02")
    digest = primary.recv().digest
    assert digest.digest_id == DIGEST_ID and digest.list_id == 1
    assert [[m.bitstring for m in d.struct.members] for d in digest.data] == [
        [b"\x0a", b"\x01"], [b"\x0b", b"\x02"]]
    assert digest.timestamp > 0

    # Unacked samples are held back; after the ack they are reported again.
    learn(target, MAC_A, b"\x00\x01")
    learn(target, MAC_B, b"\x00\x02")
    assert primary.pending() == 0
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id = DIGEST_ID
    ack.digest_ack.list_id = 1
    primary.send(ack)
    sync(primary)
    learn(target, MAC_A, b"\x00\x01")
    learn(target, MAC_B, b"\x00\x02")
    second = primary.recv().digest
    assert second.list_id == 2
    assert [d.struct.members[0].bitstring for d in second.data] == [b"\x0a", b"\x0b"]


class FakeClock:
    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now


def test_digest_manager_timeouts_with_injected_clock(p4info, helpers):
    sent = []
    clock = FakeClock()
    manager = DigestManager(sent.append, clock)
    try:
        manager.reset(P4InfoIndex(p4info, helpers.DEVICE_JSON))
        entry = p4runtime_pb2.DigestEntry(digest_id=DIGEST_ID)
        entry.config.max_timeout_ns = 0
        entry.config.max_list_size = 10
        entry.config.ack_timeout_ns = 1000
        manager.write(p4runtime_pb2.Update.INSERT, entry)
        manager.on_message(tgt.DigestMessage("mac_learn_digest_t", (MAC_A, b"\x00\x01")))
        assert [s.digest.list_id for s in sent] == [1]  # timeout 0: sent at once
        manager.on_message(tgt.DigestMessage("mac_learn_digest_t", (MAC_A, b"\x00\x01")))
        assert len(sent) == 1  # held: list 1 is not acked
        clock.now = 1000  # ack_timeout_ns passed: the sample may be reported again
        manager.on_message(tgt.DigestMessage("mac_learn_digest_t", (MAC_A, b"\x00\x01")))
        assert [s.digest.list_id for s in sent] == [1, 2]
        manager.on_message(tgt.DigestMessage("other_digest", (MAC_B,)))
        assert len(sent) == 2
    finally:
        manager.close()
