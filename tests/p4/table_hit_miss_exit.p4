// apply().hit / .miss branches, exit in a control and return inside an action.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t {
    bit<1> learned;
}

parser HmParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control HmVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control HmIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action to_port(port_t port) {
        standard_metadata.egress_spec = port;
        if (port == 0) {
            return;
        }
        meta.learned = 1;
    }
    table blocked {
        key = { hdr.ethernet.srcAddr : exact; }
        actions = { NoAction; }
    }
    table smac {
        key = { hdr.ethernet.srcAddr : exact; }
        actions = { NoAction; }
        size = 4096;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { to_port; NoAction; }
    }
    apply {
        if (blocked.apply().hit) {
            mark_to_drop(standard_metadata);
            exit;
        }
        if (dmac.apply().miss) {
            standard_metadata.mcast_grp = 1;
        }
        if (!smac.apply().hit) {
            meta.learned = 0;
        }
    }
}

control HmEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
        }
    }
}

control HmComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control HmDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(HmParser(), HmVerifyChecksum(), HmIngress(), HmEgress(),
         HmComputeChecksum(), HmDeparser()) main;
