"""Run by test_target.py in a subprocess: real p4runtime-shell 0.0.6 pushes the packet I/O
program, writes a punt entry, sends a PacketOut and waits for a PacketIn. Prints one JSON
line per step."""

import json
import os
import sys
import traceback

import p4runtime_sh.shell as sh

FRAME = bytes.fromhex("080000000202" "080000000101" "0800") + b"x" * 46


def report(**values):
    print(json.dumps(values), flush=True)


def main():
    address, p4info_path, json_path = sys.argv[1:4]
    sh.setup(device_id=0, grpc_addr=address, election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info_path, json_path), verbose=False)
    punt = sh.TableEntry("punt")(action="send_to_cpu")
    punt.match["hdr.ethernet.etherType"] = "0x88b5"
    punt.insert()
    report(step="inserted")
    sh.PacketOut(FRAME, egress_port="2").send()
    report(step="packet_out_sent")
    packet_in = sh.client.get_stream_packet("packet", timeout=60).packet
    report(step="packet_in", payload=packet_in.payload.hex(),
           metadata=[[m.metadata_id, m.value.hex()] for m in packet_in.metadata])
    sh.teardown()


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
