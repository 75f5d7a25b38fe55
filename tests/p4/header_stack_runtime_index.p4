// Header stack indexed by a run-time value: read and write s[i].f in actions.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header hop_t {
    bit<8>  switch_id;
    bit<24> queue_depth;
}

header hop_count_t {
    bit<8>  count;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t  ethernet;
    hop_count_t hops;
    hop_t[3]    hop;
}
struct metadata_t { }

parser HopParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_hops;
            default: accept;
        }
    }
    state parse_hops {
        pkt.extract(hdr.hops);
        transition select(hdr.hops.count) {
            0: accept;
            1: parse_hop1;
            2: parse_hop2;
            default: parse_hop3;
        }
    }
    state parse_hop1 {
        pkt.extract(hdr.hop.next);
        transition accept;
    }
    state parse_hop2 {
        pkt.extract(hdr.hop.next);
        pkt.extract(hdr.hop.next);
        transition accept;
    }
    state parse_hop3 {
        pkt.extract(hdr.hop[0]);
        pkt.extract(hdr.hop[1]);
        pkt.extract(hdr.hop[2]);
        transition accept;
    }
}

control HopVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control HopIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
    }
}

control HopEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action record(bit<8> switch_id, bit<2> slot) {
        hdr.hop[slot].setValid();
        hdr.hop[slot].switch_id = switch_id;
        hdr.hop[slot].queue_depth = (bit<24>)standard_metadata.enq_qdepth;
        hdr.hops.count = hdr.hops.count + 1;
    }
    table hop_slot {
        key = { hdr.hops.count : exact; }
        actions = { record; NoAction; }
    }
    apply {
        if (hdr.hops.isValid()) {
            hop_slot.apply();
        }
    }
}

control HopComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control HopDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.hops);
        pkt.emit(hdr.hop);
    }
}

V1Switch(HopParser(), HopVerifyChecksum(), HopIngress(), HopEgress(),
         HopComputeChecksum(), HopDeparser()) main;
