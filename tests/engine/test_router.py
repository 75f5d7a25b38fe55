"""An IPv4 router (l3.json) end to end, loader errors, and determinism."""

import json

import pytest
from engine_helpers import FIXTURES, csum16, ipv4

from bufferlab.switch import Engine, LoadError, NotFoundError, OutOfRangeError


def test_forward_rewrites_and_updates_checksum(l3):
    l3.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.2.0", 24)}, "MyIngress.ipv4_forward",
                 {"dstAddr": "08:00:00:00:02:22", "port": 2})
    l3.send(1, ipv4("10.0.2.2", ttl=64), 0)
    l3.drain()
    ((port, f, _),) = l3.received()
    assert port == 2
    assert f[0:6] == bytes.fromhex("080000000222")
    assert f[6:12] == bytes.fromhex("000000000002")
    assert f[22] == 63
    assert csum16(f[14:34]) == 0
    assert f[34:] == b"payload"
    assert l3.counter_read("MyIngress.port_bytes", 2) == (1, len(f))


def test_non_ipv4_uses_l2_table(l3):
    l3.table_add("MyIngress.dmac", ["ff:ff:ff:ff:ff:ff"], "MyIngress.l2_forward", [4])
    frame = bytes.fromhex("ffffffffffff") + bytes(6) + b"\x08\x06" + bytes(46)
    l3.send(1, frame, 0)
    l3.drain()
    assert l3.received() == [(4, frame, 0)]


def test_ttl_wraps_through_mask(l3):
    l3.table_add("MyIngress.ipv4_lpm", [("0.0.0.0", 0)], "MyIngress.ipv4_forward", [1, 3])
    l3.send(1, ipv4("1.2.3.4", ttl=0), 0)
    l3.drain()
    ((_, f, _),) = l3.received()
    assert f[22] == 255


def test_counter_api_errors(l3):
    with pytest.raises(OutOfRangeError):
        l3.counter_read("MyIngress.port_bytes", 512)
    with pytest.raises(NotFoundError):
        l3.counter_read("MyIngress.nope", 0)
    l3.counter_write("MyIngress.port_bytes", 7, 3, 300)
    assert l3.counter_read("MyIngress.port_bytes", 7) == (3, 300)


def test_same_inputs_give_same_outputs():
    def run():
        e = Engine(FIXTURES / "l3.json")
        e.table_add("MyIngress.ipv4_lpm", [("10.0.0.0", 8)], "MyIngress.ipv4_forward", [5, 2])
        e.configure_port(2, rate_bps=100_000_000, delay_ns=1234)
        for i in range(200):
            e.send(i % 3, ipv4(f"10.0.{i % 7}.{i % 250}", payload=bytes(i % 50)), i * 500)
        e.drain()
        return e.received(), e.queue_stats(2, 0)

    assert run() == run()


def mutate(change):
    doc = json.loads((FIXTURES / "l3.json").read_text())
    change(doc)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["actions"][2]["primitives"][0].update(op="frobnicate"),
         "actions[2] 'MyIngress.ipv4_forward' primitive 0: Unknown primitive action: frobnicate"),
        (lambda d: d["actions"][2]["primitives"][1]["parameters"][1].update(value=["ethernet", "nope"]),
         "unknown field 'ethernet.nope'"),
        (lambda d: d["headers"][2].update(header_type="missing_t"),
         "headers[2] 'ethernet': unknown header_type 'missing_t'"),
        (lambda d: d["pipelines"][0]["tables"][0].update(base_default_next="nowhere"),
         "tables[0] 'MyIngress.ipv4_lpm': unknown next node 'nowhere'"),
        (lambda d: d["parsers"][0]["parse_states"][0]["transitions"][0].update(next_state="nowhere"),
         "parse_states[0] 'start' transition 0: unknown parse state 'nowhere'"),
        (lambda d: d["__meta__"].update(version=[3, 0]), "__meta__.version"),
        (lambda d: d["header_types"][1]["fields"].pop(0), "required field 'ingress_port' is missing"),
        (lambda d: d["header_types"][1]["fields"][0].__setitem__(1, 72),
         "standard_metadata: field 'standard_metadata.ingress_port' is 72 bits wide; "
         "the engine's standard metadata fields are at most 64 bits"),
    ],
)
def test_load_errors_name_object_and_reason(change, message):
    with pytest.raises(LoadError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        Engine(mutate(change))


def test_load_error_on_bad_json_text():
    with pytest.raises(LoadError, match="JSON syntax"):
        Engine("{ not json")


def test_set_program_resets_state_keeps_ports(l3):
    l3.table_add("MyIngress.ipv4_lpm", [("10.0.0.0", 8)], "MyIngress.ipv4_forward", [1, 2])
    l3.configure_port(2, rate_bps=1_000_000, delay_ns=777)
    l3.mc_group_set(5, [(1, 1)])
    l3.send(1, ipv4("10.0.0.9"), 0)
    from bufferlab.switch import FailedPreconditionError

    with pytest.raises(FailedPreconditionError):
        l3.set_program((FIXTURES / "meta.json").read_text())
    t = l3.drain()
    assert len(l3.received()) == 1
    l3.set_program((FIXTURES / "l3.json").read_text())
    assert l3.table_entries("MyIngress.ipv4_lpm") == []
    assert l3.mc_groups() == []
    assert l3.port_config(2)["delay_ns"] == 777
    assert l3.now() == t
    with pytest.raises(LoadError):
        l3.set_program("{}")


def test_deparser_primitives_run_after_checksum_update():
    doc = json.loads((FIXTURES / "l3.json").read_text())
    doc["deparsers"][0]["primitives"] = [
        {"op": "log_msg", "parameters": [
            {"type": "string", "value": "x = {}, ttl = {}, s = {}"},
            {"type": "parameters_vector", "value": [
                {"type": "hexstr", "value": "0x01"},
                {"type": "field", "value": ["ipv4", "ttl"]},
                {"type": "expression", "value": {"type": "expression", "value": {
                    "op": "two_comp_mod",
                    "left": {"type": "expression", "value": {
                        "op": "-", "left": {"type": "hexstr", "value": "0x00"},
                        "right": {"type": "hexstr", "value": "0x05"}}},
                    "right": {"type": "hexstr", "value": "0x8"}}}},
            ]}]},
        {"op": "assign", "parameters": [{"type": "field", "value": ["ipv4", "identification"]},
                                        {"type": "hexstr", "value": "0xbeef"}]},
    ]
    e = Engine(json.dumps(doc))
    e.table_add("MyIngress.ipv4_lpm", [("10.0.0.0", 8)], "MyIngress.ipv4_forward", [1, 2])
    e.send(1, ipv4("10.0.0.9", ttl=20), 0)
    e.drain()
    ((_, f, _),) = e.received()
    assert e.log() == ["x = 1, ttl = 19, s = -5"]
    assert f[18:20] == b"\xbe\xef"
    # The checksum was computed before the deparser changed the identification.
    assert csum16(f[14:34]) != 0
    g = bytearray(f[14:34])
    g[4:6] = b"\0\0"
    assert csum16(bytes(g)) == 0
