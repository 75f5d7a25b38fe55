"""The config's tofino_tm section (Tofino's tf1.tm.* tables by name) as runtime CLI
lines, refused with the key path of each problem, and applied to a TNA switch."""

import json
from pathlib import Path

import pytest

from bufferlab.compiler.api import compile_program
from bufferlab.controller.cli import main
from bufferlab.controller.config import ConfigError
from bufferlab.controller.tofino_tm import tm_commands_from
from bufferlab.switch import Engine
from bufferlab.switch.runtime_cli import Executor

ROOT = Path(__file__).resolve().parents[2]

SECTION = {
    "tofino_tm": {
        "pool.cfg": {"EG_APP_POOL_0": {"size_cells": 500}},
        "pipe.cfg": {"0": {"mirror_drop_enable": False}},
        "ports": {
            "1": {
                "port.flowcontrol": {"mode_tx": "PFC", "cos_to_icos": [0, 1, 2, 3, 4, 5, 6, 7]},
                "ppg.cfg": {"3": {"guaranteed_cells": 26, "hysteresis_cells": 13, "pfc_enable": True,
                                  "pfc_skid_max_cells": 13}},
            },
            "2": {"queue.buffer": {"0": {"pool_id": "EG_APP_POOL_0", "dynamic_baf": "80%"}},
                  "queue.cfg": {"0": {"pfc_cos": 3}}},
        },
    }
}


def test_the_section_becomes_tm_commands_in_order():
    assert tm_commands_from(SECTION) == [
        "tm_pool_cfg EG_APP_POOL_0 size_cells=500",
        "tm_pipe_cfg 0 mirror_drop_enable=false",
        "tm_port_flowcontrol 1 mode_tx=PFC cos_to_icos=0,1,2,3,4,5,6,7",
        "tm_ppg_cfg 1 3 guaranteed_cells=26 hysteresis_cells=13 pfc_enable=true pfc_skid_max_cells=13",
        "tm_queue_buffer 2 0 pool_id=EG_APP_POOL_0 dynamic_baf=80%",
        "tm_queue_cfg 2 0 pfc_cos=3",
    ]
    assert tm_commands_from({}) == []


def test_each_problem_is_named_by_its_key_path():
    bad = {"tofino_tm": {
        "pool.cfg": {"EG_APP_POOL_7": {"size_cells": 1}},
        "ports": {"1": {"ppg.cfg": {"9": {}, "2": {"dynamic_baf": "25%", "weight": 1}},
                        "port.flowcontrol": {"mode_tx": "XON"}}},
        "queues": {},
    }}
    with pytest.raises(ConfigError) as e:
        tm_commands_from(bad)
    assert e.value.errors == [
        "tofino_tm.queues: not a table (pool.cfg, pipe.cfg, ports)",
        "tofino_tm.pool.cfg.EG_APP_POOL_7: not a pool (EG_APP_POOL_0, EG_APP_POOL_1, EG_APP_POOL_2, "
        "EG_APP_POOL_3, IG_APP_POOL_0, IG_APP_POOL_1, IG_APP_POOL_2, IG_APP_POOL_3)",
        "tofino_tm.ports.1.ppg.cfg.9: '9' is not 0..7",
        "tofino_tm.ports.1.ppg.cfg.2.dynamic_baf: '25%' is not one of 1.5%, 3%, 6%, 11%, 20%, 33%, 50%, "
        "66%, 80%, DISABLE",
        "tofino_tm.ports.1.ppg.cfg.2.weight: not a field of ppg.cfg (guaranteed_cells, hysteresis_cells, "
        "pool_id, pool_max_cells, dynamic_baf, pfc_enable, pfc_skid_max_cells)",
        "tofino_tm.ports.1.port.flowcontrol.mode_tx: 'XON' is not one of NONE, PAUSE, PFC",
    ]


def test_bufferlab_ctl_tm_prints_the_lines_and_the_switch_takes_them(tmp_path, capsys):
    config = tmp_path / "s1.json"
    config.write_text(json.dumps(SECTION))
    assert main(["tm", str(config)]) == 0
    lines = capsys.readouterr().out.splitlines()
    doc = compile_program(ROOT / "tests" / "p4" / "tna" / "tm_classes.p4").json
    engine = Engine(json.dumps(doc))
    cli = Executor(engine, json.dumps(doc))
    for line in ["table_add pipe.Ingress.forward Ingress.send 1 => 2 0 3 0", "set_port_rate 1 1G",
                 "set_port_rate 2 1G", *lines]:
        assert cli.execute(line).ok, line
    frame = bytes.fromhex("000000000002" "000000000001" "88b5") + bytes(1026)
    for _ in range(5):
        engine.send(1, frame, 0)
    engine.drain()
    # PFC for class 3 toward port 1's peer at 672 ns, XON at 17,792 ns when the third
    # frame starts (frames start every 1,046 + 24 wire bytes: what egress emits, as in
    # tests/engine/test_tna_tm.py), four frames out of port 2.
    out = engine.received()
    assert [t for p, _, t in out if p == 1] == [672, 17_792]
    assert sum(1 for p, _, _ in out if p == 2) == 4
