// Sub-parsers: an L3 parser instantiated and applied from the top-level parser.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    tcp_t      tcp;
    udp_t      udp;
}
struct metadata_t {
    bit<16> l4_dst;
}

parser L4Parser(packet_in pkt, in bit<8> protocol, inout headers_t hdr, out bit<16> dst_port) {
    state start {
        dst_port = 0;
        transition select(protocol) {
            PROTO_TCP: parse_tcp;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        dst_port = hdr.tcp.dstPort;
        transition accept;
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        dst_port = hdr.udp.dstPort;
        transition accept;
    }
}

parser SubParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    L4Parser() l4_parser;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        l4_parser.apply(pkt, hdr.ipv4.protocol, hdr, meta.l4_dst);
        transition accept;
    }
}

control SubVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control SubIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action to_port(port_t port) {
        standard_metadata.egress_spec = port;
    }
    table by_l4_port {
        key = { meta.l4_dst : exact; }
        actions = { to_port; NoAction; }
    }
    apply {
        by_l4_port.apply();
    }
}

control SubEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control SubComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control SubDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}

V1Switch(SubParser(), SubVerifyChecksum(), SubIngress(), SubEgress(),
         SubComputeChecksum(), SubDeparser()) main;
