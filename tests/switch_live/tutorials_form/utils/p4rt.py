"""A small P4Runtime client in the place of the tutorials' p4runtime_lib: primary arbitration,
the pipeline wrapped in PI's `p4.tmp.P4DeviceConfig` (as their bmv2.py sends it), and table
entries from an `sN-runtime.json`, each request written in text form to a dump file.

It imports what p4runtime_lib imports (grpc, protobuf, p4runtime's `p4.v1` and
`p4.config.v1`, `p4.tmp`) and nothing of bufferlab's.
"""

from __future__ import annotations

import ipaddress
import json
import queue
from pathlib import Path

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.tmp import p4config_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

ELECTION_ID = p4runtime_pb2.Uint128(high=0, low=1)


class P4Info:
    """Ids and widths by name from a P4Info text file."""

    def __init__(self, path: str | Path) -> None:
        self.message = text_format.Parse(Path(path).read_text(), p4info_pb2.P4Info())
        self.tables = {t.preamble.name: t for t in self.message.tables}
        self.actions = {a.preamble.name: a for a in self.message.actions}

    def table_entry(self, spec: dict) -> p4runtime_pb2.TableEntry:
        """A TableEntry from one `table_entries` item of a runtime JSON file."""
        table = self.tables[spec["table"]]
        entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
        fields = {f.name: f for f in table.match_fields}
        for name, value in spec.get("match", {}).items():
            field = fields[name]
            match = entry.match.add(field_id=field.id)
            if field.match_type == p4info_pb2.MatchField.LPM:
                match.lpm.value = encode(value[0], field.bitwidth)
                match.lpm.prefix_len = value[1]
            else:
                match.exact.value = encode(value, field.bitwidth)
        action = self.actions[spec["action_name"]]
        entry.action.action.action_id = action.preamble.id
        params = {p.name: p for p in action.params}
        for name, value in spec.get("action_params", {}).items():
            entry.action.action.params.add(param_id=params[name].id,
                                           value=encode(value, params[name].bitwidth))
        entry.is_default_action = bool(spec.get("default_action", False))
        return entry


def encode(value: str | int, bitwidth: int) -> bytes:
    """A match or parameter value in P4Runtime's bytes: dotted IPv4, colon MAC or integer."""
    if isinstance(value, str) and value.count(".") == 3:
        number = int(ipaddress.IPv4Address(value))
    elif isinstance(value, str) and ":" in value:
        number = int(value.replace(":", ""), 16)
    else:
        number = int(value)
    return number.to_bytes((bitwidth + 7) // 8, "big")


class Connection:
    """A primary controller connection to one switch; a context manager."""

    def __init__(self, address: str, device_id: int, dump: Path | None = None) -> None:
        self.device_id = device_id
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))
        self.dump = dump

    def _log(self, request: object) -> None:
        if self.dump is not None:
            with open(self.dump, "a") as out:
                out.write(f"[{type(request).__name__}]\n{text_format.MessageToString(request)}\n")

    def become_primary(self) -> None:
        """Arbitrate with election id 1; RuntimeError unless the switch makes us primary."""
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.CopyFrom(ELECTION_ID)
        self._log(request)
        self.requests.put(request)
        reply = next(self.stream)
        if reply.arbitration.status.code != 0:
            raise RuntimeError(f"not primary: {reply.arbitration.status.message}")

    def set_pipeline(self, p4info: P4Info, bmv2_json: Path) -> None:
        """SetForwardingPipelineConfig with the BMv2 JSON in a P4DeviceConfig."""
        wrapped = p4config_pb2.P4DeviceConfig(reassign=True, device_data=bmv2_json.read_bytes())
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=ELECTION_ID,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        request.config.p4info.CopyFrom(p4info.message)
        request.config.p4_device_config = wrapped.SerializeToString()
        self._log(request)
        self.stub.SetForwardingPipelineConfig(request)

    def write(self, entry: p4runtime_pb2.TableEntry) -> None:
        """Insert an entry (modify, for a default action)."""
        request = p4runtime_pb2.WriteRequest(device_id=self.device_id, election_id=ELECTION_ID)
        update = request.updates.add(type=p4runtime_pb2.Update.MODIFY if entry.is_default_action
                                     else p4runtime_pb2.Update.INSERT)
        update.entity.table_entry.CopyFrom(entry)
        self._log(request)
        self.stub.Write(request)

    def close(self) -> None:
        """End the stream and the channel."""
        self.requests.put(None)
        self.stream.cancel()
        self.channel.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def program_switch(address: str, device_id: int, runtime_json: Path, dump: Path) -> None:
    """Install the pipeline and the entries an `sN-runtime.json` names (paths relative to cwd)."""
    spec = json.loads(runtime_json.read_text())
    p4info = P4Info(spec["p4info"])
    with Connection(address, device_id, dump) as switch:
        switch.become_primary()
        switch.set_pipeline(p4info, Path(spec["bmv2_json"]))
        for item in spec.get("table_entries", []):
            switch.write(p4info.table_entry(item))
