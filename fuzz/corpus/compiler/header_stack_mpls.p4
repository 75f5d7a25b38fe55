// MPLS label stack: extract with next, last/lastIndex, indexing, push_front and pop_front.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct headers_t {
    ethernet_t ethernet;
    mpls_t[4]  mpls;
    ipv4_t     ipv4;
}
struct metadata_t {
    bit<32> depth;
}

parser MplsParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_MPLS: parse_mpls;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: parse_ipv4;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control MplsVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MplsIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action pop_label(port_t port) {
        hdr.mpls.pop_front(1);
        standard_metadata.egress_spec = port;
    }
    action push_label(bit<20> label, port_t port) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].tc = 0;
        hdr.mpls[0].bos = 0;
        hdr.mpls[0].ttl = 64;
        standard_metadata.egress_spec = port;
    }
    action swap_label(bit<20> label, port_t port) {
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = hdr.mpls[0].ttl - 1;
        standard_metadata.egress_spec = port;
    }
    table lfib {
        key = { hdr.mpls[0].label : exact; }
        actions = { pop_label; swap_label; push_label; NoAction; }
    }
    apply {
        if (hdr.mpls[0].isValid()) {
            meta.depth = hdr.mpls.lastIndex;
            lfib.apply();
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control MplsEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control MplsComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MplsDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(MplsParser(), MplsVerifyChecksum(), MplsIngress(), MplsEgress(),
         MplsComputeChecksum(), MplsDeparser()) main;
