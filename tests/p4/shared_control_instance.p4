// One control instance passed to two others as a constructor argument (p4c's
// issue1566-bmv2 shape): `Count() c; Twice(c) a; Thrice(c) b;`. The instance is inlined
// wherever it is applied, but its externs stay one instance: a register the first
// application bumps is seen bumped by the second, in the same packet and in the next.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> first; bit<8> second; bit<16> x; }
struct hs { h_t h; }
struct ms { }
control Step(inout bit<16> x, out bit<8> seen);
control Count(inout bit<16> x, out bit<8> seen) {
    register<bit<8>>(1) hits;
    counter(4, CounterType.packets) applied;
    apply {
        bit<8> n;
        hits.read(n, 0);
        n = n + 1;
        hits.write(0, n);
        seen = n;
        x = x + 1;
        applied.count(0);
    }
}
control Twice(inout bit<16> x, out bit<8> seen)(Step c) { apply { x = x << 1; c.apply(x, seen); } }
control Thrice(inout bit<16> x, out bit<8> seen)(Step c) { apply { x = x << 3; c.apply(x, seen); } }
control Both(inout hs hdr) {
    Count() c;
    Twice(c) a;
    Thrice(c) b;
    apply {
        a.apply(hdr.h.x, hdr.h.first);
        b.apply(hdr.h.x, hdr.h.second);
    }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Both() both;
    apply { sm.egress_spec = 1; both.apply(hdr); }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
