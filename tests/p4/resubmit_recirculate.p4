// Resubmit and recirculate preserving user metadata field lists; instance_type checks.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<8> RESUBMIT_FIELDS = 1;
const bit<8> RECIRC_FIELDS = 2;

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t {
    @field_list(1, 2)
    bit<8> passes;
    @field_list(2)
    bit<16> tag;
}

parser RrParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control RrVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RrIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 0 && hdr.ethernet.etherType == 0x9001) {
            meta.passes = 1;
            resubmit_preserving_field_list(RESUBMIT_FIELDS);
        } else if (standard_metadata.instance_type == 6) {
            meta.passes = meta.passes + 1;
            standard_metadata.egress_spec = 2;
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control RrEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.ethernet.etherType == 0x9002 && meta.passes < 3) {
            meta.passes = meta.passes + 1;
            meta.tag = 0xbeef;
            recirculate_preserving_field_list(RECIRC_FIELDS);
        }
        hdr.ethernet.srcAddr[7:0] = meta.passes;
    }
}

control RrComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RrDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(RrParser(), RrVerifyChecksum(), RrIngress(), RrEgress(),
         RrComputeChecksum(), RrDeparser()) main;
