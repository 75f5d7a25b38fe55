// lookahead<T>() of a header and of a struct (p4c's ExpandLookahead): a header local
// declared with it in a state and selected on, a headers-struct member assigned from it
// (valid, nothing consumed), and a metadata struct assigned from it. Ingress reports
// what the parser saw in a header `seen` in front of the frame.
#include <core.p4>
#include <v1model.p4>
header tag_h { bit<8> kind; bit<8> value; }
header seen_h { bit<8> value; bit<4> hi; bit<4> lo; }
struct nibbles_t { bit<4> hi; bit<4> lo; }
struct hs { seen_h seen; tag_h peek; tag_h tag; }
struct ms { bit<8> value; nibbles_t first; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        tag_h ahead = pkt.lookahead<tag_h>();
        meta.value = ahead.value;
        meta.first = pkt.lookahead<nibbles_t>();
        transition select(ahead.kind) {
            1: take;
            2: copy;
            default: accept;
        }
    }
    state take {
        pkt.extract(hdr.tag);
        transition accept;
    }
    state copy {
        hdr.peek = pkt.lookahead<tag_h>();
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.seen.setValid();
        hdr.seen.value = meta.value;
        hdr.seen.hi = meta.first.hi;
        hdr.seen.lo = meta.first.lo;
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
