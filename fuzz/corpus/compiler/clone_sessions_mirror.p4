// Mirroring: ingress-to-egress and egress-to-egress clones, preserving a metadata field list.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<32> I2E_SESSION = 5;
const bit<32> E2E_SESSION = 6;
const bit<8>  MIRROR_FIELDS = 1;

const bit<32> PKT_INSTANCE_TYPE_NORMAL = 0;
const bit<32> PKT_INSTANCE_TYPE_INGRESS_CLONE = 1;
const bit<32> PKT_INSTANCE_TYPE_EGRESS_CLONE = 2;

header mirror_tag_t {
    bit<8>  reason;
    bit<16> original_port;
}

struct headers_t {
    ethernet_t   ethernet;
    mirror_tag_t tag;
}
struct metadata_t {
    @field_list(1)
    bit<8> reason;
    @field_list(1)
    bit<9> original_port;
    bit<8> scratch;
}

parser MirParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control MirVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MirIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action mirror_plain() {
        clone(CloneType.I2E, I2E_SESSION);
    }
    action mirror_tagged(bit<8> reason) {
        meta.reason = reason;
        meta.original_port = standard_metadata.ingress_port;
        clone_preserving_field_list(CloneType.I2E, I2E_SESSION, MIRROR_FIELDS);
    }
    table mirror_select {
        key = { hdr.ethernet.srcAddr : ternary; }
        actions = { mirror_plain; mirror_tagged; NoAction; }
    }
    apply {
        standard_metadata.egress_spec = 1;
        mirror_select.apply();
    }
}

control MirEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == PKT_INSTANCE_TYPE_INGRESS_CLONE) {
            hdr.tag.setValid();
            hdr.tag.reason = meta.reason;
            hdr.tag.original_port = (bit<16>)meta.original_port;
        } else if (standard_metadata.instance_type == PKT_INSTANCE_TYPE_NORMAL
                   && standard_metadata.egress_port == 3) {
            clone(CloneType.E2E, E2E_SESSION);
        }
    }
}

control MirComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MirDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tag);
    }
}

V1Switch(MirParser(), MirVerifyChecksum(), MirIngress(), MirEgress(),
         MirComputeChecksum(), MirDeparser()) main;
