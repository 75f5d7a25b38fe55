"""P4Runtime roles (spec "Default Role", "Role Config"): what a role's primary may do.

The spec leaves the role config's form to an out-of-band agreement between client and
server. bufferlab-switch's form is a `google.protobuf.Struct` packed into `role.config`,
so that any client can build it without our own .proto:

    {"p4_ids": [33554433, 302005409],   # tables, profiles, counters, meters, registers,
                                          # digests this role may write (P4Info ids)
     "packet_io": true,                  # receives PacketIns and may send PacketOuts
     "pipeline": false}                  # may set the forwarding pipeline

An unset config (and the default role, whose name is "") means full pipeline access. In a
set config, a key left out grants nothing. Replication-engine entries (multicast groups,
clone sessions) have no P4Info id: only a full-access role writes them. Reads are not
restricted by role.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import any_pb2, struct_pb2
from p4.v1 import p4runtime_pb2

from .status import P4RuntimeError

STRUCT_TYPE_URL = "type.googleapis.com/google.protobuf.Struct"
ROLE_CONFIG_KEYS = ("p4_ids", "packet_io", "pipeline")
DEFAULT_ROLE = ""


@dataclass(frozen=True)
class RoleConfig:
    """What one role's primary may do; `p4_ids` None means every object (full access)."""

    p4_ids: frozenset[int] | None = None
    packet_io: bool = True
    pipeline: bool = True

    @property
    def full_access(self) -> bool:
        """Whether this role may write every entity."""
        return self.p4_ids is None

    def may_write(self, entity: p4runtime_pb2.Entity) -> bool:
        """Whether the role's primary may write `entity`."""
        if self.p4_ids is None:
            return True
        object_id = entity_object_id(entity)
        return object_id is not None and object_id in self.p4_ids

    def receives_digest(self, digest_id: int) -> bool:
        """Whether DigestLists of `digest_id` go to this role's primary."""
        return self.p4_ids is None or digest_id in self.p4_ids


FULL_ACCESS = RoleConfig()


def entity_object_id(entity: p4runtime_pb2.Entity) -> int | None:
    """The P4Info id of the object an entity belongs to (direct resources: their table's),
    or None for entities without one (replication-engine entries, an empty entity)."""
    kind = entity.WhichOneof("entity")
    if kind is None or kind == "packet_replication_engine_entry":
        return None
    message = getattr(entity, kind)
    for field in ("table_id", "action_profile_id", "counter_id", "meter_id", "register_id",
                  "digest_id", "value_set_id", "extern_id"):
        if field in message.DESCRIPTOR.fields_by_name:
            return getattr(message, field)
    # direct_counter_entry and direct_meter_entry name their table through a TableEntry.
    return message.table_entry.table_id


def role_name(request: object) -> str:
    """The role a Write/Read/SetForwardingPipelineConfig request names ("" = default).

    `role_id` is deprecated since P4Runtime 1.4 and is refused rather than guessed at.
    """
    if getattr(request, "role_id", 0):
        raise P4RuntimeError("UNIMPLEMENTED", "role_id is deprecated: name the role in `role`")
    return request.role


def parse_role_config(role: p4runtime_pb2.Role) -> RoleConfig:
    """The RoleConfig an arbitration's `role` carries; INVALID_ARGUMENT if it is not ours."""
    if role.id:
        raise P4RuntimeError("UNIMPLEMENTED", "role.id is deprecated: name the role in role.name")
    if not role.HasField("config"):
        return FULL_ACCESS
    config: any_pb2.Any = role.config
    if config.type_url != STRUCT_TYPE_URL:
        raise P4RuntimeError(
            "INVALID_ARGUMENT",
            f"role.config must be a {STRUCT_TYPE_URL} (keys {', '.join(ROLE_CONFIG_KEYS)}),"
            f" not {config.type_url or 'an empty type'}",
        )
    fields = struct_pb2.Struct()
    if not config.Unpack(fields):
        raise P4RuntimeError("INVALID_ARGUMENT", "role.config does not decode as a Struct")
    unknown = sorted(set(fields.fields) - set(ROLE_CONFIG_KEYS))
    if unknown:
        raise P4RuntimeError("INVALID_ARGUMENT", f"role.config: unknown key(s) {', '.join(unknown)}"
                             f" (known: {', '.join(ROLE_CONFIG_KEYS)})")
    ids: set[int] = set()
    if "p4_ids" in fields.fields:
        value = fields.fields["p4_ids"]
        if value.WhichOneof("kind") != "list_value":
            raise P4RuntimeError("INVALID_ARGUMENT", "role.config.p4_ids must be a list of ids")
        for item in value.list_value.values:
            number = item.number_value if item.WhichOneof("kind") == "number_value" else -1
            if number != int(number) or not 0 < number < 1 << 32:
                raise P4RuntimeError("INVALID_ARGUMENT",
                                     f"role.config.p4_ids: {item} is not a P4Info id")
            ids.add(int(number))
    flags = {}
    for key in ("packet_io", "pipeline"):
        value = fields.fields.get(key)
        if value is not None and value.WhichOneof("kind") != "bool_value":
            raise P4RuntimeError("INVALID_ARGUMENT", f"role.config.{key} must be true or false")
        flags[key] = value is not None and value.bool_value
    return RoleConfig(frozenset(ids), **flags)

