// L2 forwarding: exact match on the destination MAC, drop on miss.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser L2Parser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control L2VerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control L2Ingress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; drop; }
        size = 256;
        default_action = drop();
    }
    apply {
        dmac.apply();
    }
}

control L2Egress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control L2ComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control L2Deparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(L2Parser(), L2VerifyChecksum(), L2Ingress(), L2Egress(),
         L2ComputeChecksum(), L2Deparser()) main;
