// P4_16 1.2.2 constructs: struct-typed header fields, `(T){#}`, V1Switch with named
// arguments in any order, @field_list(named constant), the argument-less mark_to_drop()
// of older v1model programs and entry annotations before the key.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<8> KEEP_LIST = 1;

struct tag_t {
    bit<4> cls;
    bit<4> color;
}

header tagged_t {
    bit<8>  kind;
    tag_t   tag;
    bit<16> seq;
}

struct headers_t {
    ethernet_t ethernet;
    tagged_t   tagged;
}

struct metadata_t {
    @field_list(KEEP_LIST) bit<8> resubmits;
}

parser TagParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88ba: parse_tagged;
            default: accept;
        }
    }
    state parse_tagged {
        pkt.extract(hdr.tagged);
        transition accept;
    }
}

control TagVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control TagIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action drop_old() {
        mark_to_drop();
    }
    action recolor(bit<4> color) {
        hdr.tagged.tag.color = color;
        standard_metadata.egress_spec = 2;
    }
    table by_kind {
        key = { hdr.tagged.kind : ternary; }
        actions = { recolor; drop_old; }
        default_action = drop_old();
        const entries = {
            @priority(1) 0x01 &&& 0xff : recolor(5);
            @priority(1) 0x02 &&& 0xff : recolor(7);
            @priority(2) 0x00 &&& 0x00 : drop_old();
        }
    }
    apply {
        if (!hdr.tagged.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        if (hdr.tagged.tag.cls == 0xf) {
            hdr.tagged = (tagged_t){#};
            standard_metadata.egress_spec = 3;
            return;
        }
        if (hdr.tagged.kind == 2 && meta.resubmits == 0) {
            meta.resubmits = 1;
            resubmit_preserving_field_list(KEEP_LIST);
            return;
        }
        by_kind.apply();
        hdr.tagged.seq = hdr.tagged.seq + (bit<16>)hdr.tagged.tag.cls;
        if (meta.resubmits == 1) {
            hdr.tagged.seq = 0xbeef;
        }
    }
}

control TagEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control TagComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control TagDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tagged);
    }
}

V1Switch(ig = TagIngress(), p = TagParser(), dep = TagDeparser(), vr = TagVerifyChecksum(),
         eg = TagEgress(), ck = TagComputeChecksum()) main;
