// standard_metadata.packet_length in ingress is the received length; in egress
// it follows the headers ingress made valid or invalid (BMv2's add_header and
// remove_header adjust the length register). truncate() cuts only the output.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header info_t {
    bit<8>  op;
    bit<8>  has_tag;
    bit<16> ingress_length;
    bit<16> egress_length;
}

header tag_t {
    bit<32> value;
}

struct headers_t {
    ethernet_t ethernet;
    info_t     info;
    tag_t      tag;
}

struct metadata_t { }

parser LenParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.info);
        transition select(hdr.info.has_tag) {
            1: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control LenVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LenIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        hdr.info.ingress_length = (bit<16>)standard_metadata.packet_length;
        standard_metadata.egress_spec = 1;
        if (hdr.info.op == 1 && !hdr.tag.isValid()) {
            hdr.tag.setValid();
            hdr.tag.value = 0xcafe0001;
            hdr.info.has_tag = 1;
        } else if (hdr.info.op == 2 && hdr.tag.isValid()) {
            hdr.tag.setInvalid();
            hdr.info.has_tag = 0;
        }
    }
}

control LenEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.info.egress_length = (bit<16>)standard_metadata.packet_length;
        if (hdr.info.op == 3) {
            truncate(16);
        }
    }
}

control LenComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LenDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.info);
        pkt.emit(hdr.tag);
    }
}

V1Switch(LenParser(), LenVerifyChecksum(), LenIngress(), LenEgress(),
         LenComputeChecksum(), LenDeparser()) main;
