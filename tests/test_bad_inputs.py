"""The bad-input catalogue: every kind of bad input bufferlab takes, each with the exact error
it must get, and after each one a good input of the same kind still works (nothing lost).

Kinds: frames (v1model: parser errors are counted, not dropped by themselves; the program's
own discard counters say what it dropped), BMv2 JSON (each section malformed: the error
names the object), P4Runtime requests (the gRPC code the P4Runtime spec names), controller
config keys, topology files, scenario files, command-line options.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2, struct_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller import entities
from bufferlab.controller.client import SwitchConnection, entity
from bufferlab.controller.config import BCN_KEYS, PORT_KEYS, TOP_KEYS, ConfigError, parse_config
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.experiments.scenario.spec import ScenarioError, parse_scenario
from bufferlab.mininet.topology import TopologyError, parse_topology
from bufferlab.switch import Engine, LoadError
from bufferlab.switch.p4runtime import serve
from bufferlab.switch.target import EngineTarget

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """One bad input: its kind, a name, the input (kind-specific) and the exact error."""

    kind: str
    name: str
    bad: Any
    expected: Any


# ------------------------------------------------------------------------- frames

DST, SRC = bytes.fromhex("080000000202"), bytes.fromhex("080000000101")
ROUTER_MAC = bytes.fromhex("000000000001")


def ipv4(ttl: int = 64, checksum_ok: bool = True, total: int = 46) -> bytes:
    header = bytearray(bytes.fromhex("4500") + total.to_bytes(2, "big") + bytes(4)
                       + bytes([ttl, 17]) + bytes(2) + bytes([10, 0, 1, 1, 10, 0, 2, 2]))
    if checksum_ok:
        words = sum(int.from_bytes(header[i:i + 2], "big") for i in range(0, 20, 2))
        while words >> 16:
            words = (words & 0xFFFF) + (words >> 16)
        header[10:12] = (~words & 0xFFFF).to_bytes(2, "big")
    return bytes(header) + bytes(total - 20)


GOOD_FRAME = DST + SRC + b"\x88\xb5" + b"g" * 46
PAUSE = bytes.fromhex("0180c2000001") + SRC + b"\x88\x08" + b"\x00\x01\xff\xff" + bytes(42)

# (port, frame) -> (frames out as (port, bytes), counter deltas). Parser errors (short
# headers) do not drop in v1model: the program decides, here by its own discard counters.
FRAME_CASES = [
    Case("frame", "empty frame", (1, b""), ([], {"parser_errors": 1, "discard_runt": 1})),
    Case("frame", "runt: 10 bytes", (1, DST[:10]), ([], {"parser_errors": 1, "discard_runt": 1})),
    Case("frame", "runt: 13 bytes", (1, (DST + SRC)[:13]),
         ([], {"parser_errors": 1, "discard_runt": 1})),
    Case("frame", "truncated IPv4 header (bridged as is)",
         (1, DST + SRC + b"\x08\x00" + ipv4()[:7]),
         ([(2, DST + SRC + b"\x08\x00" + ipv4()[:7])], {"parser_errors": 1})),
    Case("frame", "routed IPv4 with a wrong header checksum",
         (1, ROUTER_MAC + SRC + b"\x08\x00" + ipv4(checksum_ok=False)),
         ([], {"checksum_errors": 1, "discard_bad_checksum": 1})),
    Case("frame", "routed IPv4 with TTL 1", (1, ROUTER_MAC + SRC + b"\x08\x00" + ipv4(ttl=1)),
         ([], {"discard_ttl_expired": 1})),
    Case("frame", "802.3x PAUSE from a host (never forwarded)", (1, PAUSE),
         ([], {"discard_mac_control": 1})),
    Case("frame", "jumbo: 9,000 bytes of payload (v1model has no MTU)",
         (1, DST + SRC + b"\x88\xb5" + bytes(9000)),
         ([(2, DST + SRC + b"\x88\xb5" + bytes(9000))], {})),
    Case("frame", "port 512 (ports are 0..511)", (512, GOOD_FRAME),
         "InvalidArgumentError: port 512: ports are 0..=511"),
]
DISCARDS = {"discard_runt": 0, "discard_mac_control": 1, "discard_bad_checksum": 2,
            "discard_ttl_expired": 3}


@pytest.fixture(scope="module")
def forward():
    """forward.p4 compiled, and an engine with an L2 entry to port 2 and a route via port 3."""
    document, p4info = compile_p4(ROOT / "p4src" / "forward.p4")
    engine = Engine(json.dumps(document))
    engine.table_add("l2_forward", {"dst_addr": DST}, "l2_to_port", {"port": 2})
    engine.table_add("ipv4_lpm", {"dst_addr": ("10.0.2.0", 24)}, "ipv4_forward",
                     {"dst_mac": DST, "port": 3})
    return document, engine


def frame_counters(engine: Engine) -> dict[str, int]:
    stats = engine.stats()
    counts = {name: stats[name] for name in ("parser_errors", "checksum_errors")}
    for name, index in DISCARDS.items():
        counts[name] = engine.counter_read("ingress_discards", index)[0]
    return counts


def run_frame(forward, case: Case) -> None:
    _document, engine = forward
    port, data = case.bad
    before = frame_counters(engine)
    try:
        engine.send(port, data, engine.now())
    except Exception as error:  # noqa: BLE001 - the catalogue compares the exact error
        assert f"{type(error).__name__}: {error}" == case.expected
    else:
        engine.drain()
        out = [(p, f) for p, f, _ in engine.received()]
        after = frame_counters(engine)
        delta = {k: after[k] - before[k] for k in after if after[k] != before[k]}
        assert (out, delta) == case.expected
    engine.send(1, GOOD_FRAME, engine.now())
    engine.drain()
    assert [(p, f) for p, f, _ in engine.received()] == [(2, GOOD_FRAME)]


# ---------------------------------------------------------------------- BMv2 JSON

def set_section(key: str, value: Any) -> Callable[[dict], None]:
    def damage(document: dict) -> None:
        document[key] = value
    return damage


def set_first(key: str, field: str, value: Any) -> Callable[[dict], None]:
    def damage(document: dict) -> None:
        document[key][0][field] = value
    return damage


JSON_CASES = [
    Case("json", "not JSON", "{", "JSON syntax: EOF while parsing an object at line 1 column 1"),
    Case("json", "top level an array", "[]", "document: top level is not a JSON object"),
    Case("json", "__meta__ version 3", lambda d: d["__meta__"].update(version=[3, 0]), "__meta__.version: format [3,0] is not supported (need 2.0 to 2.24)"),
    *[Case("json", f"{key} not an array", set_section(key, "nope"),
           f"{key}: expected an array, not a string")
      for key in ("header_types", "headers", "header_stacks", "header_union_types",
                  "header_unions", "header_union_stacks", "field_lists", "errors", "enums",
                  "parsers", "parse_vsets", "deparsers", "meter_arrays", "counter_arrays",
                  "register_arrays", "calculations", "learn_lists", "actions", "pipelines",
                  "checksums", "force_arith", "extern_instances", "field_aliases")],
    Case("json", "__meta__ not an object", set_section("__meta__", 7),
         "__meta__: expected an object, not a number"),
    Case("json", "header type without name", set_first("header_types", "name", 5),
         "header_types[0]: missing string 'name'"),
    Case("json", "header of an unknown type", set_first("headers", "header_type", "nope"),
         "headers[0] 'scalars': unknown header_type 'nope'"),
    Case("json", "error without value", set_section("errors", [["NoError"]]),
         "errors[0]: expected [name, value]"),
    Case("json", "parser state without name",
         lambda d: d["parsers"][0]["parse_states"][0].pop("name"), "parse_states[0]: missing string 'name'"),
    Case("json", "deparser without name", set_section("deparsers", [{"order": []}]),
         "deparsers[0]: missing string 'name'"),
    Case("json", "deparser emits an unknown header", set_first("deparsers", "order", ["nope"]),
         "deparsers[0] 'deparser': unknown header 'nope'"),
    Case("json", "counter array without size", lambda d: d["counter_arrays"][0].pop("size"),
         "counter_arrays[0] 'ingress_discards': missing non-negative integer 'size'"),
    Case("json", "counter array of 5,555,555,555,512 cells (found by fuzzing: an abort)",
         lambda d: d["counter_arrays"][0].update(size=5555555555512),
         "counter_arrays[0] 'ingress_discards': size 5555555555512 is above the engine's limit"
         " of 16777216 cells"),
    Case("json", "register array without bitwidth",
         lambda d: d["register_arrays"][0].pop("bitwidth"), "register_arrays[0] 'pool_occupancy': missing non-negative integer 'bitwidth'"),
    Case("json", "calculation with an unknown algorithm", set_first("calculations", "algo", "md5"),
         "calculations[0] 'calc': unsupported hash algorithm 'md5'"),
    Case("json", "action without id", lambda d: d["actions"][0].pop("id"), "actions[0] 'NoAction': missing non-negative integer 'id'"),
    Case("json", "primitive with an unknown op",
         lambda d: d["actions"][1]["primitives"][0].update(op="teleport"), "actions[1] 'set_switch' primitive 0: Unknown primitive action: teleport"),
    Case("json", "pipeline without name", lambda d: d["pipelines"][0].pop("name"),
         "pipelines[0]: missing string 'name'"),
    Case("json", "table with an unknown action id",
         lambda d: d["pipelines"][0]["tables"][0].update(action_ids=[99999]), "pipelines[0] 'ingress' tables[0] 'tbl_buffer_switch45': unknown action id 99999"),
    Case("json", "checksum with an unknown calculation", set_first("checksums", "calculation", "x"),
         "checksums[0] 'cksum': unknown calculation 'x'"),
    Case("json", "field alias to an unknown field",
         set_section("field_aliases", [["queueing_metadata.enq_timestamp", ["nope", "x"]]]),
         "field_aliases[0]: alias 'queueing_metadata.enq_timestamp' targets unknown field 'nope.x'"),
    Case("json", "learn list without id", set_section("learn_lists", [{"name": "l"}]),
         "learn_lists[0] 'l': missing non-negative integer 'id'"),
    Case("json", "meter array of an unknown type",
         set_section("meter_arrays", [{"name": "m", "id": 0, "type": "volts", "size": 1,
                                       "rate_count": 2, "is_direct": False}]), 'meter_arrays[0] \'m\': meter type "volts" is neither "bytes" nor "packets"'),
]


@pytest.fixture(scope="module")
def buffer_program():
    document, p4info = compile_p4(ROOT / "p4src" / "buffer_switch.p4")
    return document, p4info


def run_json(buffer_program, case: Case) -> None:
    document, _ = buffer_program
    if isinstance(case.bad, str):
        text = case.bad
    else:
        damaged = copy.deepcopy(document)
        case.bad(damaged)
        text = json.dumps(damaged)
    with pytest.raises(LoadError) as error:
        Engine(text)
    assert str(error.value) == case.expected
    engine = Engine(json.dumps(document))
    engine.send(1, GOOD_FRAME, 0)
    engine.drain()
    assert engine.stats()["received"] == 1


# --------------------------------------------------------------------- P4Runtime

@dataclass
class P4rt:
    """A real engine behind the P4Runtime server with buffer_switch.p4 set by a primary."""

    stub: p4runtime_pb2_grpc.P4RuntimeStub
    channel: grpc.Channel
    index: P4InfoIndex
    primary: SwitchConnection
    p4info: Any
    json_text: str


def outcome(call: Callable[[], object]) -> tuple[str, list[str]]:
    """An RPC's gRPC code name and, for a failed batch, each update's code name."""
    try:
        result = call()
        if hasattr(result, "__iter__") and not isinstance(result, bytes | str):
            list(result)
    except grpc.RpcError as error:
        codes = []
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin":
                for detail in status_pb2.Status.FromString(value).details:
                    item = p4runtime_pb2.Error()
                    detail.Unpack(item)
                    codes.append(code_pb2.Code.Name(item.canonical_code))
        return error.code().name, codes
    return "OK", []


def l2(ctx: P4rt, mac: str, port: int = 1) -> p4runtime_pb2.Entity:
    return entity(entities.table_entry(ctx.index, "l2_forward", match={"dst_addr": mac},
                                       action_name="l2_to_port", params={"port": port}))


def write(ctx: P4rt, *updates: tuple[int, p4runtime_pb2.Entity], election=(0, 1), role: str = "",
          device: int = 0, atomicity: int = 0) -> Callable[[], object]:
    request = p4runtime_pb2.WriteRequest(device_id=device, role=role, atomicity=atomicity)
    request.election_id.high, request.election_id.low = election
    for kind, item in updates:
        request.updates.add(type=kind).entity.CopyFrom(item)
    return lambda: ctx.stub.Write(request)


INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)


def raw_l2(ctx: P4rt, key: bytes, port: bytes) -> p4runtime_pb2.Entity:
    item = l2(ctx, "02:00:00:00:00:01")
    item.table_entry.match[0].exact.value = key
    item.table_entry.action.action.params[0].value = port
    return item


def pipeline(ctx: P4rt, action: int, device_config: bytes | None = None) -> Callable[[], object]:
    request = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0, action=action)
    request.election_id.low = 1
    request.config.p4info.CopyFrom(ctx.p4info)
    request.config.p4_device_config = (ctx.json_text.encode() if device_config is None
                                       else device_config)
    return lambda: ctx.stub.SetForwardingPipelineConfig(request)


def fill_l2_then_one_more(ctx: P4rt) -> Callable[[], object]:
    """Fill l2_forward to its size (1,024); the insert after that is what is judged. The
    entries are deleted again when the call is made, so the table is as before."""
    macs = [f"02:00:00:01:{i >> 8:02x}:{i & 0xff:02x}" for i in range(1024)]

    def call() -> object:
        ctx.stub.Write(write_request(ctx, [(INSERT, l2(ctx, m)) for m in macs]))
        try:
            return ctx.stub.Write(write_request(ctx, [(INSERT, l2(ctx, "02:00:00:02:00:00"))]))
        finally:
            ctx.stub.Write(write_request(ctx, [(DELETE, l2(ctx, m)) for m in macs]))
    return call


def write_request(ctx: P4rt, updates: list) -> p4runtime_pb2.WriteRequest:
    request = p4runtime_pb2.WriteRequest(device_id=0)
    request.election_id.low = 1
    for kind, item in updates:
        request.updates.add(type=kind).entity.CopyFrom(item)
    return request


def raw_write(ctx: P4rt, data: bytes) -> Callable[[], object]:
    """A Write whose request is `data` as sent, not a message we built."""
    call = ctx.channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=bytes,
                                   response_deserializer=bytes)
    return lambda: call(data)


def read(ctx: P4rt, *items: p4runtime_pb2.Entity, role: str = "") -> Callable[[], object]:
    request = p4runtime_pb2.ReadRequest(device_id=0, role=role)
    request.entities.extend(items)
    return lambda: ctx.stub.Read(request)


def role_arbitration(ctx: P4rt, config: any_pb2.Any) -> Callable[[], object]:
    """A stream whose arbitration carries `config`; the stream's end code is judged."""
    def call() -> object:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = 0
        request.arbitration.election_id.low = 7
        request.arbitration.role.name = "r"
        request.arbitration.role.config.CopyFrom(config)
        responses = ctx.stub.StreamChannel(iter([request]), timeout=10)
        return list(responses)
    return call


def struct_any(fields: dict) -> any_pb2.Any:
    message = struct_pb2.Struct()
    message.update(fields)
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


PIPELINE = p4runtime_pb2.SetForwardingPipelineConfigRequest
P4RT_CASES = [
    Case("p4rt", "write before a pipeline is set",
         lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:09"))), ("FAILED_PRECONDITION", [])),
    Case("p4rt", "unknown device", lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:09")),
                                                    device=5), ("NOT_FOUND", [])),
    Case("p4rt", "write from a non-primary election id",
         lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:09")), election=(0, 9)),
         ("PERMISSION_DENIED", [])),
    Case("p4rt", "write without election id",
         lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:09")), election=(0, 0)),
         ("PERMISSION_DENIED", [])),
    Case("p4rt", "write for a role nobody arbitrated for",
         lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:09")), role="ghost"),
         ("NOT_FOUND", [])),
    Case("p4rt", "ROLLBACK_ON_ERROR atomicity",
         lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:09")),
                         atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR),
         ("UNIMPLEMENTED", [])),
    Case("p4rt", "unknown table id",
         lambda c: write(c, (INSERT, p4runtime_pb2.Entity(
             table_entry=p4runtime_pb2.TableEntry(table_id=12345)))),
         ("UNKNOWN", ["NOT_FOUND"])),
    Case("p4rt", "update type UNSPECIFIED", lambda c: write(c, (0, l2(c, "02:00:00:00:00:09"))),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "update without entity", lambda c: write(c, (INSERT, p4runtime_pb2.Entity())),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "exact match field missing",
         lambda c: write(c, (INSERT, entity(p4runtime_pb2.TableEntry(
             table_id=l2(c, "02:00:00:00:00:09").table_entry.table_id,
             action=l2(c, "02:00:00:00:00:09").table_entry.action)))),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "priority on an exact table",
         lambda c: write(c, (INSERT, _with(l2(c, "02:00:00:00:00:09"), priority=5))),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "oversize key: 7 bytes for a 48-bit MAC",
         lambda c: write(c, (INSERT, raw_l2(c, b"\x01" * 7, b"\x01"))),
         ("UNKNOWN", ["OUT_OF_RANGE"])),
    Case("p4rt", "key wider than its field: port 512 in 9 bits",
         lambda c: write(c, (INSERT, raw_l2(c, b"\x02" * 6, b"\x02\x00"))),
         ("UNKNOWN", ["OUT_OF_RANGE"])),
    Case("p4rt", "undersize: empty key bytestring",
         lambda c: write(c, (INSERT, raw_l2(c, b"", b"\x01"))),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "unknown action id",
         lambda c: write(c, (INSERT, _action(l2(c, "02:00:00:00:00:09"), 99))),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "insert of an existing entry",
         lambda c: write(c, (INSERT, l2(c, "02:00:00:00:00:aa")), (INSERT, l2(c, "02:00:00:00:00:aa")),
                         (DELETE, l2(c, "02:00:00:00:00:aa"))),
         ("UNKNOWN", ["OK", "ALREADY_EXISTS", "OK"])),
    Case("p4rt", "modify of a missing entry",
         lambda c: write(c, (MODIFY, l2(c, "02:00:00:00:00:bb"))), ("UNKNOWN", ["NOT_FOUND"])),
    Case("p4rt", "delete of a missing entry",
         lambda c: write(c, (DELETE, l2(c, "02:00:00:00:00:bb"))), ("UNKNOWN", ["NOT_FOUND"])),
    Case("p4rt", "table full at its size (1,024)", fill_l2_then_one_more,
         ("UNKNOWN", ["RESOURCE_EXHAUSTED"])),
    Case("p4rt", "counter index beyond the array",
         lambda c: write(c, (MODIFY, entity(p4runtime_pb2.CounterEntry(
             counter_id=c.index.get("counter", "ingress_discards").preamble.id,
             index=p4runtime_pb2.Index(index=100))))),
         ("UNKNOWN", ["OUT_OF_RANGE"])),
    Case("p4rt", "value set entries", lambda c: write(c, (INSERT, p4runtime_pb2.Entity(
             value_set_entry=p4runtime_pb2.ValueSetEntry(value_set_id=1)))),
         ("UNKNOWN", ["UNIMPLEMENTED"])),
    # 20,000 per-update errors do not fit gRPC's trailer: the details are left out.
    Case("p4rt", "huge batch: 20,000 bad updates",
         lambda c: write(c, *[(INSERT, raw_l2(c, b"", b"\x01"))] * 20000),
         ("UNKNOWN", [])),
    Case("p4rt", "request bytes that are no WriteRequest", lambda c: raw_write(c, b"\xff\xff\xff"),
         ("INVALID_ARGUMENT", [])),
    Case("p4rt", "invalid UTF-8 in WriteRequest.role", lambda c: raw_write(c, b"\x32\x02\x8e\x8f"),
         ("INVALID_ARGUMENT", [])),
    Case("p4rt", "read of an entity without type", lambda c: read(c, p4runtime_pb2.Entity()),
         ("UNKNOWN", ["INVALID_ARGUMENT"])),
    Case("p4rt", "read for a role nobody arbitrated for",
         lambda c: read(c, l2(c, "02:00:00:00:00:09"), role="ghost"), ("NOT_FOUND", [])),
    Case("p4rt", "pipeline: RECONCILE_AND_COMMIT",
         lambda c: pipeline(c, PIPELINE.RECONCILE_AND_COMMIT), ("UNIMPLEMENTED", [])),
    Case("p4rt", "pipeline: device config not a BMv2 JSON",
         lambda c: pipeline(c, PIPELINE.VERIFY_AND_COMMIT, b"{\"headers\": 5}"),
         ("INVALID_ARGUMENT", [])),
    Case("p4rt", "pipeline: random bytes as device config",
         lambda c: pipeline(c, PIPELINE.VERIFY, b"\xff\x00garbage"), ("INVALID_ARGUMENT", [])),
    Case("p4rt", "role config of another scheme",
         lambda c: role_arbitration(c, struct_any({"tables": ["l2_forward"]})),
         ("INVALID_ARGUMENT", [])),
]


def _with(item: p4runtime_pb2.Entity, **fields: Any) -> p4runtime_pb2.Entity:
    for name, value in fields.items():
        setattr(item.table_entry, name, value)
    return item


def _action(item: p4runtime_pb2.Entity, action_id: int) -> p4runtime_pb2.Entity:
    item.table_entry.action.action.action_id = action_id
    return item


@pytest.fixture(scope="module")
def p4rt(buffer_program):
    document, p4info = buffer_program
    json_text = json.dumps(document)
    engine = Engine(json_text)
    server = serve(EngineTarget(engine, json_text), 0, "127.0.0.1:0")
    address = f"127.0.0.1:{server.port}"
    channel = grpc.insecure_channel(address)
    primary = SwitchConnection(address, 0, (0, 1))
    assert primary.connect()
    ctx = P4rt(p4runtime_pb2_grpc.P4RuntimeStub(channel), channel, P4InfoIndex(p4info), primary,
               p4info, json_text)
    yield ctx
    primary.close()
    channel.close()
    server.stop(0)


def run_p4rt(p4rt: P4rt, case: Case) -> None:
    observed = outcome(case.bad(p4rt))
    if case.name == "write before a pipeline is set":
        p4rt.primary.set_pipeline(p4rt.p4info, p4rt.json_text.encode())
    assert observed == case.expected
    mac = "02:00:00:00:0f:0f"
    p4rt.primary.insert(l2(p4rt, mac))
    table = l2(p4rt, mac).table_entry.table_id
    found = p4rt.primary.read(entity(p4runtime_pb2.TableEntry(table_id=table)))
    assert [e.table_entry.match[0].exact.value for e in found] == [bytes.fromhex("02000000" "0f0f")]
    p4rt.primary.delete(l2(p4rt, mac))


# -------------------------------------------------- config, topology, scenario files

def unknown_key(path: str, known: set[str]) -> list[str]:
    """The config's message for an unknown key (the known keys come from the schema)."""
    return [f"{path}: unknown key (known: {', '.join(sorted(known))})"]


GOOD_CONFIG = {"switch_id": 1, "pool_bytes": 65536, "ports": {"1": {}, "2": {}}}
CONFIG_CASES = [
    Case("config", "unknown top-level key", {"thresholds": "50%"}, unknown_key("thresholds", TOP_KEYS)),
    Case("config", "switch_id not a number", {"switch_id": "one"}, ["switch_id: must be a whole number, not 'one'"]),
    Case("config", "pool_bytes missing", {"pool_bytes": None}, ["pool_bytes: required"]),
    Case("config", "threshold above 100%", {"ports": {"1": {"threshold": "150%"}}}, ["ports.1.threshold: 150% is above 100%"]),
    Case("config", "threshold and alpha both", {"ports": {"1": {"threshold": "50%",
                                                                 "alpha": "1/8"}}}, ["ports.1: give threshold or alpha, not both"]),
    Case("config", "alpha not a power-of-two fraction", {"alpha": "1/3"}, ["alpha: 1/3 is not n/2^k with k ≤ 16 (the program divides by shifting)"]),
    Case("config", "port 600", {"ports": {"600": {}}}, ["ports.600: 600 is outside 0..510"]),
    Case("config", "unknown port key", {"ports": {"1": {"rate": 5}}}, unknown_key("ports.1.rate", PORT_KEYS)),
    Case("config", "bcn with an unknown key", {"bcn": {"enable": True, "gain": 2}}, unknown_key("bcn.gain", BCN_KEYS)),
    Case("config", "pause xon above xoff", {"pause": {"mode": "802.3x", "xoff_bytes": 1000,
                                                      "xon_bytes": 2000}}, ["pause.xon_bytes: 2000 is above pause.xoff_bytes 1000", "pause.refresh_us: required (or give link_rate_bps to refresh at half the pause time)"]),
    Case("config", "forwarding MAC malformed",
         {"forwarding": {"l2": [{"mac": "08:00:00", "port": 1}]}}, ["forwarding.l2.0.mac: '08:00:00' is not a MAC address (aa:bb:cc:dd:ee:ff)"]),
    Case("config", "forwarding to a port not in ports",
         {"forwarding": {"l2": [{"mac": "08:00:00:00:01:01", "port": 9}]}}, ["forwarding.l2.0.port: 9 is not in ports"]),
]

GOOD_TOPOLOGY = {"hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}},
                 "links": [["h1", "s1-p1"], ["h2", "s1-p2"]]}
TOPOLOGY_CASES = [
    Case("topology", "top level a list", [], "(top level): must be an object with hosts, switches, links"),
    Case("topology", "unknown top-level key", {**GOOD_TOPOLOGY, "extra": 1},
         "extra: unknown key (expected hosts, switches, links)"),
    Case("topology", "link to an unknown switch", {**GOOD_TOPOLOGY,
                                                  "links": [["h1", "s2-p1"], ["h2", "s1-p2"]]},
         "links[0][1]: unknown switch 's2'"),
    Case("topology", "host linked nowhere", {**GOOD_TOPOLOGY, "links": [["h1", "s1-p1"]]},
         "hosts.h2: host is not linked to any switch port"),
    Case("topology", "negative link rate",
         {**GOOD_TOPOLOGY, "links": [{"a": "h1", "b": "s1-p1", "rate_bps": -5}, ["h2", "s1-p2"]]},
         "links[0].rate_bps: must be 0 or more, not -5"),
    Case("topology", "two links on one switch port",
         {**GOOD_TOPOLOGY, "links": [["h1", "s1-p1"], ["h2", "s1-p1"]]}, "links[1]: s1-p1 is already linked in links[0]"),
    Case("topology", "links not a list", {**GOOD_TOPOLOGY, "links": {"h1": "s1-p1"}}, "links: must be a list"),
]

SCENARIO_CASES = [
    Case("scenario", "unknown top-level key", {"durations": 5}, "(top level).durations: unknown key (expected one of ['comment', 'duration_ns', 'record', 'seed', 'sources', 'switches', 'tcp_flows', 'topology'])"),
    Case("scenario", "duration_ns missing", {"duration_ns": None}, "duration_ns: required"),
    Case("scenario", "duration_ns zero", {"duration_ns": 0}, "duration_ns: must be an integer >= 1, not 0"),
    Case("scenario", "switch of no topology", {"switches": {"s1": {}, "s9": {}}}, "switches.s9: not a switch of the topology"),
    Case("scenario", "sources not a list", {"sources": {"a": 1}}, "sources: must be a list"),
    Case("scenario", "source without name", {"sources": [{"host": "h1", "destination": "h2",
                                                          "pattern": "constant",
                                                          "rate_bps": 1000}]}, "sources[0].name: required (a name)"),
    Case("scenario", "source of an unknown host", {"sources": [{"name": "a", "host": "h7",
                                                                "destination": "h2",
                                                                "pattern": "constant",
                                                                "rate_bps": 1000}]}, "sources[0].host: no host 'h7' in the topology"),
    Case("scenario", "unknown pattern", {"sources": [{"name": "a", "host": "h1",
                                                      "destination": "h2", "pattern": "burst",
                                                      "rate_bps": 1000}]}, "sources[0].pattern: 'burst': use 'constant' or 'bernoulli'"),
    Case("scenario", "two sources with one name",
         {"sources": [{"name": "a", "host": "h1", "destination": "h2", "pattern": "constant",
                       "rate_bps": 1000}] * 2}, "sources: two sources are named 'a'"),
]


def good_scenario(tmp_path: Path) -> dict:
    (tmp_path / "s1.json").write_text(json.dumps(GOOD_CONFIG))
    return {"topology": GOOD_TOPOLOGY, "switches": {"s1": {"config": "s1.json"}},
            "sources": [{"name": "a", "host": "h1", "destination": "h2", "pattern": "constant",
                         "rate_bps": 1000}], "duration_ns": 1000}


def merged(base: dict, changes: dict) -> dict:
    result = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def run_config(case: Case) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(merged(GOOD_CONFIG, case.bad))
    assert error.value.errors == case.expected
    assert sorted(parse_config(GOOD_CONFIG).ports) == [1, 2]


def run_topology(case: Case) -> None:
    with pytest.raises(TopologyError) as error:
        parse_topology(case.bad)
    assert str(error.value) == case.expected
    assert sorted(parse_topology(GOOD_TOPOLOGY).hosts) == ["h1", "h2"]


def run_scenario(case: Case, tmp_path: Path) -> None:
    good = good_scenario(tmp_path)
    with pytest.raises(ScenarioError) as error:
        parse_scenario(merged(good, case.bad), tmp_path)
    assert str(error.value) == case.expected
    assert [s.name for s in parse_scenario(good, tmp_path).sources] == ["a"]


# --------------------------------------------------------------- command lines

def ctl_commands() -> list[str]:
    """bufferlab-ctl's commands, in its order."""
    from bufferlab.controller.cli import COMMANDS

    return list(COMMANDS)


CTL_COMMANDS = ", ".join(f"'{c}'" for c in ctl_commands())
CLI_CASES = [
    Case("cli", "bufferlab-switch: no program", ["bufferlab-switch"], (2, 'bufferlab-switch: error: give a BMv2 JSON file or --no-p4\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: -i without @", ["bufferlab-switch", "-i", "1", "x.json"], (2, "bufferlab-switch: error: argument -i/--interface: '1': write PORT@IFACE, e.g. 1@s1-eth1\n(see bufferlab-switch --help)\n")),
    Case("cli", "bufferlab-switch: port 512", ["bufferlab-switch", "-i", "512@veth0", "x.json"],
         (2, 'bufferlab-switch: error: argument -i/--interface: port 512: ports are 0..511\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: unknown option", ["bufferlab-switch", "--frobnicate", "x.json"],
         (2, 'bufferlab-switch: error: unrecognized arguments: --frobnicate\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: 9 priority queues",
         ["bufferlab-switch", "x.json", "--", "--priority-queues", "9"], (2, 'bufferlab-switch: error: --priority-queues 9: 1..8 queues per port\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: gRPC address without port",
         ["bufferlab-switch", "x.json", "--", "--grpc-server-addr", "localhost"], (2, "bufferlab-switch: error: argument --grpc-server-addr: 'localhost': write HOST:PORT, e.g. 0.0.0.0:50051\n(see bufferlab-switch --help)\n")),
    Case("cli", "bufferlab-switch: TLS key without --grpc-server-ssl",
         ["bufferlab-switch", "x.json", "--", "--grpc-server-key", "k.pem"], (2, 'bufferlab-switch: error: --grpc-server-key needs --grpc-server-ssl\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: --grpc-server-ssl without certificate",
         ["bufferlab-switch", "x.json", "--", "--grpc-server-ssl"], (2, 'bufferlab-switch: error: --grpc-server-ssl needs --grpc-server-cert and --grpc-server-key\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: client auth without CA",
         ["bufferlab-switch", "x.json", "--", "--grpc-server-ssl", "--grpc-server-cert", "{c}",
          "--grpc-server-key", "{c}", "--grpc-server-with-client-auth"], (2, 'bufferlab-switch: error: --grpc-server-with-client-auth needs --grpc-server-cacert (the CA that signs client certificates)\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-switch: unreadable certificate",
         ["bufferlab-switch", "x.json", "--", "--grpc-server-ssl", "--grpc-server-cert",
          "/nonexistent.pem", "--grpc-server-key", "{c}"], (2, 'bufferlab-switch: error: --grpc-server-cert /nonexistent.pem: cannot read the file\n(see bufferlab-switch --help)\n')),
    Case("cli", "bufferlab-ctl: election id 0", ["bufferlab-ctl", "--election-id", "0", "dump", "t"],
         (2, "bufferlab-ctl: error: argument --election-id: '0': election id must be a positive 128-bit value\n")),
    Case("cli", "bufferlab-ctl: unknown command", ["bufferlab-ctl", "reboot"], (2, "bufferlab-ctl: error: argument COMMAND: invalid choice: 'reboot' (choose from " + CTL_COMMANDS + ")\n")),
    Case("cli", "bufferlab-ctl: --cert without --private-key",
         ["bufferlab-ctl", "--ssl", "--cert", "{c}", "dump", "t"], (2, 'bufferlab-ctl: error: --cert and --private-key go together (mutual TLS)\n')),
    Case("cli", "bufferlab-sim: missing scenario file", ["bufferlab-sim", "/nonexistent.json"], (2, 'bufferlab-sim: /nonexistent.json: cannot read: No such file or directory\n')),
    Case("cli", "bufferlab-p4c: missing source", ["bufferlab-p4c", "/nonexistent.p4"], (1, 'error: /nonexistent.p4: no such file\n')),
]


def run_cli(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture,
            monkeypatch: pytest.MonkeyPatch) -> None:
    from bufferlab.compiler.cli import main as p4c_main
    from bufferlab.controller.cli import main as ctl_main
    from bufferlab.experiments.scenario.cli import main as sim_main
    from bufferlab.switch.cli import parse_args as switch_args

    certificate = tmp_path / "c.pem"
    certificate.write_text("not really a certificate")
    argv = [a.replace("{c}", str(certificate)) for a in case.bad]
    monkeypatch.setattr("sys.argv", argv)  # bufferlab-p4c reads its own sys.argv
    entry = {"bufferlab-switch": lambda args: switch_args(args) and 0,
             "bufferlab-ctl": ctl_main, "bufferlab-sim": sim_main,
             "bufferlab-p4c": lambda _args: p4c_main()}[argv[0]]
    try:
        status = entry(argv[1:])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err
    # argparse's usage block is its own; the error line after it is what is judged.
    if err.startswith("usage:"):
        err = err[err.index(f"{argv[0]}: error:"):]
    assert (status, err) == case.expected
    assert switch_args(["x.json", "--", "--grpc-server-addr", "127.0.0.1:9559"]).json_path == (
        "x.json")


CATALOGUE = (FRAME_CASES + JSON_CASES + P4RT_CASES + CONFIG_CASES + TOPOLOGY_CASES
             + SCENARIO_CASES + CLI_CASES)


@pytest.mark.parametrize("case", CATALOGUE, ids=[f"{c.kind}: {c.name}" for c in CATALOGUE])
def test_bad_input_gets_its_error_and_loses_nothing(case, request, tmp_path, capsys,
                                                    monkeypatch):
    if case.kind == "frame":
        run_frame(request.getfixturevalue("forward"), case)
    elif case.kind == "json":
        run_json(request.getfixturevalue("buffer_program"), case)
    elif case.kind == "p4rt":
        run_p4rt(request.getfixturevalue("p4rt"), case)
    elif case.kind == "config":
        run_config(case)
    elif case.kind == "topology":
        run_topology(case)
    elif case.kind == "scenario":
        run_scenario(case, tmp_path)
    else:
        run_cli(case, tmp_path, capsys, monkeypatch)
