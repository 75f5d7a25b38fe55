// for loops in an apply block and table results inside larger conditions.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header count_t {
    bit<8>  n;
    bit<16> sum;
    bit<8>  verdict;
}

struct headers_t {
    ethernet_t ethernet;
    count_t    count;
}
struct metadata_t { }

parser LoopParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88bb: parse_count;
            default: accept;
        }
    }
    state parse_count {
        pkt.extract(hdr.count);
        transition accept;
    }
}

control LoopVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LoopIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action allow() { }
    table known_src {
        key = { hdr.ethernet.srcAddr : exact; }
        actions = { allow; NoAction; }
        default_action = NoAction();
    }
    table blocked_dst {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { allow; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (!hdr.count.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        hdr.count.sum = 0;
        for (bit<8> i = 1; i <= hdr.count.n; i = i + 1) {
            if (i == 3) {
                continue;
            }
            hdr.count.sum = hdr.count.sum + (bit<16>)i;
        }
        if (known_src.apply().hit && hdr.count.n < 10) {
            standard_metadata.egress_spec = 2;
        } else {
            standard_metadata.egress_spec = 3;
        }
        if (blocked_dst.apply().miss || hdr.count.n == 0) {
            hdr.count.verdict = 1;
        } else {
            hdr.count.verdict = 2;
        }
    }
}

control LoopEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control LoopComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LoopDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.count);
    }
}

V1Switch(LoopParser(), LoopVerifyChecksum(), LoopIngress(), LoopEgress(),
         LoopComputeChecksum(), LoopDeparser()) main;
