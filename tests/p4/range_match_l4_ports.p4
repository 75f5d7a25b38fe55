// Traffic classes by L4 port ranges: range keys, const range entries, priority queue choice.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    tcp_t      tcp;
}
struct metadata_t { }

parser ClassParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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
            PROTO_TCP: parse_tcp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        transition accept;
    }
}

control ClassVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ClassIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    action set_class(bit<3> prio) {
        standard_metadata.priority = prio;
    }
    table port_class {
        key = {
            hdr.tcp.dstPort : range;
            hdr.tcp.srcPort : range;
        }
        actions = { set_class; NoAction; }
        size = 64;
        const entries = {
            (0 .. 1023, _) : set_class(7);
            (5201 .. 5210, 1024 .. 65535) : set_class(3);
            (_, 0 .. 1023) : set_class(5);
        }
    }
    action to_port(port_t port) {
        standard_metadata.egress_spec = port;
    }
    table forward {
        key = { standard_metadata.ingress_port : exact; }
        actions = { to_port; }
        default_action = to_port(1);
    }
    apply {
        if (hdr.tcp.isValid()) {
            port_class.apply();
        }
        forward.apply();
    }
}

control ClassEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) { apply { } }

control ClassComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ClassDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
    }
}

V1Switch(ClassParser(), ClassVerifyChecksum(), ClassIngress(), ClassEgress(),
         ClassComputeChecksum(), ClassDeparser()) main;
