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

from .program import Gress, Node, controlled, descendants
from .report import Finding, StageEstimate
from .targets import Device


def estimate(g: Gress, device: Device) -> StageEstimate:
    """The least number of stages gress `g` needs, with the chain that forces it.

    Each node starts no earlier than the stage of a condition it depends on, and one
    stage after an earlier node wrote a field it reads. The statements of an
    apply-block group are scheduled one by one (bf-p4c makes separate tables of
    dependent statements), so independent statements of one group share a stage."""
    after = descendants(g)
    under = controlled(g, after)
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    ready: dict[str, dict] = {name: {} for name in g.order}  # field -> (stage, writer)
    floor: dict[str, tuple[int, str | None]] = {name: (0, None) for name in g.order}
    via: dict[str, str | None] = {}
    for name in g.order:
        node = g.nodes[name]
        base, cause = floor[name]
        inputs = ready[name]


        avail: dict = {}
        if node.steps:
            first, finish, why_first = None, base, cause
            done: dict = {}
            for reads, writes, copy in node.steps:
                if copy is not None and copy in done:
                    # A copy of a temporary of this group: propagated, no stage of its own.
                    for f in writes:
                        done[f] = done[copy]
                    continue
                at, why = _earliest(inputs, reads, base, cause)
                for f in reads:
                    if f in done and done[f] > at:
                        at = done[f]
                first = at if first is None else min(first, at)
                if first == at:
                    why_first = why
                for f in writes:
                    done[f] = at + 1
                finish = max(finish, at + 1)
            start[name], end[name], via[name] = first or base, finish, why_first
            avail = {f: (stage, name) for f, stage in done.items()}
        else:
            at, why = _earliest(inputs, node.match_reads | node.action_reads, base, cause)
            start[name], end[name], via[name] = at, at + node.depth, why
            avail = {f: (at + node.write_step.get(f, 1), name) for f in node.writes}
        for succ in under.get(name, set()):
            if start[name] > floor[succ][0]:
                floor[succ] = (start[name], name)
        for succ in after[name]:
            wanted = g.nodes[succ].match_reads | g.nodes[succ].action_reads | _step_reads(g.nodes[succ])
            for f in wanted & set(avail):
                if f not in ready[succ] or avail[f][0] > ready[succ][f][0]:
                    ready[succ][f] = avail[f]
    last = max(g.order, key=lambda n: end[n], default=None)
    chain_stages = end[last] if last is not None else 0
    chain: list[str] = []
    seen: set[str] = set()
    while last is not None and last not in seen:
        seen.add(last)
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


def _earliest(inputs: dict, reads: set, at: int, why: str | None) -> tuple[int, str | None]:
    """The first stage from `at` on at which all of `reads` are available, and the node
    whose write decided it."""
    for f in reads:
        if f in inputs and inputs[f][0] > at:
            at, why = inputs[f]
    return at, why


def _step_reads(node: Node) -> set:
    """Every field the statements of an apply-block group read."""
    return {f for reads, _, _ in node.steps for f in reads}


def check(estimate_: StageEstimate, g: Gress, device: Device) -> list[Finding]:
    """A finding when the estimate already exceeds the device's stages."""
    if estimate_.stages <= device.stages:
        return []
    return [Finding("stages", g.pos,
                    f"{g.name} needs at least {estimate_.stages} stages; {device.label} has "
                    f"{device.stages} (dependency chain {estimate_.chain_stages}, "
                    f"{estimate_.tables} logical tables, {estimate_.registers} registers)")]
