// Header union of IPv4 and IPv6 selected by EtherType; union validity in the control.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header_union ip_t {
    ipv4_t v4;
    ipv6_t v6;
}

struct headers_t {
    ethernet_t ethernet;
    ip_t       ip;
}
struct metadata_t {
    bit<8> hop_limit;
}

parser UnionParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_v4;
            ETHERTYPE_IPV6: parse_v6;
            default: accept;
        }
    }
    state parse_v4 {
        pkt.extract(hdr.ip.v4);
        transition accept;
    }
    state parse_v6 {
        pkt.extract(hdr.ip.v6);
        transition accept;
    }
}

control UnionVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control UnionIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.ip.isValid()) {
            if (hdr.ip.v4.isValid()) {
                meta.hop_limit = hdr.ip.v4.ttl;
                hdr.ip.v4.ttl = hdr.ip.v4.ttl - 1;
            } else {
                meta.hop_limit = hdr.ip.v6.hopLimit;
                hdr.ip.v6.hopLimit = hdr.ip.v6.hopLimit - 1;
            }
            standard_metadata.egress_spec = 1;
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control UnionEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) { apply { } }

control UnionComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control UnionDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ip);
    }
}

V1Switch(UnionParser(), UnionVerifyChecksum(), UnionIngress(), UnionEgress(),
         UnionComputeChecksum(), UnionDeparser()) main;
