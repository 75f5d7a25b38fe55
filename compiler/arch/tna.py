"""TNA (Tofino Native Architecture): `Switch` of one to four `Pipeline`s of six blocks.

Per pipe an ingress parser, control and deparser, the traffic manager, then an egress
parser, control and deparser. Each gress has its own headers and metadata (what
crosses the TM is what the ingress deparser emits: bridged metadata) and its own
intrinsic metadata, named here by the architecture's parameter names, which are also
the header-instance names in the JSON (whatever a program calls its parameters).
"""

from __future__ import annotations

from .base import Architecture, BlockRole, Intrinsic, TargetInfo

INGRESS_INTRINSIC = (
    Intrinsic("ig_intr_md", "ingress_intrinsic_metadata_t", prepended=True, role="ingress"),
    Intrinsic("ig_intr_md_for_tm", "ingress_intrinsic_metadata_for_tm_t", role="to_tm"),
    Intrinsic("ig_intr_md_from_prsr", "ingress_intrinsic_metadata_from_parser_t", role="from_parser"),
    Intrinsic("ig_intr_md_for_dprsr", "ingress_intrinsic_metadata_for_deparser_t", role="to_deparser"),
)

EGRESS_INTRINSIC = (
    Intrinsic("eg_intr_md", "egress_intrinsic_metadata_t", prepended=True, role="egress"),
    Intrinsic("eg_intr_md_from_prsr", "egress_intrinsic_metadata_from_parser_t", role="from_parser"),
    Intrinsic("eg_intr_md_for_dprsr", "egress_intrinsic_metadata_for_deparser_t", role="to_deparser"),
    Intrinsic("eg_intr_md_for_oport", "egress_intrinsic_metadata_for_output_port_t", role="to_output_port"),
)

PIPELINE_BLOCKS = (
    BlockRole("ingress_parser", "parser", "ingress"),
    BlockRole("ingress", "control", "ingress"),
    BlockRole("ingress_deparser", "deparser", "ingress"),
    BlockRole("egress_parser", "parser", "egress"),
    BlockRole("egress", "control", "egress"),
    BlockRole("egress_deparser", "deparser", "egress"),
)

# The MultiParserPipeline's parameters that hold an IngressParsers/EgressParsers package.
MULTI_PARSER_BLOCKS = {"ig_prsr": "ingress_parser", "eg_prsr": "egress_parser"}

# Extern type -> what it lowers to (README "TNA JSON" describes each).
EXTERNS = {
    "Register": "register_arrays",
    "DirectRegister": "register_arrays",
    "RegisterParam": "extern_instances",
    "RegisterAction": "register_actions",
    "DirectRegisterAction": "register_actions",
    "MathUnit": "extern_instances",
    "Counter": "counter_arrays",
    "DirectCounter": "counter_arrays",
    "Meter": "meter_arrays",
    "DirectMeter": "meter_arrays",
    "Lpf": "extern_instances",
    "DirectLpf": "extern_instances",
    "Wred": "extern_instances",
    "DirectWred": "extern_instances",
    "Hash": "extern_instances",
    "CRCPolynomial": "extern_instances",
    "Random": "extern_instances",
    "Checksum": "extern_instances",
    "ParserCounter": "extern_instances",
    "ParserPriority": "extern_instances",
    "ActionProfile": "action_profiles",
    "ActionSelector": "action_profiles",
    "SelectorAction": "unsupported",
    "Atcam": "table_implementation",
    "Alpm": "table_implementation",
    "Mirror": "deparser",
    "Resubmit": "deparser",
    "Digest": "deparser",
}

# Algorithmic tables run as the match kind they emulate; the partition index is exact.
MATCH_KINDS = {"atcam_partition_index": "exact"}

TOFINO = TargetInfo("tofino", port_id_width=9, queue_id_width=5, mirror_type_width=3,
                    mirror_id_width=10, port_metadata_bits=64, cell_bytes=80,
                    queues_per_port=32, pipes=4)
TOFINO2 = TargetInfo("tofino2", port_id_width=9, queue_id_width=7, mirror_type_width=4,
                     mirror_id_width=8, port_metadata_bits=192, cell_bytes=176,
                     queues_per_port=128, pipes=4)

ARCH = Architecture(
    name="tna",
    include="tna.p4",
    arch_files=("core.p4", "tna.p4", "tofino1_specs.p4", "tofino1_base.p4", "tofino1_arch.p4",
                "tofino2_specs.p4"),
    targets={"tofino": ("__TARGET_TOFINO__=1",), "tofino2": ("__TARGET_TOFINO__=2",)},
    default_target="tofino",
    packages=("Switch", "MultiParserSwitch"),
    pipeline="Pipeline",
    blocks=PIPELINE_BLOCKS,
    intrinsic={"ingress": INGRESS_INTRINSIC, "egress": EGRESS_INTRINSIC},
    externs=EXTERNS,
    match_kinds=MATCH_KINDS,
    target_info={"tofino": TOFINO, "tofino2": TOFINO2},
    pkginfo_arch="tna",
)
