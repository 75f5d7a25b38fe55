// Action profile: next-hop members shared by two routing tables.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t { }

parser ApParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control ApVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ApIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action_profile(128) next_hops;

    action set_next_hop(mac_addr_t dmac, port_t port) {
        hdr.ethernet.dstAddr = dmac;
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table host_routes {
        key = { hdr.ipv4.dstAddr : exact; }
        actions = { set_next_hop; drop; }
        implementation = next_hops;
    }
    table prefix_routes {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { set_next_hop; drop; }
        implementation = next_hops;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            if (!host_routes.apply().hit) {
                prefix_routes.apply();
            }
        }
    }
}

control ApEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control ApComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ApDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(ApParser(), ApVerifyChecksum(), ApIngress(), ApEgress(),
         ApComputeChecksum(), ApDeparser()) main;
