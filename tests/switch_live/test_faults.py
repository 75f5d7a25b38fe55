"""Controller faults against the real P4Runtime server in front of the engine: a primary
killed in the middle of a batch leaves the switch consistent and the next primary reads
everything back; controllers racing for primary get the spec's answers."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from bufferlab.controller import entities
from bufferlab.controller.client import P4RuntimeError, SwitchConnection, entity

BATCH = 1024  # l2_forward's size: the batch fills the table

# A primary that sends one big batch and is SIGKILLed by the test right after.
DOOMED = textwrap.dedent("""\
    import sys, time
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
    from bufferlab.controller.client import SwitchConnection
    address, path = sys.argv[1], sys.argv[2]
    connection = SwitchConnection(address, 0, (0, 1))
    assert connection.connect()
    request = p4runtime_pb2.WriteRequest.FromString(open(path, "rb").read())
    stub = p4runtime_pb2_grpc.P4RuntimeStub(grpc.insecure_channel(address))
    pending = stub.Write.future(request)
    print("sent", flush=True)
    time.sleep(600)
""")


def mac(i: int) -> str:
    return f"02:00:00:00:{i >> 8:02x}:{i & 0xff:02x}"


def frame(dst: str) -> bytes:
    return bytes.fromhex(dst.replace(":", "")) + bytes.fromhex("080000000101") + b"\x88\xb5" + b"x" * 46


def test_a_primary_killed_mid_batch_leaves_a_consistent_switch(switch, programs, tmp_path):
    prog = programs("forward.p4")
    with SwitchConnection(switch.address, 0, (0, 1)) as setup:
        assert setup.connect()
        setup.set_pipeline(prog.p4info, prog.json.encode())
    request = p4runtime_pb2.WriteRequest(device_id=0, election_id=p4runtime_pb2.Uint128(low=1))
    for i in range(BATCH):
        request.updates.add(type=p4runtime_pb2.Update.INSERT).entity.CopyFrom(entity(
            entities.table_entry(prog.index, "l2_forward", match={"dst_addr": mac(i)},
                                 action_name="l2_to_port", params={"port": 1 + i % 8})))
    batch_file = tmp_path / "batch.bin"
    batch_file.write_bytes(request.SerializeToString())
    doomed = subprocess.Popen([sys.executable, "-c", DOOMED, switch.address, str(batch_file)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert doomed.stdout.readline().strip() == "sent"
        # Killed once the switch is inside the batch (its first entries are in the engine).
        deadline = time.monotonic() + 30
        while not switch.engine.table_entries("l2_forward") and time.monotonic() < deadline:
            time.sleep(0.001)
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
    finally:
        doomed.kill()

    # The next primary (a higher election id) reads back exactly what the batch wrote: the
    # switch finished the batch it had started, under its lock, though nobody waits for it.
    with SwitchConnection(switch.address, 0, (0, 2)) as successor:
        assert successor.connect()
        table = prog.index.get("table", "l2_forward").preamble.id
        found = successor.read(entity(p4runtime_pb2.TableEntry(table_id=table)))
        written = {u.entity.table_entry.match[0].exact.value: u.entity.table_entry.action.action
                   for u in request.updates}
        read = {e.table_entry.match[0].exact.value: e.table_entry.action.action for e in found}
        assert read == written
        # The engine agrees with the read: frames to the first and last MAC go where written.
        engine = switch.engine
        for i in (0, BATCH - 1):
            engine.send(9, frame(mac(i)), engine.now())
            engine.drain()
            assert [p for p, _f, _t in engine.received()] == [1 + i % 8]
        # The table is full: one more entry is RESOURCE_EXHAUSTED, and the successor can
        # change what the dead primary wrote.
        with pytest.raises(P4RuntimeError) as full:
            successor.insert(entity(entities.table_entry(
                prog.index, "l2_forward", match={"dst_addr": mac(BATCH)},
                action_name="l2_to_port", params={"port": 1})))
        assert [u.code for u in full.value.updates] == ["RESOURCE_EXHAUSTED"]
        successor.delete(entity(entities.table_entry(prog.index, "l2_forward",
                                                     match={"dst_addr": mac(0)})))
        assert len(successor.read(entity(p4runtime_pb2.TableEntry(table_id=table)))) == BATCH - 1


def race(address: str, election_ids: list[tuple[int, int]]) -> list[SwitchConnection | P4RuntimeError]:
    """Connect one controller per election id at the same moment; each one's connection, or
    the error that refused it."""
    start = threading.Barrier(len(election_ids))
    results: list[SwitchConnection | P4RuntimeError | None] = [None] * len(election_ids)

    def contend(slot: int) -> None:
        connection = SwitchConnection(address, 0, election_ids[slot])
        start.wait()
        try:
            connection.connect()
            results[slot] = connection
        except P4RuntimeError as error:
            results[slot] = error

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(election_ids))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def settled(connections: list[SwitchConnection], primary: SwitchConnection) -> bool:
    """Wait (bounded) until the switch's latest notices say `primary` is the only primary."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(c.is_primary == (c is primary) for c in connections):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("round_", range(10))
def test_controllers_racing_for_primary_get_the_spec_answers(switch, programs, round_):
    prog = programs("forward.p4")
    low, high, twin = race(switch.address, [(0, 10 + round_), (0, 20 + round_), (0, 20 + round_)])
    try:
        # The same election id twice: whichever came second is refused with INVALID_ARGUMENT.
        winners = [c for c in (high, twin) if isinstance(c, SwitchConnection)]
        losers = [c for c in (high, twin) if isinstance(c, P4RuntimeError)]
        assert len(winners) == 1 and [e.code for e in losers] == ["INVALID_ARGUMENT"]
        (primary,) = winners
        # Whatever the order of arrival, the highest id ends primary, the other a backup.
        assert settled([low, primary], primary)
        primary.set_pipeline(prog.p4info, prog.json.encode())
        with pytest.raises(P4RuntimeError) as denied:
            low.set_pipeline(prog.p4info, prog.json.encode())
        assert denied.value.code == "PERMISSION_DENIED"
        # The primary leaves: the backup is told there is no primary (NOT_FOUND), and stays
        # a backup, since its id is below the highest seen.
        primary.close()
        notices = [low.next_arbitration()]
        while notices[-1].status.code != code_pb2.NOT_FOUND:
            notices.append(low.next_arbitration())
        assert {n.status.code for n in notices} <= {code_pb2.OK, code_pb2.ALREADY_EXISTS,
                                                    code_pb2.NOT_FOUND}
        assert low.is_primary is False
    finally:
        for connection in (low, high, twin):
            if isinstance(connection, SwitchConnection):
                connection.close()
