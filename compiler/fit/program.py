"""The compiled program as the fit rules see it: gresses, their match-action nodes
(tables and conditions), what each node reads and writes, and its register accesses.

It reads the JSON our compiler writes (compiler/README.md): a v1model document has one
set of actions and two pipelines (`ingress`, `egress`); a TNA document has per pipe an
`ingress` and an `egress` gress document with one pipeline each. Either way a
`Gress` here is one pipeline with the document that holds its actions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..diagnostics import SourcePos
from .expressions import Field, Widths, fields, render, unwrap

# Primitives that write their first operand (BMv2's and ours).
_WRITES_FIRST = {"assign", "modify_field", "register_read", "modify_field_with_hash_based_offset",
                 "modify_field_rng_uniform", "assign_header", "assign_union", "assign_VL"}
# TNA extern calls whose value-returning form writes the last operand (README "Primitives").
_WRITES_LAST = {"_Lpf_execute", "_Wred_execute", "_DirectLpf_execute", "_DirectWred_execute",
                "_RegisterParam_read", "_MathUnit_execute", "_Checksum_verify", "_Checksum_get",
                "_Checksum_subtract_all_and_deposit", "_RegisterAction_predicate",
                "_RegisterAction_address"}
# Register-action calls: operand 0 names the action; their destinations follow.
REGISTER_CALLS = {"_RegisterAction_execute": 2, "_RegisterAction_execute_log": 1,
                  "_RegisterAction_enqueue": 1, "_RegisterAction_dequeue": 1,
                  "_RegisterAction_push": 1, "_RegisterAction_pop": 1,
                  "_DirectRegisterAction_execute": 1}


def position(info: dict | None, fallback: SourcePos | None = None) -> SourcePos | None:
    """The `SourcePos` of a JSON `source_info` (or `fallback` when there is none)."""
    if not info:
        return fallback
    return SourcePos(info.get("filename", "?"), int(info.get("line", 0)), int(info.get("column", 0)))


@dataclass(frozen=True)
class Access:
    """One use of an indexed stateful object (register, counter, meter) by an action: a
    register read or write, a whole RegisterAction, a count or a meter execution."""

    register: str
    action: str
    kind: str  # read | write | execute | count | meter
    index: str
    pos: SourcePos | None
    register_action: str | None = None
    family: str = "register"  # register | counter | meter


@dataclass
class Node:
    """A table (with its actions) or a condition of one pipeline."""

    name: str
    kind: str  # table | conditional
    pos: SourcePos | None
    fragment: str
    successors: set[str] = field(default_factory=set)
    branches: list[str | None] = field(default_factory=list)  # where each outcome goes
    match_reads: set[Field] = field(default_factory=set)
    action_reads: set[Field] = field(default_factory=set)
    writes: set[Field] = field(default_factory=set)
    actions: list[str] = field(default_factory=list)
    # register -> accesses per action (one list per action that touches it)
    accesses: dict[str, list[list[Access]]] = field(default_factory=dict)
    key_bits: int = 0
    key_kind: str = "exact"
    hidden: bool = False
    depth: int = 1
    write_step: dict[Field, int] = field(default_factory=dict)
    chained: list[tuple[str, SourcePos | None, Field]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)

    def label(self) -> str:
        """How a report names the node: its table, or `[file:line fragment]` of the
        statements (or condition) our compiler made it from."""
        if self.kind == "table" and not self.hidden:
            return self.name
        where = f"{self.pos.file.rsplit('/', 1)[-1]}:{self.pos.line}" if self.pos else "?"
        text = self.fragment if len(self.fragment) <= 40 else self.fragment[:37] + "..."
        return f"[{where} {text}]"


@dataclass
class Gress:
    """One pipeline (ingress or egress of a pipe) and the document holding its actions."""

    name: str  # e.g. "ingress" (v1model) or "pipe.ingress" (TNA)
    gress: str  # ingress | egress
    doc: dict
    pipeline: dict
    widths: Widths
    actions: dict[str, dict]
    register_actions: dict[str, dict]
    registers: dict[str, dict]
    nodes: dict[str, Node] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # topological

    @property
    def pos(self) -> SourcePos | None:
        """Where the pipeline's control is declared."""
        return position(self.pipeline.get("source_info"))


def gresses(document: dict) -> list[Gress]:
    """Every pipeline of a compiled program, ingress before egress, pipe by pipe."""
    if "pipes" in document:
        found = []
        for pipe in document["pipes"]:
            for gress in ("ingress", "egress"):
                doc = pipe[gress]
                for pipeline in doc.get("pipelines", []):
                    if pipeline["name"] == "ghost":
                        continue
                    found.append(_gress(f"{pipe['name']}.{gress}", gress, doc, pipeline))
        return found
    return [_gress(p["name"], p["name"], document, p) for p in document.get("pipelines", [])]


def _gress(name: str, gress: str, doc: dict, pipeline: dict) -> Gress:
    """Build one `Gress` and its nodes."""
    g = Gress(name, gress, doc, pipeline, Widths(doc),
              {a["name"]: a for a in doc.get("actions", [])},
              {r["name"]: r for r in doc.get("register_actions", [])},
              {r["name"]: r for r in doc.get("register_arrays", [])})
    by_id = {a["id"]: a for a in doc.get("actions", [])}
    for table in pipeline.get("tables", []):
        g.nodes[table["name"]] = _table_node(g, table, by_id)
    for cond in pipeline.get("conditionals", []):
        node = Node(cond["name"], "conditional", position(cond.get("source_info")),
                    (cond.get("source_info") or {}).get("source_fragment", ""))
        node.match_reads = set(fields(cond.get("expression")))
        node.branches = [cond.get("true_next"), cond.get("false_next")]
        node.successors = {n for n in node.branches if n}
        g.nodes[cond["name"]] = node
    g.order = _topological(g.nodes, pipeline.get("init_table"))
    return g


def _table_node(g: Gress, table: dict, by_id: dict[int, dict]) -> Node:
    """A table node: key reads, its actions' reads/writes and register accesses."""
    info = table.get("source_info") or {}
    node = Node(table["name"], "table", position(info), info.get("source_fragment", table["name"]))
    # A keyless table whose only action is const is an apply-block statement group.
    node.hidden = not table.get("key") and table.get("default_entry", {}).get("action_const", False)
    kinds = set()
    for key in table.get("key", []):
        target = key.get("target")
        if key.get("match_type") == "valid":
            node.match_reads.add((target, "$valid$"))
            node.key_bits += 1
        elif isinstance(target, list) and len(target) == 2:
            node.match_reads.add((target[0], target[1]))
            node.key_bits += g.widths.field((target[0], target[1])) or 0
        kinds.add(key.get("match_type", "exact"))
    node.key_kind = "exact" if kinds <= {"exact", "valid"} else "ternary"
    node.branches = list(table.get("next_tables", {}).values()) + [table.get("base_default_next")]
    node.successors = {n for n in node.branches if n}
    for action_id in table.get("action_ids", []):
        action = by_id.get(action_id)
        if action is None:
            continue
        node.actions.append(action["name"])
        fx = action_effects(g, action)
        node.action_reads |= fx.reads
        node.writes |= fx.writes
        node.depth = max(node.depth, fx.depth)
        for f, step in fx.write_step.items():
            node.write_step[f] = max(node.write_step.get(f, 0), step)
        if fx.chained is not None:
            node.chained.append((action["name"], fx.chained[0], fx.chained[1]))
        if node.hidden:
            node.steps = fx.steps
        per_register: dict[str, list[Access]] = {}
        for access in fx.accesses:
            per_register.setdefault(access.register, []).append(access)
        for register, uses in per_register.items():
            node.accesses.setdefault(register, []).append(uses)
    return node


def primitives(action: dict) -> Iterator[dict]:
    """The primitives of an action (or of a register action's body)."""
    yield from action.get("primitives", [])


@dataclass
class Effects:
    """What one action reads and writes, its stateful accesses, and how its statements
    chain: `depth` is the longest run of statements each reading what an earlier one of
    the same action wrote (1: all can run in one stage), `write_step` the step at which
    each field gets its final value, `chained` the first statement that reads an
    earlier statement's result."""

    reads: set[Field] = field(default_factory=set)
    writes: set[Field] = field(default_factory=set)
    accesses: list[Access] = field(default_factory=list)
    write_step: dict[Field, int] = field(default_factory=dict)
    depth: int = 1
    chained: tuple[SourcePos | None, Field] | None = None
    steps: list[Step] = field(default_factory=list)


def action_effects(g: Gress, action: dict) -> Effects:
    """What one action reads, writes and which stateful objects it uses, in program order."""
    fx = Effects()
    spans: list[tuple[set[Field], set[Field], tuple | None]] = []
    for prim in primitives(action):
        op = prim.get("op", "")
        params = prim.get("parameters", [])
        pos = position(prim.get("source_info"))
        dests = _destinations(op, params)
        reads: set[Field] = set()
        writes: set[Field] = set()
        for i, param in enumerate(params):
            (writes if i in dests else reads).update(fields(param))
            if i in dests and unwrap(param) and unwrap(param).get("type") == "header":
                writes.add((unwrap(param)["value"], "$valid$"))
        if op in ("add_header", "remove_header", "setValid", "setInvalid") and params:
            writes.update(fields(params[0]))
        if op == "mark_to_drop":
            writes.add(("standard_metadata", "egress_spec"))
        cell = None
        if op in ("register_read", "register_write"):
            array = params[1 if op == "register_read" else 0]["value"]
            index = params[2 if op == "register_read" else 1]
            fx.accesses.append(Access(array, action["name"], op.split("_")[1], render(index), pos))
            cell = (op, array, render(index))
        elif op == "count" and params and params[0].get("type") == "counter_array":
            fx.accesses.append(Access(params[0]["value"], action["name"], "count",
                                      render(params[1]) if len(params) > 1 else "", pos,
                                      family="counter"))
        elif op == "execute_meter" and params and params[0].get("type") == "meter_array":
            fx.accesses.append(Access(params[0]["value"], action["name"], "meter",
                                      render(params[1]) if len(params) > 1 else "", pos,
                                      family="meter"))
        elif op in REGISTER_CALLS:
            ra = g.register_actions.get(params[0]["value"]) if params else None
            if ra is not None:
                index = render(params[1]) if op == "_RegisterAction_execute" else op
                fx.accesses.append(Access(ra["register"], action["name"], register_action_kind(ra),
                                          index, pos, ra["name"]))
                state = ra.get("state")
                for body_prim in ra.get("primitives", []):
                    for param in body_prim.get("parameters", []):
                        reads.update(f for f in fields(param) if f[0] != state)
        # A statement reading what an earlier one of this action wrote runs a step later;
        # what it reads that way is internal to the action, not read from before it.
        earlier = sorted(f for f in reads if f in fx.write_step)
        step = 1 + max((fx.write_step[f] for f in earlier), default=0)
        if earlier and fx.chained is None:
            fx.chained = (pos, earlier[0])
        fx.reads |= reads - set(earlier)
        for f in writes:
            fx.write_step[f] = step
        fx.depth = max(fx.depth, step)
        fx.writes |= writes
        copy = None
        if op == "assign" and len(params) == 2 and unwrap(params[1]).get("type") == "field":
            copy = tuple(unwrap(params[1])["value"][:2])
        spans.append((reads, writes, cell or (("copy", copy) if copy else None)))
    fx.steps = _steps(spans)
    return fx


Step = tuple[set[Field], set[Field], "Field | None"]


def _steps(spans: list[tuple[set[Field], set[Field], tuple | None]]) -> list[Step]:
    """The statements of an apply-block group as units of work: each statement on its
    own, except that a register read, what uses it and the write of the same cell back
    are one unit (one RegisterAction in one stage). The third element names the field a
    plain copy (`x = tmp;`) copies, which a compiler propagates instead of spending a
    stage on it."""
    steps: list[Step] = []
    i = 0
    while i < len(spans):
        reads, writes, cell = spans[i]
        end = i
        copy = cell[1] if cell is not None and cell[0] == "copy" else None
        if cell is not None and cell[0] == "register_read":
            end = next((j for j in range(i + 1, len(spans)) if spans[j][2] is not None
                        and spans[j][2][0] == "register_write" and spans[j][2][1:] == cell[1:]), i)
        unit_reads: set[Field] = set()
        unit_writes: set[Field] = set()
        for r, w, _ in spans[i:end + 1]:
            unit_reads |= r - unit_writes
            unit_writes |= w
        steps.append((unit_reads, unit_writes, copy))
        i = end + 1
    return steps


def register_action_kind(ra: dict) -> str:
    """What a RegisterAction does to its cell: read, write or read-modify-write."""
    value = {tuple(v) for v in ra.get("value", [])}
    reads = writes = False
    for prim in ra.get("primitives", []):
        params = prim.get("parameters", [])
        dest = unwrap(params[0]) if prim.get("op") == "assign" and params else None
        if dest is not None and dest.get("type") == "field" and tuple(dest["value"]) in value:
            writes = True
            params = params[1:]
        reads = reads or any(f in value for p in params for f in fields(p))
    return "read-modify-write" if reads and writes else ("write" if writes else "read")


def _destinations(op: str, params: list[dict]) -> set[int]:
    """Indices of the operands primitive `op` writes."""
    if op in _WRITES_FIRST:
        return {0}
    if op in _WRITES_LAST and params:
        return {len(params) - 1}
    if op in REGISTER_CALLS:
        return set(range(REGISTER_CALLS[op], len(params)))
    if op == "execute_meter" and len(params) > 2:
        return {2}
    return set()


def _topological(nodes: dict[str, Node], start: str | None) -> list[str]:
    """Nodes in an order where every node comes after all nodes that can run before it."""
    seen: set[str] = set()
    post: list[str] = []

    def visit(name: str) -> None:
        """Depth-first, iteratively deep pipelines stay within Python's recursion limit."""
        stack = [(name, iter(sorted(nodes[name].successors)))]
        seen.add(name)
        while stack:
            current, children = stack[-1]
            child = next((c for c in children if c in nodes and c not in seen), None)
            if child is None:
                post.append(current)
                stack.pop()
                continue
            seen.add(child)
            stack.append((child, iter(sorted(nodes[child].successors))))

    for name in ([start] if start in nodes else []) + sorted(nodes):
        if name not in seen:
            visit(name)
    return list(reversed(post))


def controlled(g: Gress, after: dict[str, set[str]]) -> dict[str, set[str]]:
    """For each condition (or table whose outcome picks what runs next), the nodes that
    run on some of its outcomes only: those are control dependent on it. Nodes every
    outcome reaches (where the branches join) are not."""
    found: dict[str, set[str]] = {}
    for name, node in g.nodes.items():
        targets = set(node.branches)
        if len(targets) < 2:
            continue
        reach = [({t} | after.get(t, set())) if t else set() for t in targets]
        everywhere = set.intersection(*reach)
        found[name] = set.union(*reach) - everywhere
    return found


def descendants(g: Gress) -> dict[str, set[str]]:
    """For each node, every node that can run after it on the same packet."""
    after: dict[str, set[str]] = {}
    for name in reversed(g.order):
        reach: set[str] = set()
        for succ in g.nodes[name].successors:
            if succ in g.nodes:
                reach.add(succ)
                reach |= after.get(succ, set())
        after[name] = reach
    return after
