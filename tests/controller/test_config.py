"""The buffer program's config file: defaults, inheritance, and one exact message per bad
key or value (including the ranges p4src/README.md says the program does not check)."""

import copy
import json
from pathlib import Path

import pytest

from bufferlab.controller.config import (
    NO_CAP,
    Bcn,
    ConfigError,
    Pause,
    Scheduler,
    Threshold,
    load_config,
    parse_alpha,
    parse_config,
)
from bufferlab.controller.scheduler import scheduler_commands

GOOD = {
    "switch_id": 1,
    "pool_bytes": 1_048_576,
    "priority_queues": 2,
    "ports": {"1": {}, "2": {}, "3": {}},
}


def with_(changes: dict, base: dict = GOOD) -> dict:
    """GOOD with `changes` merged in (dicts merge recursively, other values replace)."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = with_(value, out[key])
        else:
            out[key] = value
    return out


def errors_of(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    return info.value.errors


def test_minimal_config_takes_the_documented_defaults():
    config = parse_config({"switch_id": 7, "pool_bytes": 100_000, "ports": {"1": {}, "2": {}}})
    assert (config.priority_queues, config.port_session_base, config.all_ports_session,
            config.flood_group) == (1, 1, 511, 1)
    assert config.threshold == Threshold(percent=100)
    assert config.queue_cap_bytes == NO_CAP
    assert config.bcn == Bcn(enable=False) and config.pause == Pause(mode="off")
    assert config.classes == {} and config.default_queue == 0
    assert sorted(config.ports) == [1, 2]
    assert config.ports[1].queue_caps_bytes == (NO_CAP,)


def test_port_sections_override_switch_wide_ones_key_by_key():
    config = parse_config(with_({
        "alpha": "1/2",
        "queue_cap_bytes": 50_000,
        "bcn": {"qeq_bytes": 12_800},
        "pause": {"mode": "pfc", "xoff_bytes": 20_000, "xon_bytes": 10_000, "refresh_us": 1000},
        "ports": {"2": {"threshold": "50%", "queue_caps_bytes": {"1": 8000},
                        "bcn": {"w": 4}, "pause": {"xon_bytes": 15_000}},
                  "3": {"bcn": {"enable": False}, "pause": {"mode": "off"}}},
    }))
    one, two, three = config.ports[1], config.ports[2], config.ports[3]
    assert one.threshold == Threshold(percent=None, alpha_num=1, alpha_shift=1)
    assert two.threshold == Threshold(percent=50)
    assert one.queue_caps_bytes == (50_000, 50_000) and two.queue_caps_bytes == (50_000, 8000)
    assert one.bcn == Bcn(enable=True, qeq_bytes=12_800)
    assert two.bcn == Bcn(enable=True, qeq_bytes=12_800, w=4)
    assert three.bcn.enable is False
    assert two.pause == Pause(mode="pfc", xoff_bytes=20_000, xon_bytes=15_000, quanta=0xFFFF,
                              refresh_us=1000)
    assert three.pause.mode == "off"


def test_an_empty_bcn_section_enables_the_seed_values():
    bcn = parse_config(with_({"bcn": {}})).ports[1].bcn
    assert bcn.action() == ("bcn_enable", {"qeq_pages": 375, "w": 2, "qsc_pages": 0,
                                           "sample_bytes": 150_000, "jitter_bytes": 20_000})


def test_refresh_defaults_to_half_the_pause_time_of_the_link():
    # 65,535 quanta × 512 bit at 10 Gb/s = 3,355.392 µs; half is 1,677 µs.
    pause = parse_config(with_({"pause": {"link_rate_bps": 10_000_000_000}})).pause
    assert (pause.mode, pause.xoff_bytes, pause.xon_bytes, pause.refresh_us) == (
        "802.3x", 140_800, 128_000, 1677)


@pytest.mark.parametrize(("text", "num", "shift"), [
    ("1/8", 1, 3), ("3/4", 3, 2), ("2", 2, 0), (0.25, 1, 2), ("1/65536", 1, 16), (8, 8, 0)])
def test_alpha_becomes_num_over_a_power_of_two(text, num, shift):
    assert parse_alpha(text) == ((num, shift), None)


@pytest.mark.parametrize(("changes", "messages"), [
    ({"ports": {"3": {"threshold": "150%"}}}, ["ports.3.threshold: 150% is above 100%"]),
    ({"ports": {"3": {"threshold": "0%"}}}, ["ports.3.threshold: 0% is below 1%"]),
    ({"ports": {"3": {"threshold": "12.5%"}}}, ["ports.3.threshold: 12.5% is not a whole percent"]),
    ({"threshold": 50}, ['threshold: write a percentage of the pool such as "50%", not 50']),
    ({"ports": {"2": {"alpha": "1/3"}}},
     ["ports.2.alpha: 1/3 is not n/2^k with k ≤ 16 (the program divides by shifting)"]),
    ({"alpha": "1/131072"},
     ["alpha: 1/131072 is not n/2^k with k ≤ 16 (the program divides by shifting)"]),
    ({"alpha": "0"}, ["alpha: must be positive"]),
    ({"alpha": "70000"}, ["alpha: 70000: numerator 70000 is above 65535"]),
    ({"alpha": "lots"}, ["alpha: write alpha as a fraction such as \"1/8\" or a number, not 'lots'"]),
    ({"threshold": "50%", "alpha": "1/2"}, ["(top level): give threshold or alpha, not both"]),
    ({"bcn": {"w": 0}}, ["bcn.w: must be positive"]),
    ({"bcn": {"w": 300}}, ["bcn.w: 300 is above 255"]),
    ({"bcn": {"qeq_bytes": 24_001}},
     ["bcn.qeq_bytes: 24001 is not a multiple of 64 (BCN counts 64-byte pages)"]),
    ({"bcn": {"sample_bytes": 20_000}},
     ["bcn.jitter_bytes: 20000 is not below bcn.sample_bytes 20000"]),
    ({"ports": {"2": {"bcn": {"jitter_bytes": 150_000}}}},
     ["ports.2.bcn.jitter_bytes: 150000 is not below ports.2.bcn.sample_bytes 150000"]),
    ({"bcn": {"enable": "yes"}}, ["bcn.enable: must be true or false, not 'yes'"]),
    ({"bcn": {"qeq": 24_000}},
     ["bcn.qeq: unknown key (known: enable, fb_bits, fb_range_bytes, jitter_bytes,"
      " positive_to, qeq_bytes, qoff_max_bytes, qsc_bytes, sample_bytes, w)"]),
    ({"pause": {"xoff_bytes": 20_000, "xon_bytes": 30_000, "refresh_us": 100}},
     ["pause.xon_bytes: 30000 is above pause.xoff_bytes 20000"]),
    ({"pause": {"xoff_bytes": 20_000, "xon_bytes": 10_000, "refresh_us": 100},
      "ports": {"1": {"pause": {"xon_bytes": 25_000}}}},
     ["ports.1.pause.xon_bytes: 25000 is above pause.xoff_bytes 20000"]),
    ({"pause": {"refresh_us": 100, "quanta": 0}}, ["pause.quanta: must be positive"]),
    ({"pause": {"refresh_us": 100, "quanta": 70_000}}, ["pause.quanta: 70000 is above 65535"]),
    ({"pause": {}}, ["pause.refresh_us: required (or give link_rate_bps to refresh at half the pause time)"]),
    ({"pause": {"refresh_us": 4000, "link_rate_bps": 10_000_000_000}},
     ["pause.refresh_us: 4000 µs is not shorter than the pause time 3355.39 µs (65535 quanta at 10000000000 bit/s)"]),
    ({"pause": {"mode": "xon", "refresh_us": 100}}, ["pause.mode: 'xon' is not one of 802.3x, pfc, off"]),
    ({"switch_id": 70_000}, ["switch_id: 70000 is above 65535"]),
    ({"pool_bytes": 0}, ["pool_bytes: must be positive"]),
    ({"pool_bytes": "1MB"}, ["pool_bytes: must be a whole number, not '1MB'"]),
    ({"priority_queues": 9}, ["priority_queues: 9 is above 8"]),
    ({"all_ports_session": 1000}, ["all_ports_session: 1000 is above 511"]),
    ({"all_ports_session": 3},
     ["all_ports_session: 3 is also the clone session of port 2 (port_session_base 1 + 2)"]),
    ({"port_session_base": 509, "all_ports_session": 100},
     ["ports.3: its clone session port_session_base + 3 = 512 is above 511"]),
    ({"flood_group": 40_000}, ["flood_group: 40000 is above 32767"]),
    ({"ports": {"600": {}}}, ["ports.600: 600 is outside 0..510"]),
    ({"ports": {"eth0": {}}}, ["ports.eth0: must be a decimal number"]),
    ({"ports": {"1": {"rate": 5}}},
     ["ports.1.rate: unknown key (known: alpha, bcn, ecn_k_bytes, pause, queue_caps_bytes,"
      " scheduler, threshold)"]),
    ({"ports": {"1": {"ecn_k_bytes": 1.5}}}, ["ports.1.ecn_k_bytes: must be a whole number, not 1.5"]),
    ({"ports": {"1": {"queue_caps_bytes": {"2": 1000}}}}, ["ports.1.queue_caps_bytes.2: 2 is outside 0..1"]),
    ({"ports": {"1": {"queue_caps_bytes": {"0": 0}}}}, ["ports.1.queue_caps_bytes.0: must be positive"]),
    ({"classes": {"64": 0}}, ["classes.64: 64 is outside 0..63"]),
    ({"classes": {"10": 2}}, ["classes.10: queue 2 is not below priority_queues 2"]),
    ({"classes": {"default": -1}}, ["classes.default: queue -1 is not below priority_queues 2"]),
    ({"forwarding": {"l2": [{"mac": "08:00:00:00:01:01", "port": 9}]}}, ["forwarding.l2.0.port: 9 is not in ports"]),
    ({"forwarding": {"l2": [{"mac": "08:00:00:00:01", "port": 1}]}},
     ["forwarding.l2.0.mac: '08:00:00:00:01' is not a MAC address (aa:bb:cc:dd:ee:ff)"]),
    ({"forwarding": {"l2": [{"mac": "08:00:00:00:01:01", "port": 1}, {"mac": "08:00:00:00:01:01", "port": 2}]}},
     ["forwarding.l2.1.mac: 08:00:00:00:01:01 is already in forwarding.l2.0"]),
    ({"forwarding": {"routes": [{"prefix": "10.0.1.1/24", "next_hop_mac": "08:00:00:00:01:01", "port": 1}]}},
     ["forwarding.routes.0.prefix: '10.0.1.1/24' is not an IPv4 prefix a.b.c.d/len (10.0.1.1/24 has host bits set)"]),
    ({"forwarding": {"routes": [{"prefix": "10.0.1.0/24", "port": 1}]}}, ["forwarding.routes.0.next_hop_mac: required"]),
    ({"forwarding": {"runtime_json": "missing-runtime.json"}},
     ["forwarding.runtime_json: missing-runtime.json: no such file (relative to the config file)"]),
    ({"forwarding": {"arp": []}}, ["forwarding.arp: unknown key (known: l2, routes, runtime_json)"]),
    ({"pool": 5}, ["pool: unknown key (known: all_ports_session, alpha, bcn, classes, ecn_k_bytes,"
                   " flood_group, forwarding,"
                   " pause, pool_bytes, port_session_base, ports, priority_queues, queue_cap_bytes,"
                   " scheduler, switch_id, threshold, tofino_tm)"]),
])
def test_each_bad_key_or_value_is_named_with_its_reason(changes, messages):
    assert errors_of(with_(changes)) == messages


def test_missing_required_keys_and_every_problem_at_once():
    assert errors_of({"ports": {}, "bcn": {"w": 0}, "threshold": "101%"}) == [
        "switch_id: required", "pool_bytes: required", "threshold: 101% is above 100%",
        "bcn.w: must be positive", "ports: must be a non-empty object {\"PORT\": {port settings}, ...}"]
    assert errors_of([1, 2]) == ["(top level): must be an object"]


def test_a_switch_wide_mistake_is_reported_once_for_all_ports():
    raw = with_({"bcn": {"w": 0}, "ports": {"1": {"bcn": {"qeq_bytes": 6400}},
                                           "2": {"bcn": {"qsc_bytes": 64_000}}}})
    assert errors_of(raw) == ["bcn.w: must be positive"]


def test_load_config_reports_unreadable_files_and_bad_json(tmp_path):
    with pytest.raises(ConfigError, match=r"nope.json: cannot read: No such file"):
        load_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"switch_id": 1,\n "pool_bytes": }')
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert info.value.errors == [f"{bad}: not JSON: Expecting value at line 2 column 16"]


def test_runtime_json_is_found_next_to_the_config(tmp_path):
    (tmp_path / "s1-runtime.json").write_text("{}")
    path = tmp_path / "s1.json"
    path.write_text(json.dumps(with_({"forwarding": {"runtime_json": "s1-runtime.json"}})))
    assert load_config(path).runtime_json == tmp_path / "s1-runtime.json"


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "experiments" / "configs").glob("*.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_configs_are_valid(path):
    config = load_config(path)
    assert config.ports and all(e.port in config.ports for e in config.l2)


def test_seed_001_with_8023x_example_has_the_seed_values():
    config = load_config(next(p for p in EXAMPLES if p.name == "seed001_bcn_8023x.json"))
    port = config.ports[5]
    assert port.bcn.action() == ("bcn_enable", {"qeq_pages": 375, "w": 2, "qsc_pages": 0,
                                                "sample_bytes": 150_000, "jitter_bytes": 20_000})
    assert port.pause == Pause(mode="802.3x", xoff_bytes=140_800, xon_bytes=128_000,
                               quanta=65535, refresh_us=1677)
    assert config.ports[1].bcn.enable is False and config.ports[1].pause.mode == "off"


def test_scheduler_weights_per_queue_switch_wide_and_per_port():
    config = parse_config(with_({"priority_queues": 3,
                                 "scheduler": {"0": "1%", "1": "29%", "2": "70%"},
                                 "ports": {"2": {"scheduler": "strict"},
                                           "3": {"scheduler": {"0": "30%", "1": "69%",
                                                               "2": "1%"}}}}))
    assert config.scheduler == Scheduler((1, 29, 70))
    assert config.ports[1].scheduler == Scheduler((1, 29, 70))
    assert config.ports[2].scheduler == Scheduler() and config.ports[2].scheduler.strict
    assert config.ports[3].scheduler.weights_percent == (30, 69, 1)
    assert parse_config(GOOD).ports[1].scheduler is None
    assert scheduler_commands(config) == ["set_port_scheduler 1 drr 15 435 1050",
                                          "set_port_scheduler 2 strict",
                                          "set_port_scheduler 3 drr 450 1035 15"]
    assert scheduler_commands(parse_config(GOOD)) == []


@pytest.mark.parametrize(("scheduler", "message"), [
    ("fair", "scheduler: write \"strict\" or weights {\"QUEUE\": \"P%\", ...}, not 'fair'"),
    ({}, "scheduler: write \"strict\" or weights {\"QUEUE\": \"P%\", ...}, not {}"),
    ({"0": "50%"}, "scheduler: queue 1 has no weight (give each of the 2 queues one)"),
    ({"0": "50%", "2": "50%"}, "scheduler.2: 2 is outside 0..1"),
    ({"0": "60%", "1": "50%"}, "scheduler: the weights add up to 110%, above 100%"),
    ({"0": "0%", "1": "50%"}, "scheduler.0: 0% is below 1%"),
    ({"0": "2.5%", "1": "50%"}, "scheduler.0: 2.5% is not a whole percent"),
    ({"0": 50, "1": "50%"}, 'scheduler.0: write a percentage of the port such as "50%", not 50'),
])
def test_scheduler_errors_name_the_key(scheduler, message):
    assert errors_of(with_({"scheduler": scheduler})) == [message]


def test_port_scheduler_errors_name_the_port():
    assert errors_of(with_({"ports": {"2": {"scheduler": {"0": "90%", "1": "20%"}}}})) == [
        "ports.2.scheduler: the weights add up to 110%, above 100%"]


def test_seed_002_example_maps_classes_and_weights_the_bottleneck():
    config = load_config(next(p for p in EXAMPLES if p.name == "seed002_qbss.json"))
    assert config.classes == {8: 0, 10: 2} and config.default_queue == 1
    assert config.ports[2].scheduler == Scheduler((1, 29, 70))
    assert config.ports[2].queue_caps_bytes == (96_896,) * 3
    assert config.ports[1].scheduler is None
