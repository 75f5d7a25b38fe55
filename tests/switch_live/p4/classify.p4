// Ternary, optional and range keys in one writable table: a frame's port comes from the
// highest-priority entry matching its source MAC (ternary), ether type (optional) and
// destination MAC's last byte (range).
#include <core.p4>
#include <v1model.p4>
#include "../../p4/include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t { }

parser ClassifyParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control ClassifyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ClassifyIngress(inout headers_t hdr, inout metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    action to_port(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table classify {
        key = {
            hdr.ethernet.srcAddr : ternary @name("src");
            hdr.ethernet.etherType : optional @name("ether_type");
            hdr.ethernet.dstAddr[7:0] : range @name("dst_low");
        }
        actions = { to_port; drop; }
        default_action = drop();
    }
    apply {
        classify.apply();
    }
}

control ClassifyEgress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t standard_metadata) { apply { } }

control ClassifyComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ClassifyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(ClassifyParser(), ClassifyVerifyChecksum(), ClassifyIngress(), ClassifyEgress(),
         ClassifyComputeChecksum(), ClassifyDeparser()) main;
