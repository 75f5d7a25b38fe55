"""The table dependency graph of a gress and the stage estimate it gives.

Edges follow bf-p4c's table dependency graph: when node B can run after node A on
the same packet, B reading in its key or condition a field A writes (a match
dependency) or B's actions reading one (an action dependency) puts B at least one
stage after A; a node predicated by a condition or a table's result (a control
dependency) sits in that stage or a later one. Anti (write-after-read) and output
(write-after-write) dependencies are not counted: bf-p4c may resolve them within
a stage, so leaving them out keeps the figure a lower bound. The longest such chain is a lower bound on the stages; so are the logical
tables (16 per stage) and the registers (4 stateful ALUs per stage). What is not
modelled (SRAM/TCAM, crossbar, PHV, action data, hash units) can only add stages.
"""

from __future__ import annotations

from .program import Gress, controlled, descendants
from .report import Finding, StageEstimate
from .targets import Device


def estimate(g: Gress, device: Device) -> StageEstimate:
    """The least number of stages gress `g` needs, with the chain that forces it.

    A node starts at least one stage after the step at which an earlier node it depends
    on wrote the field; a node whose statements chain (an apply-block group that
    bf-p4c splits into several tables) spans `depth` stages."""
    after = descendants(g)
    under = controlled(g, after)
    start: dict[str, int] = {name: 0 for name in g.order}
    via: dict[str, str | None] = {name: None for name in g.order}
    for name in g.order:
        a = g.nodes[name]
        # A table predicated by a condition (or by a table's hit/miss) sits in that
        # condition's stage or a later one: a gateway cannot reach back.
        for succ in under.get(name, set()):
            if start[name] > start[succ]:
                start[succ] = start[name]
                via[succ] = name
        for succ in after[name]:
            b = g.nodes[succ]
            shared = a.writes & (b.match_reads | b.action_reads)
            if not shared:
                continue
            ready = start[name] + max(a.write_step.get(f, 1) for f in shared)
            if ready > start[succ]:
                start[succ] = ready
                via[succ] = name
    end = {name: start[name] + g.nodes[name].depth for name in g.order}
    last = max(g.order, key=lambda n: end[n], default=None)
    chain_stages = end[last] if last is not None else 0
    chain: list[str] = []
    while last is not None:
        chain.append(g.nodes[last].label())
        last = via[last]
    chain.reverse()
    tables = sum(1 for node in g.nodes.values() if node.kind == "table")
    registers = len({r for node in g.nodes.values() for r, per in node.accesses.items()
                     if per[0][0].family == "register"})
    stages = max(chain_stages, -(-tables // device.tables_per_stage),
                 -(-registers // device.salus_per_stage))
    return StageEstimate(g.name, stages, chain if chain_stages > 1 else [], chain_stages, tables,
                         registers)


def check(estimate_: StageEstimate, g: Gress, device: Device) -> list[Finding]:
    """A finding when the estimate already exceeds the device's stages."""
    if estimate_.stages <= device.stages:
        return []
    return [Finding("stages", g.pos,
                    f"{g.name} needs at least {estimate_.stages} stages; {device.label} has "
                    f"{device.stages} (dependency chain {estimate_.chain_stages}, "
                    f"{estimate_.tables} logical tables, {estimate_.registers} registers)")]
