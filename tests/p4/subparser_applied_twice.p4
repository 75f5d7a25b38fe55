// One sub-parser instance applied from two states with different `out` arguments (the
// shape of p4c's issue1879-bmv2): each call site gets its own copy of the sub-parser's
// states, returning to its own continuation; the instance keeps one value set, and its
// local is initialised again at every call.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;
    bit<8> value;
}
header result_t {
    bit<8> count;
    bit<8> specials;
}
struct headers_t {
    tag_t    first;
    tag_t    second;
    result_t result;
}
struct metadata_t {
    bit<8> count;
    bit<8> specials;
}

parser TagParser(packet_in pkt, out tag_t tag, inout metadata_t meta) {
    value_set<bit<8>>(4) special;
    bit<8> weight = 1;

    state start {
        pkt.extract(tag);
        meta.count = meta.count + weight;
        transition select(tag.kind) {
            special: mark;
            default: accept;
        }
    }
    state mark {
        meta.specials = meta.specials + 1;
        weight = 0;
        transition accept;
    }
}

parser TwiceParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    TagParser() tags;

    state start {
        tags.apply(pkt, hdr.first, meta);
        transition select(hdr.first.value) {
            0: accept;
            default: again;
        }
    }
    state again {
        tags.apply(pkt, hdr.second, meta);
        transition accept;
    }
}

control TwiceVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control TwiceIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        hdr.result.setValid();
        hdr.result.count = meta.count;
        hdr.result.specials = meta.specials;
        standard_metadata.egress_spec = hdr.second.isValid() ? 9w2 : 9w1;
    }
}

control TwiceEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) { apply { } }

control TwiceComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control TwiceDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
        pkt.emit(hdr.result);
    }
}

V1Switch(TwiceParser(), TwiceVerifyChecksum(), TwiceIngress(), TwiceEgress(),
         TwiceComputeChecksum(), TwiceDeparser()) main;
