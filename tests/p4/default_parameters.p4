// Default parameter values (issue 30, item 1): `in bit<8> y = 5` on a function, an action,
// a control and a sub-parser, with calls that omit the argument (positionally and by name) and calls
// that give it. The omitted argument is the default value, as p4c binds it.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; }
struct hs { h_t h; }
struct ms { }
bit<8> add(in bit<8> x, in bit<8> y = 5) { return x + y; }
parser Sub(packet_in pkt, inout h_t h, in bit<8> mark = 0x40) {
    state start { h.e = h.e | mark; transition accept; }
}
control Stamp(inout bit<8> v, in bit<8> k = 3) { apply { v = v * k; } }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.h);
        sub.apply(pkt, hdr.h);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Stamp() stamp;
    action bump(in bit<8> k = 7) { hdr.h.g = hdr.h.g + k; }
    apply {
        sm.egress_spec = 1;
        hdr.h.a = add(hdr.h.a);
        hdr.h.b = add(hdr.h.b, 1);
        hdr.h.c = add(x = hdr.h.c);
        stamp.apply(hdr.h.d);
        stamp.apply(hdr.h.f, 2);
        bump();
        bump(1);
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
