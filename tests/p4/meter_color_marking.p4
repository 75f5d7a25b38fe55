// Indirect meter: two-rate three-colour marking per flow class, colour written to DSCP.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<2> COLOR_GREEN = 0;
const bit<2> COLOR_YELLOW = 1;
const bit<2> COLOR_RED = 2;

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t {
    bit<2> color;
    bit<8> meter_index;
}

parser MtrParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control MtrVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MtrIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    meter(256, MeterType.bytes) class_meter;
    meter(64, MeterType.packets) port_meter;

    action police(bit<8> index) {
        meta.meter_index = index;
        class_meter.execute_meter<bit<2>>((bit<32>)index, meta.color);
    }
    table classify {
        key = { hdr.ipv4.dscp : exact; }
        actions = { police; NoAction; }
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.ipv4.isValid()) {
            classify.apply();
            if (meta.color == COLOR_RED) {
                mark_to_drop(standard_metadata);
            } else if (meta.color == COLOR_YELLOW) {
                hdr.ipv4.dscp = 10;
            }
        }
        bit<2> port_color;
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, port_color);
        if (port_color == COLOR_RED) {
            mark_to_drop(standard_metadata);
        }
    }
}

control MtrEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control MtrComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MtrDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(MtrParser(), MtrVerifyChecksum(), MtrIngress(), MtrEgress(),
         MtrComputeChecksum(), MtrDeparser()) main;
