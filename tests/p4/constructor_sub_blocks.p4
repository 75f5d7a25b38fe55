// Sub-parsers and sub-controls passed as constructor arguments and applied (issue 13):
// the parser and the ingress control take them as constructor parameters of a parser or
// control type; V1Switch's arguments instantiate them; each is inlined where applied.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header x_t { bit<8> v; }
struct hs { h_t h; x_t x; }
struct ms { }
parser SubP(packet_in pkt, inout hs hdr);
control SubC(inout hs hdr, inout standard_metadata_t sm);
parser TakeX(packet_in pkt, inout hs hdr) {
    state start { pkt.extract(hdr.x); transition accept; }
}
control Swap(inout hs hdr, inout standard_metadata_t sm) {
    apply { bit<8> t = hdr.h.a; hdr.h.a = hdr.h.b; hdr.h.b = t; }
}
control Route(inout hs hdr, inout standard_metadata_t sm)(bit<9> base) {
    apply { sm.egress_spec = base + (bit<9>)hdr.h.a; }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm)(SubP sub) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) { 0: accept; default: more; }
    }
    state more { sub.apply(pkt, hdr); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm)(SubC first, SubC second) {
    apply { first.apply(hdr, sm); second.apply(hdr, sm); }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.x); } }
V1Switch(P(TakeX()), VC(), I(Swap(), Route(9w1)), E(), VC(), D()) main;
