// Every match kind under control-plane priorities: an lpm route table, and an
// ACL with exact, ternary, range and optional keys whose winner marks the
// IPv4 identification field.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
}

struct metadata_t { }

parser MkParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control MkVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MkIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action set_port(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action set_class(bit<16> class) {
        hdr.ipv4.identification = class;
    }
    action deny() {
        mark_to_drop(standard_metadata);
    }
    table lpm_route {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { set_port; deny; }
        default_action = deny();
    }
    table acl {
        key = {
            hdr.ipv4.protocol : exact;
            hdr.ipv4.srcAddr  : ternary;
            hdr.udp.dstPort   : range;
            hdr.udp.srcPort   : optional;
        }
        actions = { set_class; deny; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            lpm_route.apply();
            if (hdr.udp.isValid()) {
                acl.apply();
            }
        }
    }
}

control MkEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MkComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MkDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

V1Switch(MkParser(), MkVerifyChecksum(), MkIngress(), MkEgress(),
         MkComputeChecksum(), MkDeparser()) main;
