"""Register rules: one access per register per packet, one gress per register, and
register cells the stateful ALU can hold.

An access is a RegisterAction call (TNA) or a `register.read`/`.write` (v1model). One
action that reads a cell and writes the same cell back is one access: bf-p4c turns
that pair into one RegisterAction. Two accesses on one packet path, in one action or
in two tables one of which can follow the other, are two uses of a stateful ALU that
has one read-modify-write per packet.
"""

from __future__ import annotations

from .program import Access, Gress, descendants, position
from .report import Finding
from .targets import Device


def _action_accesses(uses: list[Access]) -> list[Access]:
    """The accesses one action makes to one register, a read-then-write of the same
    index counting once (it becomes one RegisterAction)."""
    merged: list[Access] = []
    for use in uses:
        previous = merged[-1] if merged else None
        if (previous is not None and previous.kind == "read" and use.kind == "write"
                and previous.index == use.index):
            merged[-1] = Access(use.register, use.action, "read-modify-write", use.index,
                                previous.pos)
            continue
        merged.append(use)
    return merged


def one_access(g: Gress) -> list[Finding]:
    """Every register used twice on one packet path of gress `g`."""
    found: list[Finding] = []
    after = descendants(g)
    users: dict[str, list[tuple[str, Access]]] = {}
    for name in g.order:
        for register, per_action in sorted(g.nodes[name].accesses.items()):
            # The actions of one table are alternatives: each is checked on its own.
            for uses in per_action:
                merged = _action_accesses(uses)
                for extra in merged[1:]:
                    found.append(Finding(
                        "register-one-access", extra.pos,
                        f"{extra.family} {register} is used again in action {extra.action} ({extra.kind} "
                        f"at index {extra.index}) after its {merged[0].kind} at {merged[0].pos}: "
                        "one packet gets one access"))
            mine = _action_accesses(per_action[0])[0]
            earlier = next(((n, a) for n, a in users.get(register, []) if name in after.get(n, set())),
                           None)
            if earlier is not None:
                found.append(Finding(
                    "register-one-access", mine.pos,
                    f"{mine.family} {register} is used here ({mine.kind}) and also at {earlier[1].pos} "
                    f"({earlier[1].kind}) on the same packet: {g.nodes[name].label()} and "
                    f"{g.nodes[earlier[0]].label()} are not mutually exclusive"))
            users.setdefault(register, []).append((name, mine))
    return found


def one_gress(gresses: list[Gress]) -> list[Finding]:
    """Every register used by both gresses of a pipe (v1model: ingress and egress)."""
    found: list[Finding] = []
    by_register: dict[str, dict[str, Access]] = {}
    for g in gresses:
        pipe = g.name.rsplit(".", 1)[0] if "." in g.name else ""
        for name in g.order:
            for register, per_action in g.nodes[name].accesses.items():
                key = f"{pipe}/{register}"
                by_register.setdefault(key, {}).setdefault(g.gress, per_action[0][0])
    for _key, uses in sorted(by_register.items()):
        if "ingress" in uses and "egress" in uses:
            ing, eg = uses["ingress"], uses["egress"]
            found.append(Finding("register-one-gress", ing.pos,
                                 f"{ing.family} {ing.register} is used by ingress ({ing.kind} here) and by "
                                 f"egress ({eg.kind} at {eg.pos}): a Tofino register lives in one gress's "
                                 "stage, so ingress cannot read state egress writes (on Tofino 2 a ghost "
                                 "thread can expose queue depth to ingress)"))
    return found


def cells(g: Gress, device: Device) -> list[Finding]:
    """Every register of `g` whose cell type the stateful ALU cannot hold."""
    found: list[Finding] = []
    used = {reg for node in g.nodes.values() for reg, per in node.accesses.items()
            if per[0][0].family == "register"}
    for name in sorted(used):
        array = g.registers.get(name)
        if array is None:
            continue
        layout = array.get("layout") or [{"name": "value", "bitwidth": array["bitwidth"]}]
        widths = {f["bitwidth"] for f in layout}
        width = layout[0]["bitwidth"]
        ok = len(layout) <= 2 and len(widths) == 1 and (
            (width == 1 and len(layout) == 1)
            or (width >= 8 and width & (width - 1) == 0
                and width * len(layout) <= device.salu_max_dual
                and (len(layout) == 1 or width <= device.salu_max_size)))
        if not ok:
            shape = " and ".join(f"bit<{f['bitwidth']}>" for f in layout)
            found.append(Finding("salu-cell", position(array.get("source_info")),
                                 f"register {name} holds {shape}: a {device.label} stateful ALU holds "
                                 f"bit<1>, bit<8|16|32>, bit<{device.salu_max_dual}> or a pair of one "
                                 "width"))
    return found
