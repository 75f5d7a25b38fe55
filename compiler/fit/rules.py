"""The fit rules: what Tofino's compiler refuses or splits, and where that is written.

Each rule has a short id (shown in the report as `[id]`), one line saying what it
requires, and its sources: bf-p4c's own error text with the file that emits it
(p4lang/p4c, backends/tofino/...), or a public issue where a user met it. The
checks that apply a rule live in their own modules (registers, salu, arithmetic,
widths, stages); this module only names and cites.
"""

from __future__ import annotations

from dataclasses import dataclass

BF_P4C = "p4lang/p4c backends/tofino/bf-p4c"


@dataclass(frozen=True)
class Rule:
    """One fit rule: id, the requirement, and its sources."""

    id: str
    requires: str
    sources: tuple[str, ...]


RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("register-one-access",
         "a register is used by one RegisterAction (one read-modify-write of one cell) per packet; "
         "likewise an indexed counter or meter is updated at one place per packet",
         (f'{BF_P4C}/mau/table_mutex.cpp: "table %1% and table %2% are not mutually exclusive, '
          'yet share %3%"',
          "p4lang/p4c#2113 (two execute() calls on one register refused with that message)",
          f"{BF_P4C}/mau/stateful_alu.h: a register action is one VLIW instruction of the "
          "register's stateful ALU; a Register.read followed by .write in one action becomes one "
          "RegisterAction (BFN::RegisterReadWrite)")),
    Rule("register-one-gress",
         "a register belongs to one gress: ingress cannot read state egress writes",
         ('p4lang/p4c backends/tofino/bf-asm/attached_table.cpp AttachedTable::validate_call: '
          '"%s not in same thread as %s"; p4lang/p4c#5423',
          'bf-p4c Tofino xfail list: "shared register between ingress and egress is not '
          'supported" (p4c testdata issue1097-2-bmv2.p4)')),
    Rule("salu-cell",
         "a register cell is bit<1>, bit<8|16|32> (64 as a pair; up to 128 on Tofino 2), or a "
         "struct of one or two fields of one such width",
         (f'{BF_P4C}/mau/stateful_alu.cpp CheckStatefulAlu: "Unsupported Register element type '
          '%s for %s"',)),
    Rule("salu-comparisons",
         "a RegisterAction body makes at most 2 distinct comparisons (4 on Tofino 2)",
         (f'{BF_P4C}/mau/stateful_alu.cpp: "%s %s.%s needs %d comparisons but the device only '
          'has %d comparison units" (CmpUnits lo, hi; Tofino 2 cmp0..cmp3)',)),
    Rule("salu-compare-form",
         "each comparison is (±one packet field ±the cell ±a constant) against the other side",
         (f'{BF_P4C}/mau/stateful_alu.cpp: "predicate too complex for stateful alu: can only '
          'compare one metadata field, one memory field and one constant"',)),
    Rule("salu-operators",
         "a RegisterAction body uses only assignments and if/else with + - |+| |-| & | ^ ~, "
         "comparisons, ?:, slices, casts, min/max (and / % on Tofino 2)",
         (f'{BF_P4C}/mau/stateful_alu.h CreateSaluInstruction: "expression too complex for '
          'register action", "statement too complex for register action"',)),
    Rule("salu-updates",
         "each half of a register cell gets at most two different updates per RegisterAction",
         (f'{BF_P4C}/mau/stateful_alu.cpp checkActions: "In Stateful ALU, only two values can be '
          'computed per apply"',
          "P4_14 stateful_alu blackbox: update_lo_1/update_lo_2, update_hi_1/update_hi_2")),
    Rule("salu-outputs",
         "a RegisterAction returns one value (four on Tofino 2)",
         (f'{BF_P4C}/mau/stateful_alu.cpp: "Only %d stateful output%s supported" (OutputWords)',)),
    Rule("salu-phv-width",
         "a RegisterAction reads packet fields no wider than its cell (and 32 bits; 64 on Tofino 2)",
         (f'{BF_P4C}/mau/stateful_alu.cpp: "Because you declared the register %s to store the type '
          '%s, the SALU ... is configured in %d-bit mode"',)),
    Rule("salu-constants",
         "the RegisterActions of one register use at most 4 constants outside -8..7 "
         "(register-file rows, shared with RegisterParams)",
         (f'{BF_P4C}/mau/stateful_alu.cpp CheckStatefulAlu: "Register actions associated with %1% '
          '... do not fit on the device ... register action parameter slots"',)),
    Rule("salu-instructions",
         "a register has at most 4 RegisterActions (the stateful ALU's instruction rows)",
         (f"{BF_P4C}/mau/stateful_alu.h: instruction memory of four rows, one per register "
          "action (StatefulAluSpec MaxInstructions = 4)",)),
    Rule("arith-mul-div",
         "*, / and % only by a power of two (a shift or a mask); a shift only by a constant",
         (f"{BF_P4C}/mau/instruction_selection.cpp DoInstructionSelection: VLIW instructions for "
          '+ - & | ^ ~ min max saturating ± and constant shifts, none for * / %; "shift count '
          'must be a constant in %s"',
          "p4lang/p4c frontends/p4/strengthReduction.cpp turns * / % by 2^k into shifts and masks",
          "Tofino 2's stateful ALU has a divide/modulo unit (StatefulAluSpec DivModUnit)")),
    Rule("alu-width",
         "action arithmetic and ordering comparisons work on at most 32-bit operands",
         ('bf-p4c Tofino xfail list: "Operands of arithmetic operations cannot be greater than '
          '32b, but field %s has %d" (p4c testdata arith-bmv2.p4); PHV containers are 8, 16 and '
          "32 bits",)),
    Rule("action-single-op",
         "an action computes each field with one ALU operation (a + b, a - b, a & b, ...); a longer "
         "expression needs a temporary field and a later stage",
         ('bf-p4c Tofino xfail list: "The action %s manipulates field %s that requires multiple '
          'stages from an action" (p4c testdata issue983-bmv2.p4, action_inline.p4)',
          f"{BF_P4C}/mau/instruction_selection.cpp: one VLIW instruction per destination "
          "container")),
    Rule("key-width",
         "a table's key fits one stage's input crossbar: 128 bytes exact, 66 bytes ternary/LPM/range; "
         "a range key is at most 20 bits",
         (f"{BF_P4C}/specs/mau_spec.h StageUse::MAX_IXBAR_BYTES = 128; mau/tofino/input_xbar.h "
          "12 ternary groups of 5 bytes + 6 mid-bytes",
          f'{BF_P4C}/mau/table_placement.cpp: "Can\'t fit table %s in input xbar by itself"',
          'bf-p4c: "Currently in p4c, the table %s cannot perform a range match on key %s as the '
          'key does not fit in under 5 PHV nibbles"')),
    Rule("action-data-width",
         "an action's data fits the 128-byte action data bus of a stage",
         (f"{BF_P4C}/mau/tofino/action_data_bus.h: ActionDataBus::ADB_BYTES = 128",)),
    Rule("stages",
         "each gress's dependency chain and resources fit 12 stages (20 on Tofino 2)",
         (f"{BF_P4C}/mau/table_dependency_graph.cpp: a match dependency (key or gateway reads "
          "what an earlier table writes) or an action dependency (an action reads it) puts the "
          "later table in a later stage; control dependencies do not",
          f"{BF_P4C}/specs/mau_spec.h StageUse::MAX_LOGICAL_IDS = 16 logical tables per stage; "
          "mau/stateful_alu.h: four stateful ALUs per stage",
          "Tofino 1: 12 MAU stages per pipe, Tofino 2: 20 (Device::numStages)")),
)}
