"""T2NA (Tofino 2): TNA's pipes plus the ghost thread, more stateful-ALU and deparser externs."""

from __future__ import annotations

from .base import Architecture, BlockRole, Intrinsic
from .tna import EGRESS_INTRINSIC, EXTERNS, INGRESS_INTRINSIC, MATCH_KINDS, PIPELINE_BLOCKS, TOFINO2

GHOST_INTRINSIC = (
    Intrinsic("gh_intr_md", "ghost_intrinsic_metadata_t", role="ghost"),
)

T2_EXTERNS = {
    **EXTERNS,
    **{f"RegisterAction{n}": "register_actions" for n in (2, 3, 4)},
    **{f"DirectRegisterAction{n}": "register_actions" for n in (2, 3, 4)},
    "MinMaxAction": "register_actions",
    **{f"MinMaxAction{n}": "register_actions" for n in (2, 3, 4)},
    "LearnAction": "unsupported",
    **{f"LearnAction{n}": "unsupported" for n in (2, 3, 4)},
    "IdleTimeout": "table_implementation",
    "Pktgen": "deparser",
}

ARCH = Architecture(
    name="t2na",
    include="t2na.p4",
    arch_files=("core.p4", "t2na.p4", "tofino2_specs.p4", "tofino2_base.p4", "tofino2_arch.p4"),
    targets={"tofino2": ("__TARGET_TOFINO__=2",)},
    default_target="tofino2",
    packages=("Switch",),
    pipeline="Pipeline",
    # The ghost control runs in the ingress pipeline (it shares ingress's registers): it is
    # lowered as a second control of the ingress gress, whose controls may also read its metadata.
    blocks=(*PIPELINE_BLOCKS, BlockRole("ghost", "ghost", "ingress")),
    intrinsic={"ingress": INGRESS_INTRINSIC + GHOST_INTRINSIC, "egress": EGRESS_INTRINSIC},
    externs=T2_EXTERNS,
    match_kinds={**MATCH_KINDS, "dleft_hash": "exact"},
    target_info={"tofino2": TOFINO2},
    pkginfo_arch="t2na",
)
