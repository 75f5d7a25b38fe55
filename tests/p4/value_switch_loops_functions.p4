// switch on a header value, for loops with break/continue in actions, and functions.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header work_t {
    bit<8>  op;
    bit<8>  count;
    bit<16> acc;
    bit<8>  kind;
}

struct headers_t {
    ethernet_t ethernet;
    work_t     work;
}
struct metadata_t { }

bit<16> scaled(in bit<8> v, in bit<16> factor) {
    return (bit<16>)v * factor;
}

parser WorkParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b8: parse_work;
            default: accept;
        }
    }
    state parse_work {
        pkt.extract(hdr.work);
        transition accept;
    }
}

control WorkVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control WorkIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action sum_to_count() {
        hdr.work.acc = 0;
        for (bit<8> i = 1; i <= 10; i = i + 1) {
            if (i > hdr.work.count) {
                break;
            }
            if (i == 3) {
                continue;
            }
            hdr.work.acc = hdr.work.acc + (bit<16>)i;
        }
    }
    action classify() {
        switch (hdr.work.count) {
            0: { hdr.work.kind = 1; }
            1:
            2: { hdr.work.kind = 2; }
            default: { hdr.work.kind = 3; }
        }
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (!hdr.work.isValid()) {
            return;
        }
        switch (hdr.work.op) {
            1: { sum_to_count(); }
            2: { hdr.work.acc = scaled(hdr.work.count, 1000); }
            3:
            4: { classify(); }
            default: { standard_metadata.egress_spec = 2; }
        }
    }
}

control WorkEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control WorkComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control WorkDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.work);
    }
}

V1Switch(WorkParser(), WorkVerifyChecksum(), WorkIngress(), WorkEgress(),
         WorkComputeChecksum(), WorkDeparser()) main;
