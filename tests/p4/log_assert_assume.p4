// Debugging externs: log_msg with and without data, assert and assume.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t { }

parser LogParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control LogVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LogIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action trace(bit<8> level) {
        log_msg("trace level {} on port {}", { level, standard_metadata.ingress_port });
    }
    table tracing {
        key = { standard_metadata.ingress_port : exact; }
        actions = { trace; NoAction; }
    }
    apply {
        log_msg("packet received");
        tracing.apply();
        if (hdr.ipv4.isValid()) {
            assume(hdr.ipv4.version == 4);
            assert(hdr.ipv4.ihl >= 5);
            log_msg("ttl={} dst={}", { hdr.ipv4.ttl, hdr.ipv4.dstAddr });
        }
        standard_metadata.egress_spec = 1;
    }
}

control LogEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control LogComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LogDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(LogParser(), LogVerifyChecksum(), LogIngress(), LogEgress(),
         LogComputeChecksum(), LogDeparser()) main;
