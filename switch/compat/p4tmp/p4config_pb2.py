"""Protocol buffer classes of p4config.proto (package `p4.tmp`): `P4DeviceConfig` and its
`Extras`, as protoc's Python module for that file provides them.

The file descriptor is built here, field by field as p4config.proto declares it, and added
to protobuf's default pool at import time; the classes come from protobuf's reflection, as
in protoc's output for the protobuf 3.20 runtime. So no code generator is needed to build
or install bufferlab, and a client that does `from p4.tmp import p4config_pb2` gets the same
wire format as with PI's generated module.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message, reflection, symbol_database

_Field = descriptor_pb2.FieldDescriptorProto


def _file_proto() -> descriptor_pb2.FileDescriptorProto:
    """p4config.proto as a FileDescriptorProto (what protoc would embed, serialized)."""
    proto = descriptor_pb2.FileDescriptorProto(name="p4/tmp/p4config.proto", package="p4.tmp",
                                               syntax="proto3")
    config = proto.message_type.add(name="P4DeviceConfig")
    extras = config.nested_type.add(name="Extras")
    # A proto3 map is a repeated field of a nested entry type that protoc marks map_entry.
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, label=_Field.LABEL_OPTIONAL, type=_Field.TYPE_STRING,
                    json_name="key")
    entry.field.add(name="value", number=2, label=_Field.LABEL_OPTIONAL,
                    type=_Field.TYPE_STRING, json_name="value")
    extras.field.add(name="kv", number=1, label=_Field.LABEL_REPEATED, type=_Field.TYPE_MESSAGE,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry", json_name="kv")
    config.field.add(name="reassign", number=1, label=_Field.LABEL_OPTIONAL,
                     type=_Field.TYPE_BOOL, json_name="reassign")
    config.field.add(name="extras", number=2, label=_Field.LABEL_OPTIONAL,
                     type=_Field.TYPE_MESSAGE, type_name=".p4.tmp.P4DeviceConfig.Extras",
                     json_name="extras")
    config.field.add(name="device_data", number=3, label=_Field.LABEL_OPTIONAL,
                     type=_Field.TYPE_BYTES, json_name="deviceData")
    return proto


DESCRIPTOR = descriptor_pool.Default().AddSerializedFile(_file_proto().SerializeToString())

_P4DEVICECONFIG = DESCRIPTOR.message_types_by_name["P4DeviceConfig"]
_EXTRAS = _P4DEVICECONFIG.nested_types_by_name["Extras"]
_KVENTRY = _EXTRAS.nested_types_by_name["KvEntry"]

P4DeviceConfig = reflection.GeneratedProtocolMessageType("P4DeviceConfig", (message.Message,), {
    "Extras": reflection.GeneratedProtocolMessageType("Extras", (message.Message,), {
        "KvEntry": reflection.GeneratedProtocolMessageType("KvEntry", (message.Message,), {
            "DESCRIPTOR": _KVENTRY,
            "__module__": __name__,
        }),
        "DESCRIPTOR": _EXTRAS,
        "__module__": __name__,
    }),
    "DESCRIPTOR": _P4DEVICECONFIG,
    "__module__": __name__,
})

_symbols = symbol_database.Default()
_symbols.RegisterMessage(P4DeviceConfig)
_symbols.RegisterMessage(P4DeviceConfig.Extras)
_symbols.RegisterMessage(P4DeviceConfig.Extras.KvEntry)
