"""The control-plane view of a lowered program: what P4Info describes.

Lowering fills this while it writes the JSON so that both outputs agree on names, sizes
and action lists; `p4info` turns it into the protobuf message.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CpParam:
    """An action parameter, match field or controller-header field."""

    name: str
    bitwidth: int
    explicit_id: int | None = None
    match_kind: str = ""
    # P4 type family for P4Info type specs: "bit", "int", "bool" or "error".
    kind: str = "bit"


@dataclass
class CpAction:
    """An action the control plane can reference."""

    name: str
    params: list[CpParam]
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)


@dataclass
class CpActionRef:
    """An entry of a table's action list with its scope annotation."""

    action: str
    scope: str = "TABLE_AND_DEFAULT"
    annotations: list[str] = field(default_factory=list)


@dataclass
class CpEntry:
    """A const/initial table entry: (field id, kind, values) per matched field, action and args."""

    matches: list[tuple[int, str, tuple[int, ...], int]]
    action: str
    args: list[tuple[int, int, int]]
    priority: int


@dataclass
class CpTable:
    """A table as P4Info describes it."""

    name: str
    keys: list[CpParam]
    actions: list[CpActionRef]
    size: int
    explicit_id: int | None = None
    const_default: bool = False
    default_action: str | None = None
    explicit_default: bool = False
    default_args: list[tuple[int, int, int]] = field(default_factory=list)
    implementation: str | None = None
    direct_resources: list[tuple[str, str]] = field(default_factory=list)
    support_timeout: bool = False
    is_const: bool = False
    has_initial_entries: bool = False
    annotations: list[str] = field(default_factory=list)
    entries: list[CpEntry] = field(default_factory=list)


@dataclass
class CpActionProfile:
    """An action profile or selector shared by `tables`."""

    name: str
    tables: list[str]
    with_selector: bool
    size: int
    explicit_id: int | None = None


@dataclass
class CpCounter:
    """An indirect or direct counter (`table` set for direct ones)."""

    name: str
    unit: str
    size: int = 0
    table: str | None = None
    explicit_id: int | None = None


@dataclass
class CpMeter:
    """An indirect or direct meter (`table` set for direct ones)."""

    name: str
    unit: str
    size: int = 0
    table: str | None = None
    explicit_id: int | None = None


@dataclass
class CpRegister:
    """A register array of `bitwidth`-bit cells."""

    name: str
    bitwidth: int
    size: int
    signed: bool = False
    explicit_id: int | None = None


@dataclass
class CpDigest:
    """A digest whose data is the struct `struct_name` with `fields`."""

    name: str
    struct_name: str
    fields: list[CpParam]
    explicit_id: int | None = None


@dataclass
class CpValueSet:
    """A parser value set."""

    name: str
    bitwidth: int
    size: int
    explicit_id: int | None = None
    fields: list[CpParam] = field(default_factory=list)


@dataclass
class CpControllerHeader:
    """A `@controller_header` header: packet-in or packet-out metadata."""

    name: str
    type_name: str
    fields: list[CpParam]
    explicit_id: int | None = None


@dataclass
class ControlPlane:
    """Everything P4Info lists, in p4c's emission order."""

    tables: list[CpTable] = field(default_factory=list)
    actions: list[CpAction] = field(default_factory=list)
    action_profiles: list[CpActionProfile] = field(default_factory=list)
    counters: list[CpCounter] = field(default_factory=list)
    direct_counters: list[CpCounter] = field(default_factory=list)
    meters: list[CpMeter] = field(default_factory=list)
    direct_meters: list[CpMeter] = field(default_factory=list)
    controller_headers: list[CpControllerHeader] = field(default_factory=list)
    value_sets: list[CpValueSet] = field(default_factory=list)
    registers: list[CpRegister] = field(default_factory=list)
    digests: list[CpDigest] = field(default_factory=list)
    pkg_info: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # Serializable enums declared by the program: (name, bitwidth, [(member, value)]).
    serializable_enums: list[tuple[str, int, list[tuple[str, int]]]] = field(default_factory=list)
