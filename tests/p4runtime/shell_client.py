"""Driven by test_p4runtime_shell.py in a subprocess: real p4runtime-shell 0.0.6 script API
against the server. Prints one JSON line per step; waits for a line on stdin before reading
the counter (the test sets the count meanwhile, as traffic would), then sends a PacketOut
and waits for the PacketIn the test makes the target emit."""

import json
import os
import sys
import traceback

import p4runtime_sh.shell as sh


def report(**values):
    print(json.dumps(values), flush=True)


def main():
    address, p4info_path, json_path = sys.argv[1:4]
    sh.setup(device_id=1, grpc_addr=address, election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info_path, json_path), verbose=False)
    entry = sh.TableEntry("MyIngress.l2_fwd")(action="MyIngress.set_port")
    entry.match["hdr.ethernet.dstAddr"] = "00:00:00:00:00:01"
    entry.action["port"] = "3"
    entry.insert()
    acl = sh.TableEntry("acl")(action="drop")
    acl.match["hdr.ipv4.srcAddr"] = "10.0.0.0&&&255.0.0.0"
    acl.match["meta.l4_dport"] = "80..443"
    acl.priority = 7
    acl.insert()
    group = sh.MulticastGroupEntry(1)
    group.add(1, 0).add(2, 0)
    group.insert()
    read = []
    for found in sh.TableEntry("MyIngress.l2_fwd").read():
        message = found.msg()
        read.append({
            "mac": message.match[0].exact.value.hex(),
            "action_id": message.action.action.action_id,
            "port": message.action.action.params[0].value.hex(),
        })
    acl_read = [e.msg().priority for e in sh.TableEntry("acl").read()]
    groups = [
        [r.egress_port for r in g.msg().multicast_group_entry.replicas] for g in sh.MulticastGroupEntry(1).read()
    ]
    report(step="inserted", entries=read, acl_priorities=acl_read, groups=groups)
    sys.stdin.readline()
    counter = sh.CounterEntry("port_counter")
    counter.index = 2
    cells = [c.msg() for c in counter.read()]
    report(step="counter", cells=[[c.index.index, c.data.packet_count, c.data.byte_count]
                                   for c in cells])
    sh.PacketOut(b"from-shell", egress_port="3", mcast_grp="258").send()
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
        # The shell's stream thread would keep a failed interpreter alive.
        os._exit(1)
