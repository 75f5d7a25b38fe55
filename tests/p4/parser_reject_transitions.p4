// Explicit `transition reject`, a select case to reject and a state without a transition:
// p4c-bm2-ss (and we) emit a null next state, so BMv2 ends parsing without an error.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header probe_t {
    bit<8> kind;
    bit<8> seen;
}

struct headers_t {
    ethernet_t ethernet;
    probe_t    probe;
}
struct metadata_t { }

parser RejParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88bc: parse_probe;
            0x0bad: reject;
            default: accept;
        }
    }
    state parse_probe {
        pkt.extract(hdr.probe);
        transition select(hdr.probe.kind) {
            1: accept;
            2: give_up;
            default: no_transition;
        }
    }
    state give_up {
        transition reject;
    }
    state no_transition {
    }
}

control RejVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RejIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.probe.isValid()) {
            hdr.probe.seen = 1;
        }
        if (standard_metadata.parser_error != error.NoError) {
            standard_metadata.egress_spec = 2;
        }
    }
}

control RejEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control RejComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RejDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.probe);
    }
}

V1Switch(RejParser(), RejVerifyChecksum(), RejIngress(), RejEgress(),
         RejComputeChecksum(), RejDeparser()) main;
