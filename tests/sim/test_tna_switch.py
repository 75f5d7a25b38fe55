"""A TNA program in the simulator: a scenario whose switch runs tests/p4/tna/l2_forward.p4,
programmed from a tutorials-style runtime file over P4Runtime as any other program; the
frames a constant source sends arrive, and the unknown-destination flood reaches every
other host but not the sender (egress drops that copy)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from bufferlab.experiments.scenario.cli import main

ROOT = Path(__file__).resolve().parents[2]


def write_scenario(tmp_path: Path, destination: str) -> Path:
    hosts = {f"h{n}": {} for n in (1, 2, 3)}
    runtime = {
        "target": "tofino",
        "table_entries": [
            {"table": "pipe.Ingress.l2_forward", "match": {"hdr.ethernet.dst_addr": f"08:00:00:00:01:{n:02x}"},
             "action_name": "Ingress.to_port", "action_params": {"port": n}}
            for n in (1, 2)
        ],
        "multicast_group_entries": [
            {"multicast_group_id": 1, "replicas": [{"egress_port": n, "instance": n} for n in (1, 2, 3)]},
        ],
    }
    (tmp_path / "s1-runtime.json").write_text(json.dumps(runtime))
    scenario = {
        "topology": {
            "hosts": hosts,
            "switches": {"s1": {}},
            "links": [{"a": f"h{n}", "b": f"s1-p{n}", "rate_bps": 10_000_000_000, "delay_ns": 1000}
                      for n in (1, 2, 3)],
        },
        "switches": {"s1": {"program": str(ROOT / "tests" / "p4" / "tna" / "l2_forward.p4"),
                            "runtime_json": "s1-runtime.json"}},
        "sources": [{"name": "a", "host": "h1", "destination": destination, "rate_bps": 1_000_000_000,
                     "sizes_bytes": 1000, "stop_ns": 100_000}],
        "duration_ns": 200_000,
        "seed": 1,
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    return path


def switch_row(out: Path) -> dict[str, str]:
    with (out / "switches.csv").open() as f:
        [row] = list(csv.DictReader(f))
    return row


def test_a_tna_switch_forwards_a_constant_source_in_virtual_time(tmp_path):
    out = tmp_path / "out"
    assert main([str(write_scenario(tmp_path, "h2")), "--out", str(out)]) == 0
    row = switch_row(out)
    # 1 Gbit/s of 1,000-byte frames (1,024 on the wire) for 100 us: 13 frames, all through.
    assert int(row["received_frames"]) == 13
    assert int(row["transmitted_frames"]) == 13
    assert int(row["dropped_by_program_frames"]) == 0


def test_a_flood_reaches_the_other_hosts_and_egress_drops_the_copy_back(tmp_path):
    out = tmp_path / "out"
    assert main([str(write_scenario(tmp_path, "h3")), "--out", str(out)]) == 0
    row = switch_row(out)
    # h3's MAC has no entry: each frame is replicated to ports 1, 2 and 3; egress drops
    # the copy for port 1, where it came from.
    assert int(row["received_frames"]) == 13
    assert int(row["transmitted_frames"]) == 26
    assert int(row["dropped_by_program_frames"]) == 13
