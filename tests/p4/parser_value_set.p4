// Parser value sets: the control plane chooses which EtherTypes carry the tunnel header.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header tunnel_t {
    bit<16> tunnelId;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t ethernet;
    tunnel_t   tunnel;
}
struct metadata_t { }

parser PvsParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) tunnel_ethertypes;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            tunnel_ethertypes: parse_tunnel;
            default: accept;
        }
    }
    state parse_tunnel {
        pkt.extract(hdr.tunnel);
        transition accept;
    }
}

control PvsVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PvsIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action to_port(port_t port) {
        standard_metadata.egress_spec = port;
    }
    table tunnel_exit {
        key = { hdr.tunnel.tunnelId : exact; }
        actions = { to_port; NoAction; }
    }
    apply {
        if (hdr.tunnel.isValid()) {
            tunnel_exit.apply();
        } else {
            standard_metadata.egress_spec = 0;
        }
    }
}

control PvsEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control PvsComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PvsDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tunnel);
    }
}

V1Switch(PvsParser(), PvsVerifyChecksum(), PvsIngress(), PvsEgress(),
         PvsComputeChecksum(), PvsDeparser()) main;
