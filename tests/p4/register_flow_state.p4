// Registers: per-flow packet count and last-seen timestamp, read-modify-write in an action.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<32> FLOW_SLOTS = 1024;

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t {
    bit<32> flow_index;
    bit<32> packets;
    bit<48> gap;
}

parser RegParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control RegVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RegIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    register<bit<32>>(FLOW_SLOTS) flow_packets;
    register<bit<48>>(FLOW_SLOTS) flow_last_seen;

    action update_flow() {
        flow_packets.read(meta.packets, meta.flow_index);
        meta.packets = meta.packets + 1;
        flow_packets.write(meta.flow_index, meta.packets);
        bit<48> last;
        flow_last_seen.read(last, meta.flow_index);
        meta.gap = standard_metadata.ingress_global_timestamp - last;
        flow_last_seen.write(meta.flow_index, standard_metadata.ingress_global_timestamp);
    }
    apply {
        if (hdr.ipv4.isValid()) {
            meta.flow_index = hdr.ipv4.dstAddr & (FLOW_SLOTS - 1);
            update_flow();
            if (meta.gap > 1000000) {
                standard_metadata.egress_spec = 2;
            } else {
                standard_metadata.egress_spec = 1;
            }
        }
    }
}

control RegEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control RegComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RegDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(RegParser(), RegVerifyChecksum(), RegIngress(), RegEgress(),
         RegComputeChecksum(), RegDeparser()) main;
