// `_` (don't-care) arguments as p4c lowers them (issue 13): each becomes a fresh local
// that is written and never read. `extract<H>(_)` skips a header's bytes (the local is
// an unused header instance), `_` discards the out argument of extern methods and
// functions (`register.read`, `random`, `hash`) and of a sub-parser's and a
// sub-control's apply.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header skip_t { bit<16> x; }
header tag_t { bit<8> t; }
struct hs { h_t h; tag_t tag; }
struct ms { }
parser Tag(packet_in pkt, out tag_t tag, out bit<8> seen) {
    state start { pkt.extract(tag); seen = tag.t; transition accept; }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Tag() tag_parser;
    state start {
        pkt.extract<skip_t>(_);
        pkt.extract(hdr.h);
        tag_parser.apply(pkt, hdr.tag, _);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control Bump(inout h_t h, out bit<8> old) { apply { old = h.b; h.b = h.b + 1; } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    Bump() bump;
    apply {
        r.write(0, 0xAA);
        r.read(_, 0);
        random(_, 8w0, 8w7);
        hash<bit<16>, bit<16>, tuple<bit<8>>, bit<16>>(_, HashAlgorithm.crc16, 16w0, { hdr.h.a }, 16w1024);
        bump.apply(hdr.h, _);
        sm.egress_spec = (bit<9>)hdr.h.a;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.tag); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
