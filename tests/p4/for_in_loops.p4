// for-in loops over a constant range (in an action, with break) and over a constant
// list (in an apply block, with an existing variable): unrolled, one pass per value.
#include <core.p4>
#include <v1model.p4>

header sum_t {
    bit<8>  stop_at;
    bit<16> total;
}

struct headers_t { sum_t sum; }
struct metadata_t { }

parser ForInParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.sum);
        transition accept;
    }
}

control ForInVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ForInIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    action add_up_to_stop() {
        for (bit<8> i in 1 .. 5) {
            if (i == hdr.sum.stop_at) {
                break;
            }
            hdr.sum.total = hdr.sum.total + (bit<16>)i;
        }
    }
    apply {
        add_up_to_stop();
        bit<8> k;
        for (k in {2, 4, 8}) {
            if (k == 4) {
                continue;
            }
            hdr.sum.total = hdr.sum.total + ((bit<16>)k << 8);
        }
        standard_metadata.egress_spec = 1;
    }
}

control ForInEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) { apply { } }

control ForInComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ForInDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.sum);
    }
}

V1Switch(ForInParser(), ForInVerifyChecksum(), ForInIngress(), ForInEgress(),
         ForInComputeChecksum(), ForInDeparser()) main;
