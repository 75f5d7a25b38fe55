"""Fixtures for the P4Runtime server tests: a test double of the `Target` protocol, a tiny
program's P4Info and BMv2 JSON (names only: the double does not execute it), a running
server on 127.0.0.1 and stream clients."""

from __future__ import annotations

import json
import queue
import threading

import grpc
import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from bufferlab.switch.p4runtime import serve
from bufferlab.switch.p4runtime import target as tgt

DEVICE_ID = 1

# A tiny v1model program's P4Info as p4c would write it (ids with the right prefixes).
P4INFO_TEXT = """
# proto-file: p4/config/v1/p4info.proto
# proto-message: p4.config.v1.P4Info

pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554433 name: "MyIngress.l2_fwd" alias: "l2_fwd" }
  match_fields { id: 1 name: "hdr.ethernet.dstAddr" bitwidth: 48 match_type: EXACT }
  action_refs { id: 16777218 }
  action_refs { id: 16777219 }
  action_refs { id: 16777221 scope: TABLE_ONLY annotations: "@tableonly" }
  action_refs { id: 16777217 scope: DEFAULT_ONLY annotations: "@defaultonly" }
  initial_default_action { action_id: 16777217 }
  direct_resource_ids: 318767105
  size: 1024
}
tables {
  preamble { id: 33554434 name: "MyIngress.acl" alias: "acl" }
  match_fields { id: 1 name: "hdr.ipv4.srcAddr" bitwidth: 32 match_type: TERNARY }
  match_fields { id: 2 name: "meta.l4_dport" bitwidth: 16 match_type: RANGE }
  match_fields { id: 3 name: "standard_metadata.ingress_port" bitwidth: 9 match_type: OPTIONAL }
  action_refs { id: 16777219 }
  action_refs { id: 16777217 }
  initial_default_action { action_id: 16777217 }
  direct_resource_ids: 352321537
  size: 2
}
tables {
  preamble { id: 33554435 name: "MyIngress.routes" alias: "routes" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777218 }
  action_refs { id: 16777219 }
  const_default_action_id: 16777219
  initial_default_action { action_id: 16777219 }
  size: 1024
}
tables {
  preamble { id: 33554436 name: "MyIngress.ecmp" alias: "ecmp" }
  match_fields { id: 1 name: "meta.flow_hash" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777218 }
  action_refs { id: 16777217 annotations: "@defaultonly" scope: DEFAULT_ONLY }
  implementation_id: 285212673
  size: 64
}
tables {
  preamble { id: 33554437 name: "MyIngress.ethertype_filter" alias: "ethertype_filter" }
  match_fields { id: 1 name: "hdr.ethernet.etherType" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777219 }
  action_refs { id: 16777217 }
  initial_default_action { action_id: 16777217 }
  size: 2
  is_const_table: true
  has_initial_entries: true
}
tables {
  preamble { id: 33554438 name: "MyIngress.set_defaults" alias: "set_defaults" }
  action_refs { id: 16777218 }
  initial_default_action { action_id: 16777218 arguments { param_id: 1 value: "\\x00\\x01" } }
  size: 1024
}
actions { preamble { id: 16777217 name: "NoAction" alias: "NoAction" } }
actions {
  preamble { id: 16777218 name: "MyIngress.set_port" alias: "set_port" }
  params { id: 1 name: "port" bitwidth: 9 }
}
actions { preamble { id: 16777219 name: "MyIngress.drop" alias: "drop" } }
actions {
  preamble { id: 16777221 name: "MyIngress.flood" alias: "flood" annotations: "@tableonly" }
}
action_profiles {
  preamble { id: 285212673 name: "MyIngress.ecmp_selector" alias: "ecmp_selector" }
  table_ids: 33554436
  with_selector: true
  size: 128
  max_group_size: 4
}
counters {
  preamble { id: 302005409 name: "MyIngress.port_counter" alias: "port_counter" }
  spec { unit: BOTH }
  size: 8
}
counters {
  preamble { id: 302005410 name: "MyIngress.byte_counter" alias: "byte_counter" }
  spec { unit: BYTES }
  size: 2
}
direct_counters {
  preamble { id: 318767105 name: "MyIngress.l2_counter" alias: "l2_counter" }
  spec { unit: BOTH }
  direct_table_id: 33554433
}
meters {
  preamble { id: 335544321 name: "MyIngress.port_meter" alias: "port_meter" }
  spec { unit: BYTES }
  size: 4
}
direct_meters {
  preamble { id: 352321537 name: "MyIngress.acl_meter" alias: "acl_meter" }
  spec { unit: PACKETS }
  direct_table_id: 33554434
}
controller_packet_metadata {
  preamble { id: 67146229 name: "packet_in" alias: "packet_in" annotations: "@controller_header(\\"packet_in\\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
controller_packet_metadata {
  preamble { id: 67121543 name: "packet_out" alias: "packet_out" annotations: "@controller_header(\\"packet_out\\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
  metadata { id: 2 name: "mcast_grp" bitwidth: 16 }
}
registers {
  preamble { id: 369098753 name: "MyIngress.occupancy" alias: "occupancy" }
  type_spec { bitstring { bit { bitwidth: 32 } } }
  size: 4
}
digests {
  preamble { id: 385875969 name: "mac_learn_digest_t" alias: "mac_learn_digest_t" }
  type_spec { struct { name: "mac_learn_digest_t" } }
}
type_info {
  structs {
    key: "mac_learn_digest_t"
    value {
      members { name: "srcAddr" type_spec { bitstring { bit { bitwidth: 48 } } } }
      members { name: "ingress_port" type_spec { bitstring { bit { bitwidth: 9 } } } }
    }
  }
}
"""

# The names the BMv2 JSON of that program holds (what the index cross-checks). p4c keeps a
# copy of NoAction per table; the hidden table tbl_act is not in P4Info.
DEVICE_JSON = json.dumps(
    {
        "pipelines": [
            {
                "name": "ingress",
                "tables": [
                    {"name": "MyIngress.l2_fwd", "actions": [
                        "MyIngress.set_port", "MyIngress.drop", "MyIngress.flood", "NoAction"]},
                    {"name": "MyIngress.acl", "actions": ["MyIngress.drop", "NoAction"]},
                    {"name": "MyIngress.routes", "actions": [
                        "MyIngress.set_port", "MyIngress.drop"]},
                    {"name": "MyIngress.ecmp", "actions": ["MyIngress.set_port", "NoAction"]},
                    {"name": "MyIngress.ethertype_filter", "actions": [
                        "MyIngress.drop", "NoAction"]},
                    {"name": "MyIngress.set_defaults", "actions": ["MyIngress.set_port"]},
                    {"name": "tbl_act", "actions": ["act"]},
                ],
                "action_profiles": [{"name": "MyIngress.ecmp_selector"}],
            }
        ],
        "counter_arrays": [
            {"name": "MyIngress.port_counter"},
            {"name": "MyIngress.byte_counter"},
            {"name": "MyIngress.l2_counter"},
        ],
        "meter_arrays": [{"name": "MyIngress.port_meter"}, {"name": "MyIngress.acl_meter"}],
        "register_arrays": [{"name": "MyIngress.occupancy"}],
        "learn_lists": [{"name": "mac_learn_digest_t"}],
    }
)

ETHERTYPE_CONST_KEY = (tgt.MatchParam("exact", b"\x86\xdd"),)


class FakeTarget:
    """Test double of the `Target` protocol: dictionaries plus a log of every call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.loaded: list[str] = []
        self.packets_out: list[bytes] = []
        self.packet_in_handler = None
        self.digest_handler = None
        self._clear()

    def _clear(self) -> None:
        self.tables: dict[str, dict[tuple, tgt.TableEntry]] = {}
        self.defaults: dict[str, tgt.ActionCall] = {}
        self.members: dict[str, dict[int, tgt.ActionCall]] = {}
        self.groups: dict[str, dict[int, tuple]] = {}
        self.counters: dict[tuple[str, int], tgt.CounterValue] = {}
        self.direct_counters: dict[tuple, tgt.CounterValue] = {}
        self.meters: dict[tuple[str, int], tgt.MeterRates | None] = {}
        self.direct_meters: dict[tuple, tgt.MeterRates | None] = {}
        self.registers: dict[tuple[str, int], bytes] = {}
        self.mc: dict[int, tuple] = {}
        self.clones: dict[int, tgt.CloneSession] = {}
        # The program's const entry, as a JSON `entries` list would give it.
        self.tables["MyIngress.ethertype_filter"] = {
            (ETHERTYPE_CONST_KEY, 0): tgt.TableEntry(
                ETHERTYPE_CONST_KEY, tgt.ActionCall("MyIngress.drop"), 0
            )
        }

    def _log(self, *call: object) -> None:
        self.calls.append(call)

    def load_pipeline(self, json_text: str) -> None:
        if "refuse-me" in json_text:
            raise tgt.InvalidArgument("the double refuses this JSON")
        self._log("load_pipeline")
        self.loaded.append(json_text)
        self._clear()

    def _table(self, table: str) -> dict:
        return self.tables.setdefault(table, {})

    def table_add(self, table: str, entry: tgt.TableEntry) -> None:
        self._log("table_add", table, entry)
        entries = self._table(table)
        if (entry.key, entry.priority) in entries:
            raise tgt.AlreadyExists("entry exists")
        if len(entries) >= (2 if table == "MyIngress.acl" else 1024):
            raise tgt.ResourceExhausted("table full")
        entries[(entry.key, entry.priority)] = entry

    def table_modify(self, table: str, entry: tgt.TableEntry) -> None:
        self._log("table_modify", table, entry)
        entries = self._table(table)
        if (entry.key, entry.priority) not in entries:
            raise tgt.NotFound("no such entry")
        entries[(entry.key, entry.priority)] = entry

    def table_delete(self, table: str, key: tuple, priority: int) -> None:
        self._log("table_delete", table, key, priority)
        if self._table(table).pop((key, priority), None) is None:
            raise tgt.NotFound("no such entry")

    def table_entries(self, table: str) -> list[tgt.TableEntry]:
        return list(self._table(table).values())

    def table_set_default(self, table: str, action: tgt.ActionCall) -> None:
        self._log("table_set_default", table, action)
        self.defaults[table] = action

    def table_reset_default(self, table: str) -> None:
        self._log("table_reset_default", table)
        self.defaults.pop(table, None)

    def table_get_default(self, table: str) -> tgt.ActionCall:
        return self.defaults.get(table, tgt.ActionCall("NoAction"))

    def act_prof_add_member(self, profile: str, member_id: int, action: tgt.ActionCall) -> None:
        self._log("act_prof_add_member", profile, member_id, action)
        members = self.members.setdefault(profile, {})
        if member_id in members:
            raise tgt.AlreadyExists("member exists")
        members[member_id] = action

    def act_prof_modify_member(
        self, profile: str, member_id: int, action: tgt.ActionCall
    ) -> None:
        self._log("act_prof_modify_member", profile, member_id, action)
        if member_id not in self.members.get(profile, {}):
            raise tgt.NotFound("no such member")
        self.members[profile][member_id] = action

    def act_prof_delete_member(self, profile: str, member_id: int) -> None:
        self._log("act_prof_delete_member", profile, member_id)
        if self.members.get(profile, {}).pop(member_id, None) is None:
            raise tgt.NotFound("no such member")

    def act_prof_members(self, profile: str) -> dict:
        return dict(self.members.get(profile, {}))

    def act_prof_add_group(self, profile: str, group_id: int, members: tuple, max_size: int):
        self._log("act_prof_add_group", profile, group_id, members, max_size)
        groups = self.groups.setdefault(profile, {})
        if group_id in groups:
            raise tgt.AlreadyExists("group exists")
        for member in members:
            if member.member_id not in self.members.get(profile, {}):
                raise tgt.NotFound(f"no member {member.member_id}")
        groups[group_id] = (members, max_size)

    def act_prof_modify_group(self, profile: str, group_id: int, members: tuple, max_size: int):
        self._log("act_prof_modify_group", profile, group_id, members, max_size)
        if group_id not in self.groups.get(profile, {}):
            raise tgt.NotFound("no such group")
        self.groups[profile][group_id] = (members, max_size)

    def act_prof_delete_group(self, profile: str, group_id: int) -> None:
        self._log("act_prof_delete_group", profile, group_id)
        if self.groups.get(profile, {}).pop(group_id, None) is None:
            raise tgt.NotFound("no such group")

    def act_prof_groups(self, profile: str) -> dict:
        return dict(self.groups.get(profile, {}))

    def counter_read(self, counter: str, index: int) -> tgt.CounterValue:
        return self.counters.get((counter, index), tgt.CounterValue())

    def counter_write(self, counter: str, index: int, value: tgt.CounterValue) -> None:
        self._log("counter_write", counter, index, value)
        self.counters[(counter, index)] = value

    def _entry_exists(self, table: str, key: tuple, priority: int) -> None:
        if (key, priority) not in self._table(table):
            raise tgt.NotFound("no such entry")

    def direct_counter_read(self, table: str, key: tuple, priority: int) -> tgt.CounterValue:
        self._entry_exists(table, key, priority)
        return self.direct_counters.get((table, key, priority), tgt.CounterValue())

    def direct_counter_write(self, table: str, key: tuple, priority: int, value) -> None:
        self._log("direct_counter_write", table, key, priority, value)
        self._entry_exists(table, key, priority)
        self.direct_counters[(table, key, priority)] = value

    def meter_set(self, meter: str, index: int, rates) -> None:
        self._log("meter_set", meter, index, rates)
        self.meters[(meter, index)] = rates

    def meter_get(self, meter: str, index: int):
        return self.meters.get((meter, index))

    def direct_meter_set(self, table: str, key: tuple, priority: int, rates) -> None:
        self._log("direct_meter_set", table, key, priority, rates)
        self._entry_exists(table, key, priority)
        self.direct_meters[(table, key, priority)] = rates

    def direct_meter_get(self, table: str, key: tuple, priority: int):
        self._entry_exists(table, key, priority)
        return self.direct_meters.get((table, key, priority))

    def register_read(self, register: str, index: int) -> bytes:
        return self.registers.get((register, index), b"\x00\x00\x00\x00")

    def register_write(self, register: str, index: int, value: bytes) -> None:
        self._log("register_write", register, index, value)
        self.registers[(register, index)] = value

    def mc_group_add(self, group_id: int, replicas: tuple) -> None:
        self._log("mc_group_add", group_id, replicas)
        if group_id in self.mc:
            raise tgt.AlreadyExists("group exists")
        self.mc[group_id] = replicas

    def mc_group_modify(self, group_id: int, replicas: tuple) -> None:
        self._log("mc_group_modify", group_id, replicas)
        if group_id not in self.mc:
            raise tgt.NotFound("no such group")
        self.mc[group_id] = replicas

    def mc_group_delete(self, group_id: int) -> None:
        self._log("mc_group_delete", group_id)
        if self.mc.pop(group_id, None) is None:
            raise tgt.NotFound("no such group")

    def mc_groups(self) -> dict:
        return dict(self.mc)

    def clone_session_add(self, session_id: int, session: tgt.CloneSession) -> None:
        self._log("clone_session_add", session_id, session)
        if session.class_of_service:
            raise tgt.Unimplemented("class_of_service")
        if session_id in self.clones:
            raise tgt.AlreadyExists("session exists")
        self.clones[session_id] = session

    def clone_session_modify(self, session_id: int, session: tgt.CloneSession) -> None:
        self._log("clone_session_modify", session_id, session)
        if session_id not in self.clones:
            raise tgt.NotFound("no such session")
        self.clones[session_id] = session

    def clone_session_delete(self, session_id: int) -> None:
        self._log("clone_session_delete", session_id)
        if self.clones.pop(session_id, None) is None:
            raise tgt.NotFound("no such session")

    def clone_sessions(self) -> dict:
        return dict(self.clones)

    def packet_out(self, data: bytes) -> None:
        self._log("packet_out", data)
        self.packets_out.append(data)

    def set_packet_in_handler(self, handler) -> None:
        self.packet_in_handler = handler

    def set_digest_handler(self, handler) -> None:
        self.digest_handler = handler


class StreamClient:
    """One StreamChannel: send requests, receive responses (or the RpcError that ended it)."""

    def __init__(self, stub: p4runtime_pb2_grpc.P4RuntimeStub) -> None:
        self._requests: queue.Queue = queue.Queue()
        self._responses: queue.Queue = queue.Queue()
        self._call = stub.StreamChannel(iter(self._requests.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for response in self._call:
                self._responses.put(response)
        except grpc.RpcError as error:
            self._responses.put(error)

    def send(self, message: p4runtime_pb2.StreamMessageRequest) -> None:
        self._requests.put(message)

    def arbitrate(self, election_id: tuple[int, int] | None, device_id: int = DEVICE_ID) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = device_id
        if election_id is not None:
            request.arbitration.election_id.high, request.arbitration.election_id.low = (
                election_id
            )
        self.send(request)

    def recv(self, timeout: float = 10.0):
        return self._responses.get(timeout=timeout)

    def pending(self) -> int:
        return self._responses.qsize()

    def close(self) -> None:
        self._requests.put(None)
        self._call.cancel()


@pytest.fixture
def p4info() -> p4info_pb2.P4Info:
    return text_format.Parse(P4INFO_TEXT, p4info_pb2.P4Info())


@pytest.fixture
def target() -> FakeTarget:
    return FakeTarget()


@pytest.fixture
def server(target):
    running = serve(target, DEVICE_ID, "127.0.0.1:0")
    yield running
    running.stop(0)


@pytest.fixture
def channel(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield channel


@pytest.fixture
def stub(channel) -> p4runtime_pb2_grpc.P4RuntimeStub:
    return p4runtime_pb2_grpc.P4RuntimeStub(channel)


@pytest.fixture
def open_stream(stub):
    streams: list[StreamClient] = []

    def open_one(election_id: tuple[int, int] | None = (0, 1)) -> StreamClient:
        stream = StreamClient(stub)
        streams.append(stream)
        if election_id is not None:
            stream.arbitrate(election_id)
        return stream

    yield open_one
    for stream in streams:
        stream.close()


def pipeline_request(
    p4info: p4info_pb2.P4Info,
    election_id: tuple[int, int] = (0, 1),
    action: int = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
    cookie: int | None = None,
    device_json: str = DEVICE_JSON,
) -> p4runtime_pb2.SetForwardingPipelineConfigRequest:
    request = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=DEVICE_ID, action=action)
    request.election_id.high, request.election_id.low = election_id
    request.config.p4info.CopyFrom(p4info)
    request.config.p4_device_config = device_json.encode()
    if cookie is not None:
        request.config.cookie.cookie = cookie
    return request


@pytest.fixture
def primary(stub, open_stream, p4info):
    """A primary client (election id (0, 1)) with the pipeline committed."""
    stream = open_stream((0, 1))
    assert stream.recv().arbitration.status.code == 0
    stub.SetForwardingPipelineConfig(pipeline_request(p4info))
    return stream


def write_request(*updates: tuple[int, p4runtime_pb2.Entity], election_id=(0, 1)):
    request = p4runtime_pb2.WriteRequest(device_id=DEVICE_ID)
    if election_id is not None:
        request.election_id.high, request.election_id.low = election_id
    for update_type, entity in updates:
        request.updates.add(type=update_type).entity.CopyFrom(entity)
    return request


def error_details(error: grpc.RpcError) -> list[p4runtime_pb2.Error]:
    """The per-update p4.v1.Errors of a failed Write/Read."""
    from google.rpc import status_pb2

    raw = dict(error.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(raw)
    details = []
    for detail in status.details:
        item = p4runtime_pb2.Error()
        assert detail.Unpack(item)
        details.append(item)
    return details


def read_entities(stub, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
    request = p4runtime_pb2.ReadRequest(device_id=DEVICE_ID)
    request.entities.extend(entities)
    return [e for response in stub.Read(request) for e in response.entities]


@pytest.fixture
def helpers():
    """Module-level helpers exposed to tests (importlib import mode has no sibling imports)."""
    import types

    return types.SimpleNamespace(
        pipeline_request=pipeline_request,
        DEVICE_ID=DEVICE_ID,
        DEVICE_JSON=DEVICE_JSON,
        P4INFO_TEXT=P4INFO_TEXT,
        ETHERTYPE_CONST_KEY=ETHERTYPE_CONST_KEY,
        StreamClient=StreamClient,
        write_request=write_request,
        error_details=error_details,
        read_entities=read_entities,
    )
