// Parser transitions: masked values, ranges, tuple keys with wildcards, default, reject.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    vlan_t     vlan;
    ipv4_t     ipv4;
    tcp_t      tcp;
    udp_t      udp;
}
struct metadata_t {
    bit<8> path;
}

parser MaskParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_VLAN: parse_vlan;
            0x0800 &&& 0xffff: parse_ipv4;
            0x0000 .. 0x05dc: accept;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.vid, hdr.vlan.etherType) {
            (0, _): reject;
            (_, ETHERTYPE_IPV4): parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (0, 5, PROTO_TCP): parse_tcp;
            (0, 5 .. 15, PROTO_UDP): parse_udp;
            (0 &&& 0x1fff, 0x4 &&& 0xc, _): accept;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        meta.path = 1;
        transition accept;
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        meta.path = 2;
        transition accept;
    }
}

control MaskVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MaskIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error != error.NoError) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = (port_t)meta.path;
        }
    }
}

control MaskEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control MaskComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MaskDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}

V1Switch(MaskParser(), MaskVerifyChecksum(), MaskIngress(), MaskEgress(),
         MaskComputeChecksum(), MaskDeparser()) main;
