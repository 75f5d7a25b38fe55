// Compile-time struct and tuple values used as operands (issue 30, item 1): a member of a
// constant struct (`PAIR.p`), an element of a constant tuple (`T[1]`), a constant struct
// assigned whole and compared, and one passed to a function.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct pair_t { bit<8> p; bit<8> q; }
struct hs { h_t h; }
struct ms { pair_t pair; }
const pair_t PAIR = { p = 3, q = 4 };
const tuple<bit<8>, bit<8>> T = { 0x10, 0x20 };
bit<8> sum(in pair_t x) { return x.p + x.q; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.a = hdr.h.a + PAIR.p;
        hdr.h.b = T[1];
        meta.pair = PAIR;
        hdr.h.c = meta.pair.q;
        hdr.h.d = meta.pair == PAIR ? 8w1 : 8w0;
        meta.pair.p = hdr.h.e;
        hdr.h.e = meta.pair == PAIR ? 8w1 : 8w0;
        hdr.h.f = sum(PAIR) + T[0];
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
