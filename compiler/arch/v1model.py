"""v1model (BMv2 simple_switch): one parser, two checksum controls, ingress, egress, deparser."""

from __future__ import annotations

from .base import Architecture, BlockRole, Intrinsic

# V1Switch's parameters in declaration order (positional arguments bind in this order).
PACKAGE_ARGS = ("p", "vr", "ig", "eg", "ck", "dep")

# The one intrinsic metadata struct, shared by every block, and its JSON header instance.
STANDARD_METADATA_TYPE = "standard_metadata_t"
STANDARD_METADATA = "standard_metadata"

ARCH = Architecture(
    name="v1model",
    include="v1model.p4",
    arch_files=("core.p4", "v1model.p4"),
    targets={"bmv2": ("__TARGET_BMV2__",)},
    default_target="bmv2",
    packages=("V1Switch",),
    pipeline=None,
    blocks=(
        BlockRole("p", "parser", ""),
        BlockRole("vr", "verify_checksum", ""),
        BlockRole("ig", "control", "ingress"),
        BlockRole("eg", "control", "egress"),
        BlockRole("ck", "compute_checksum", ""),
        BlockRole("dep", "deparser", ""),
    ),
    intrinsic={"": (Intrinsic(STANDARD_METADATA, STANDARD_METADATA_TYPE, role="standard"),)},
    externs={
        "register": "register_arrays",
        "counter": "counter_arrays",
        "direct_counter": "counter_arrays",
        "meter": "meter_arrays",
        "direct_meter": "meter_arrays",
        "action_profile": "action_profiles",
        "action_selector": "action_profiles",
        "Checksum16": "unsupported",
    },
    pkginfo_arch="v1model",
)
