// Computed values in a hash's data (issue 30, item 1): `{ hdr.h.c ^ 0xFFFF }` and
// `{ hdr.h.a + 1, hdr.h.b & 0x0f, hdr.h.a == 0 }`, and a function's `in` parameter bound to
// a computed argument (`h16(hdr.h.a + 2)` hashing `{ x }`). BMv2 calculations take only fields,
// constants, headers and the payload, so each computed element goes into a temporary
// first. The identity algorithm makes the hash the data itself.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> x; bit<24> y; bit<16> z; }
struct hs { h_t h; }
struct ms { }
bit<16> h16(in bit<8> x) {
    bit<16> o;
    hash(o, HashAlgorithm.identity, 16w0, { x }, 32w65536);
    return o;
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hash(hdr.h.x, HashAlgorithm.identity, 16w0, { hdr.h.c ^ 0xFFFF }, 32w65536);
        hash(hdr.h.y, HashAlgorithm.identity, 24w0,
             { hdr.h.a + 1, hdr.h.b & 0x0f, hdr.h.a == 0, 7w0 }, 32w0x1000000);
        hdr.h.z = h16(hdr.h.a + 2);
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
