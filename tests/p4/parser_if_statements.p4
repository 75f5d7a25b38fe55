// if/else inside parser states: the state is split at the if, as p4c does for BMv2.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header opt_t {
    bit<8> flags;
    bit<8> value;
    bit<8> mark;
}

struct headers_t {
    ethernet_t ethernet;
    opt_t      opt;
}
struct metadata_t {
    bit<8> path;
}

parser IfParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        meta.path = 0;
        if (hdr.ethernet.etherType == 0x88bd) {
            pkt.extract(hdr.opt);
            if (hdr.opt.flags[0:0] == 1) {
                meta.path = 1;
            } else {
                meta.path = 2;
            }
            meta.path = meta.path + 10;
        }
        transition select(meta.path) {
            11: accept;
            default: finish;
        }
    }
    state finish {
        if (hdr.opt.isValid()) {
            hdr.opt.mark = 0xee;
        }
        transition accept;
    }
}

control IfVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control IfIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = (bit<9>)meta.path;
    }
}

control IfEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control IfComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control IfDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.opt);
    }
}

V1Switch(IfParser(), IfVerifyChecksum(), IfIngress(), IfEgress(),
         IfComputeChecksum(), IfDeparser()) main;
