// Multicast via mcast_grp with per-copy rewrites by egress_rid; truncated monitor copies.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    vlan_t     vlan;
}
struct metadata_t { }

parser McParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_VLAN: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition accept;
    }
}

control McVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control McIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action set_group(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }
    table vlan_flood {
        key = { hdr.vlan.vid : exact; }
        actions = { set_group; NoAction; }
        size = 4096;
    }
    apply {
        if (hdr.vlan.isValid()) {
            vlan_flood.apply();
        } else {
            standard_metadata.mcast_grp = 1;
        }
    }
}

control McEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    action untag() {
        hdr.ethernet.etherType = hdr.vlan.etherType;
        hdr.vlan.setInvalid();
    }
    action monitor_copy(bit<32> snap_bytes) {
        truncate(snap_bytes);
    }
    table replica {
        key = { standard_metadata.egress_rid : exact; }
        actions = { untag; monitor_copy; NoAction; }
    }
    apply {
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
        } else {
            replica.apply();
        }
    }
}

control McComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control McDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
    }
}

V1Switch(McParser(), McVerifyChecksum(), McIngress(), McEgress(),
         McComputeChecksum(), McDeparser()) main;
