"""Tofino 1 and Tofino 2 figures the fit rules compare a program against.

Each figure is the one bf-p4c itself uses (p4lang/p4c, backends/tofino/bf-p4c):
the stateful ALU's from `Device::StatefulAluSpec` (mau/stateful_alu.cpp:
TofinoDevice/JBayDevice::getStatefulAluSpec), the stage resources from
`StageUse` (specs/mau_spec.h), the crossbar from mau/tofino/input_xbar.h and
the action data bus from mau/tofino/action_data_bus.h.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """What one Tofino generation offers per gress and per stage."""

    name: str                 # the --target name: tofino | tofino2
    label: str                # how the report names it
    stages: int               # match-action stages a gress may use
    cmp_units: int            # stateful ALU comparison units (condition_lo/hi; cmp0..3)
    salu_max_size: int        # widest register cell one ALU half handles, bits
    salu_max_dual: int        # widest cell as a pair (two halves), bits
    salu_phv_input: int       # widest packet field a stateful ALU reads, bits
    salu_outputs: int         # values a RegisterAction returns (rv, rv2, ...)
    salu_divmod: bool         # the stateful ALU has a divide/modulo unit
    salu_regfile_rows: int    # register-file rows for large constants and RegisterParams
    salu_const_min: int       # constants an instruction holds itself
    salu_const_max: int
    salu_instructions: int    # RegisterActions one register can have
    salus_per_stage: int      # stateful ALUs (registers) per stage
    tables_per_stage: int     # logical tables per stage
    exact_key_bytes: int      # exact-match input crossbar bytes per stage
    ternary_key_bytes: int    # ternary input crossbar bytes per stage
    action_data_bytes: int    # action data bus bytes per stage
    alu_width: int            # widest PHV container an action's ALU operates on, bits


TOFINO = Device("tofino", "Tofino 1", stages=12, cmp_units=2, salu_max_size=32, salu_max_dual=64,
                salu_phv_input=32, salu_outputs=1, salu_divmod=False, salu_regfile_rows=4,
                salu_const_min=-8, salu_const_max=7, salu_instructions=4, salus_per_stage=4,
                tables_per_stage=16, exact_key_bytes=128, ternary_key_bytes=66,
                action_data_bytes=128, alu_width=32)

TOFINO2 = Device("tofino2", "Tofino 2", stages=20, cmp_units=4, salu_max_size=128,
                 salu_max_dual=128, salu_phv_input=64, salu_outputs=4, salu_divmod=True,
                 salu_regfile_rows=4, salu_const_min=-8, salu_const_max=7, salu_instructions=4,
                 salus_per_stage=4, tables_per_stage=16, exact_key_bytes=128,
                 ternary_key_bytes=66, action_data_bytes=128, alu_width=32)

DEVICES = {d.name: d for d in (TOFINO, TOFINO2)}


def device_for(arch: str | None, target: str | None) -> Device:
    """The device a fit report checks against: `--target` if given, else the
    architecture's (t2na: Tofino 2; tna and anything else: Tofino 1)."""
    if target in DEVICES:
        return DEVICES[target]
    return TOFINO2 if arch == "t2na" else TOFINO
