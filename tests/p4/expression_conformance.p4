// Expressions p4c accepts that bufferlab-p4c once refused (issue 13): negative integer
// literals as bit<W> (two's complement), t.apply().hit/.miss outside an if condition,
// nested slices as r- and l-values, ==/!= on headers and structs, and a shift by a
// bit<16> amount.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct hs { h_t h; h_t g; h_t x; h_t y; }
struct pair_t { bit<8> x; bit<8> y; }
struct ms { pair_t p; pair_t q; bit<16> w; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.g); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    table t { key = { hdr.h.a : exact; } actions = { NoAction; } }
    table u { key = { hdr.g.a : exact; } actions = { NoAction; } }
    apply {
        sm.egress_spec = 1;
        bool same = hdr.h == hdr.g;
        bool none = hdr.x == hdr.y && !(hdr.x == hdr.h);
        meta.p = {hdr.h.a, hdr.h.b};
        meta.q = {hdr.g.a, hdr.g.b};
        bool pdiff = meta.p != meta.q;
        meta.w = hdr.g.c ++ hdr.g.d;
        bit<8> m = -1;
        bool hit = t.apply().hit;
        hdr.h.a = hit ? m : -2;
        hdr.h.b = hdr.h.b << meta.w;
        hdr.h.c[7:4][1:0] = 2w1;
        hdr.h.d = hdr.h.d[7:4][1:0] ++ hdr.h.d[7:0][7:6] ++ 4w0;
        hdr.g.d = u.apply().miss ? 8w0x11 : 8w0x22;
        hdr.g.a = same ? 8w1 : 8w0;
        hdr.g.b = pdiff ? 8w1 : 8w0;
        hdr.g.c = none && 8w255 == -1 ? 8w7 : 8w0;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.g); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
