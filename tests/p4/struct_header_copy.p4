// Header and struct assignment, setValid/setInvalid, nested metadata structs, tuples.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct flow_key_t {
    ipv4_addr_t src;
    ipv4_addr_t dst;
    bit<8>      protocol;
}

struct metadata_t {
    flow_key_t key;
    flow_key_t saved;
    bool       is_tunnel;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     outer;
    ipv4_t     inner;
}

parser CopyParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_outer;
            default: accept;
        }
    }
    state parse_outer {
        pkt.extract(hdr.outer);
        transition select(hdr.outer.protocol) {
            4: parse_inner;
            default: accept;
        }
    }
    state parse_inner {
        pkt.extract(hdr.inner);
        transition accept;
    }
}

control CopyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CopyIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action decap() {
        hdr.outer = hdr.inner;
        hdr.inner.setInvalid();
        meta.is_tunnel = true;
    }
    action encap(ipv4_addr_t tunnel_src, ipv4_addr_t tunnel_dst) {
        hdr.inner = hdr.outer;
        hdr.outer.srcAddr = tunnel_src;
        hdr.outer.dstAddr = tunnel_dst;
        hdr.outer.protocol = 4;
        hdr.outer.totalLen = hdr.outer.totalLen + 20;
    }
    table tunnel {
        key = {
            hdr.outer.dstAddr : exact;
            hdr.inner.isValid() : exact;
        }
        actions = { decap; encap; NoAction; }
    }
    apply {
        meta.is_tunnel = false;
        if (hdr.outer.isValid()) {
            meta.key = { hdr.outer.srcAddr, hdr.outer.dstAddr, hdr.outer.protocol };
            meta.saved = meta.key;
            tunnel.apply();
        }
        standard_metadata.egress_spec = meta.is_tunnel ? (port_t)2 : (port_t)1;
    }
}

control CopyEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control CopyComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CopyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.outer);
        pkt.emit(hdr.inner);
    }
}

V1Switch(CopyParser(), CopyVerifyChecksum(), CopyIngress(), CopyEgress(),
         CopyComputeChecksum(), CopyDeparser()) main;
