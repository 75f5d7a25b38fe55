"""The table dependency graph of a gress and the stage estimate it gives.

Edges follow bf-p4c's table dependency graph: when node B can run after node A on
the same packet, B reading in its key or condition a field A writes (a match
dependency) or B's actions reading one (an action dependency) puts B at least one
stage after A. Control, anti (write-after-read) and output (write-after-write)
dependencies are not counted: a gateway predicates a table in its own stage, and
bf-p4c may resolve the others within a stage, so leaving them out keeps the
figure a lower bound. The longest such chain is a lower bound on the stages; so are the logical
tables (16 per stage) and the registers (4 stateful ALUs per stage). What is not
modelled (SRAM/TCAM, crossbar, PHV, action data, hash units) can only add stages.
"""

from __future__ import annotations

from .program import Gress, Node, descendants
from .report import Finding, StageEstimate
from .targets import Device


def dependency(a: Node, b: Node) -> str | None:
    """The kind of dependency that keeps `b` out of `a`'s stage (None: none does)."""
    if a.writes & b.match_reads:
        return "match"
    if a.writes & b.action_reads:
        return "action"
    return None


def estimate(g: Gress, device: Device) -> StageEstimate:
    """The least number of stages gress `g` needs, with the chain that forces it."""
    after = descendants(g)
    stage: dict[str, int] = {name: 0 for name in g.order}
    via: dict[str, str | None] = {name: None for name in g.order}
    for name in g.order:
        for succ in after[name]:
            kind = dependency(g.nodes[name], g.nodes[succ])
            if kind is not None and stage[name] + 1 > stage[succ]:
                stage[succ] = stage[name] + 1
                via[succ] = name
    last = max(g.order, key=lambda n: stage[n], default=None)
    chain: list[str] = []
    while last is not None:
        chain.append(g.nodes[last].label())
        last = via[last]
    chain.reverse()
    chain_stages = (max(stage.values()) + 1) if stage else 0
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
