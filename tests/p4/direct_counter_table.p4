// Direct counter bound to a table: one count per entry, count() in every action.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t { }

parser DcParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control DcVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DcIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) route_hits;

    action route(port_t port) {
        route_hits.count();
        standard_metadata.egress_spec = port;
    }
    action discard() {
        route_hits.count();
        mark_to_drop(standard_metadata);
    }
    table routes {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { route; discard; }
        counters = route_hits;
        size = 512;
        default_action = discard();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            routes.apply();
        }
    }
}

control DcEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control DcComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DcDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(DcParser(), DcVerifyChecksum(), DcIngress(), DcEgress(),
         DcComputeChecksum(), DcDeparser()) main;
