// MAC learning: unknown source addresses are sent to the controller with digest().
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct learn_t {
    mac_addr_t srcAddr;
    port_t     ingress_port;
}

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t {
    learn_t learn;
}

parser LearnParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control LearnVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LearnIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    action learn() {
        meta.learn.srcAddr = hdr.ethernet.srcAddr;
        meta.learn.ingress_port = standard_metadata.ingress_port;
        digest<learn_t>(1, meta.learn);
    }
    table smac {
        key = { hdr.ethernet.srcAddr : exact; }
        actions = { learn; NoAction; }
        default_action = learn();
    }
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action broadcast() {
        standard_metadata.mcast_grp = 1;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { forward; broadcast; }
        default_action = broadcast();
    }
    apply {
        smac.apply();
        dmac.apply();
    }
}

control LearnEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) { apply { } }

control LearnComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LearnDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(LearnParser(), LearnVerifyChecksum(), LearnIngress(), LearnEgress(),
         LearnComputeChecksum(), LearnDeparser()) main;
