// Copy-in/copy-out as spec 6.8 defines it for inlined actions (issue 13): an argument
// passed to two out/inout parameters (copy-out left to right: the last one wins), an
// inout argument the body also reads directly, out/inout parameters bound to different
// l-values at different call sites, `_` for a discarded out argument, and a function
// with an early return used as an argument and, cast, as a value.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct hs { h_t h; }
struct ms { }
bit<8> twice(in bit<8> v) { if (v > 100) { return 0xFF; } return v + v; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action bump(out bit<8> o, inout bit<8> v) { o = 5; v = v + 1; }
    action setb(inout bit<8> v) { v = 9; hdr.h.c = hdr.h.b; }
    action add(inout bit<8> x, bit<8> k) { x = x + k; }
    apply {
        bump(hdr.h.a, hdr.h.a);
        setb(hdr.h.b);
        add(hdr.h.c, 1);
        add(hdr.h.d, twice(hdr.h.d));
        bump(_, hdr.h.a);
        sm.egress_spec = (bit<9>)twice(hdr.h.b) - 16;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
