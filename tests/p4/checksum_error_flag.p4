// verify_checksum sets standard_metadata.checksum_error without dropping; the
// program routes bad frames aside untouched, and update_checksum recomputes the
// IPv4 header checksum only for the frames it rewrote.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct metadata_t {
    bit<1> rewritten;
}

parser CeParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control CeVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control CeIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.checksum_error == 1) {
            standard_metadata.egress_spec = 2;
        } else if (hdr.ipv4.isValid()) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            hdr.ipv4.dscp = 46;
            meta.rewritten = 1;
            standard_metadata.egress_spec = 1;
        } else {
            standard_metadata.egress_spec = 3;
        }
    }
}

control CeEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control CeComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(meta.rewritten == 1,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control CeDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(CeParser(), CeVerifyChecksum(), CeIngress(), CeEgress(),
         CeComputeChecksum(), CeDeparser()) main;
