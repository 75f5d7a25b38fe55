"""What an architecture is to the compiler: its package, blocks, intrinsic metadata, externs.

Each architecture module (`v1model`, `tna`, `t2na`) fills one `Architecture`; the
front end and the BMv2-style JSON emitter ask it instead of naming one architecture's
types. Nothing here lowers code: it is the description the lowering reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Intrinsic:
    """One piece of intrinsic metadata: the package parameter that carries it, its P4
    type, and whether it is a header the target prepends to the frame (extracted by the
    parser) rather than metadata the target writes or reads around a block."""

    name: str
    type_name: str
    prepended: bool = False
    role: str = ""


@dataclass(frozen=True)
class BlockRole:
    """One programmable block of a package: the parameter name, what it is, which gress."""

    name: str
    kind: str  # parser | control | deparser | verify_checksum | compute_checksum | ghost
    gress: str  # ingress | egress | "" (v1model: one program)


@dataclass(frozen=True)
class TargetInfo:
    """Device figures a program and an engine need (widths in bits, sizes in bytes)."""

    name: str
    port_id_width: int
    queue_id_width: int
    mirror_type_width: int
    mirror_id_width: int
    port_metadata_bits: int
    cell_bytes: int
    queues_per_port: int
    pipes: int

    def as_json(self) -> dict:
        """The `target_info` object of the TNA JSON."""
        return {
            "name": self.name,
            "port_id_width": self.port_id_width,
            "queue_id_width": self.queue_id_width,
            "mirror_type_width": self.mirror_type_width,
            "mirror_id_width": self.mirror_id_width,
            "port_metadata_bits": self.port_metadata_bits,
            "cell_bytes": self.cell_bytes,
            "queues_per_port": self.queues_per_port,
            "pipes": self.pipes,
        }


@dataclass(frozen=True)
class Architecture:
    """An architecture as the compiler sees it.

    `include` is the file whose `#include` selects it; `defines` the macros the
    preprocessor gets for each target (p4c's `__TARGET_BMV2__`, bf-p4c's
    `__TARGET_TOFINO__`); `packages` the top-level package types `main` may be;
    `pipeline` the per-pipe package (None for v1model, whose package is the pipe);
    `blocks` the pipe's blocks in package-parameter order; `intrinsic` per gress the
    intrinsic metadata the target gives the blocks; `externs` maps each extern type
    to the family it lowers to (the JSON section or primitive prefix); `match_kinds`
    maps architecture match kinds to the table match type an engine implements.
    """

    name: str
    include: str
    arch_files: tuple[str, ...]
    targets: dict[str, tuple[str, ...]]
    default_target: str
    packages: tuple[str, ...]
    pipeline: str | None
    blocks: tuple[BlockRole, ...]
    intrinsic: dict[str, tuple[Intrinsic, ...]]
    externs: dict[str, str]
    match_kinds: dict[str, str] = field(default_factory=dict)
    target_info: dict[str, TargetInfo] = field(default_factory=dict)
    pkginfo_arch: str = ""

    def defines(self, target: str | None = None) -> tuple[str, ...]:
        """Preprocessor macros for `target` (the architecture's default when None)."""
        return self.targets[target or self.default_target]

    def block(self, name: str) -> BlockRole | None:
        """The block role called `name`, or None."""
        return next((b for b in self.blocks if b.name == name), None)

    def extern_family(self, type_name: str) -> str | None:
        """What extern type `type_name` lowers to (None: not one of the architecture's)."""
        return self.externs.get(type_name)
