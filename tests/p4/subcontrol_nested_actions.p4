// Sub-controls applied twice with different arguments, and actions that call actions.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t {
    bit<16> src_class;
    bit<16> dst_class;
}

parser NestParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control NestVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control AddressClassifier(in ipv4_addr_t addr, out bit<16> cls) {
    action set_class(bit<16> c) {
        cls = c;
    }
    table classify {
        key = { addr : lpm; }
        actions = { set_class; }
        default_action = set_class(0);
    }
    apply {
        classify.apply();
    }
}

control NestIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    AddressClassifier() src_classifier;
    AddressClassifier() dst_classifier;

    action rewrite_src(mac_addr_t smac) {
        hdr.ethernet.srcAddr = smac;
    }
    action decrement_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action route(mac_addr_t smac, mac_addr_t dmac, port_t port) {
        rewrite_src(smac);
        hdr.ethernet.dstAddr = dmac;
        decrement_ttl();
        standard_metadata.egress_spec = port;
    }
    table class_route {
        key = {
            meta.src_class : exact;
            meta.dst_class : exact;
        }
        actions = { route; NoAction; }
    }
    apply {
        if (hdr.ipv4.isValid()) {
            src_classifier.apply(hdr.ipv4.srcAddr, meta.src_class);
            dst_classifier.apply(hdr.ipv4.dstAddr, meta.dst_class);
            class_route.apply();
        }
    }
}

control NestEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control NestComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control NestDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(NestParser(), NestVerifyChecksum(), NestIngress(), NestEgress(),
         NestComputeChecksum(), NestDeparser()) main;
