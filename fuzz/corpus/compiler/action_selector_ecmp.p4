// ECMP with an action selector hashing the 5-tuple (selector match keys).
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    tcp_t      tcp;
}
struct metadata_t { }

parser EcmpParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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
        transition select(hdr.ipv4.protocol) {
            PROTO_TCP: parse_tcp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        transition accept;
    }
}

control EcmpVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control EcmpIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action set_port(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table ecmp_group {
        key = {
            hdr.ipv4.dstAddr  : lpm;
            hdr.ipv4.srcAddr  : selector;
            hdr.ipv4.protocol : selector;
            hdr.tcp.srcPort   : selector;
            hdr.tcp.dstPort   : selector;
        }
        actions = { set_port; drop; }
        implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w14);
        size = 1024;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            ecmp_group.apply();
        }
    }
}

control EcmpEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control EcmpComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control EcmpDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
    }
}

V1Switch(EcmpParser(), EcmpVerifyChecksum(), EcmpIngress(), EcmpEgress(),
         EcmpComputeChecksum(), EcmpDeparser()) main;
