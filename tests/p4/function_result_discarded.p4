// A function with a result called as a statement, for its effects only (issue 13; p4c's
// gauntlet_side_effect_order_4-bmv2): the out/inout effects happen, the result is
// dropped. Called from a parser state (straight-line: parser states take no
// control flow), an action and an apply block.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct hs { h_t h; }
struct ms { }
bit<8> clamp(inout bit<8> v, in bit<8> limit) {
    if (v > limit) { v = limit; return 1; }
    return 0;
}
bit<8> bump(inout bit<8> v) { v = v + 1; return v; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); bump(hdr.h.a); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action limit_b() { clamp(hdr.h.b, 8w20); }
    apply {
        limit_b();
        clamp(hdr.h.c, 8w30);
        clamp(hdr.h.a, 8w10);
        sm.egress_spec = (bit<9>)hdr.h.a;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
