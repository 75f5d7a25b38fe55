// ACL: ternary and optional keys, const entries in priority order, const default action.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t { }

parser AclParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control AclVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control AclIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action deny() {
        mark_to_drop(standard_metadata);
    }
    action permit(port_t port) {
        standard_metadata.egress_spec = port;
    }
    table acl {
        key = {
            hdr.ipv4.srcAddr  : ternary;
            hdr.ipv4.dstAddr  : ternary;
            hdr.ipv4.protocol : optional;
        }
        actions = { deny; permit; }
        const default_action = deny();
        const entries = {
            (0x0a000000 &&& 0xff000000, 0x0a000001 &&& 0xffffffff, PROTO_TCP) : permit(1);
            (0x0a000000 &&& 0xff000000, _, PROTO_UDP) : permit(2);
            (_, 0xc0a80000 &&& 0xffff0000, _) : permit(3);
            (_, _, _) : deny();
        }
    }
    apply {
        if (hdr.ipv4.isValid()) {
            acl.apply();
        }
    }
}

control AclEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control AclComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control AclDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(AclParser(), AclVerifyChecksum(), AclIngress(), AclEgress(),
         AclComputeChecksum(), AclDeparser()) main;
