// Copy-in semantics of inlined calls: `in` arguments keep their value at the call even
// when the callee overwrites the storage they came from.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header rewrite_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}

struct headers_t {
    ethernet_t ethernet;
    rewrite_t  rewrite;
}
struct metadata_t { }

parser CopyInParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.rewrite);
        transition accept;
    }
}

control Rewrite(inout headers_t hdr, in bit<8> original) {
    apply {
        hdr.rewrite.a = 9;
        hdr.rewrite.b = original;
    }
}

control CopyInVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CopyInIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    Rewrite() rewrite;

    action accumulate(in bit<8> v) {
        hdr.rewrite.c = 0;
        hdr.rewrite.b = hdr.rewrite.b + v;
    }
    action run() {
        accumulate(hdr.rewrite.c);
    }
    apply {
        rewrite.apply(hdr, hdr.rewrite.a);
        run();
        standard_metadata.egress_spec = 1;
    }
}

control CopyInEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) { apply { } }

control CopyInComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CopyInDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.rewrite);
    }
}

V1Switch(CopyInParser(), CopyInVerifyChecksum(), CopyInIngress(), CopyInEgress(),
         CopyInComputeChecksum(), CopyInDeparser()) main;
