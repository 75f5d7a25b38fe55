"""`calculations` (hash inputs) and `checksums` entries (formats.md §1.12)."""

from __future__ import annotations

from typing import Any

from .context import Context

# HashAlgorithm members as p4c names them in BMv2 JSON.
ALGORITHMS = {
    "crc32": "crc32",
    "crc32_custom": "crc32_custom",
    "crc16": "crc16",
    "crc16_custom": "crc16_custom",
    "random": "random",
    "identity": "identity",
    "csum16": "csum16",
    "xor16": "xor16",
}


class Calculations:
    """Creates named calculations and checksum entries."""

    def __init__(self, ctx: Context, algorithms: dict[str, str] = ALGORITHMS) -> None:
        self.ctx = ctx
        self.algorithms = algorithms

    def add(
        self, algo: str, inputs: list[tuple[dict, int]], node: Any, payload: bool = False
    ) -> str:
        """A new calculation `calc`, `calc_0`, … over `inputs` (field refs or constants)."""
        if algo not in self.algorithms:
            raise self.ctx_error(node, f"hash algorithm {algo} is not supported by BMv2")
        items = []
        for operand, width in inputs:
            if operand.get("type") == "hexstr":
                items.append({"type": "hexstr", "value": operand["value"], "bitwidth": width})
            else:
                items.append(operand)
        if payload:
            items.append({"type": "payload", "value": None})
        name = self.ctx.unique("calc")
        entry: dict = {"name": name, "id": self.ctx.next_id("calculations")}
        info = self.ctx.source_info(node)
        if info is not None:
            entry["source_info"] = info
        entry["algo"] = self.algorithms[algo]
        entry["input"] = items
        self.ctx.calculations.append(entry)
        return name

    def add_checksum(
        self, target: list[str], calc: str, verify: bool, if_cond: dict | None, node: Any
    ) -> None:
        """A `checksums` entry updating or verifying field `target` with calculation `calc`."""
        entry: dict = {"name": self.ctx.unique("cksum"), "id": self.ctx.next_id("checksums")}
        info = self.ctx.source_info(node)
        if info is not None:
            entry["source_info"] = info
        entry.update(
            {
                "target": target,
                "type": "generic",
                "calculation": calc,
                "verify": verify,
                "update": not verify,
                "if_cond": if_cond,
            }
        )
        self.ctx.checksums.append(entry)

    @staticmethod
    def ctx_error(node: Any, message: str) -> Exception:
        """A located error for a bad calculation."""
        from ..diagnostics import CompileError

        return CompileError(getattr(node, "pos", None), message)
