// Parser, control and function `in` parameters bound to computed arguments, and locals, used
// where the BMv2 back end needs storage (issue 30: "has no storage in the BMv2 back end"): a
// sub-parser parameter as a select key and a set source, a sub-control parameter as a table
// key and a register index/value, a function parameter copied into a local.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct hs { h_t h; }
struct ms { bit<8> m; }
parser Sub(packet_in pkt, inout hs hdr, in bit<8> k) {
    state start {
        transition select(k) { 3: three; default: accept; }
    }
    state three { hdr.h.c = k; transition accept; }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Sub() sub;
    state start { pkt.extract(hdr.h); sub.apply(pkt, hdr, hdr.h.a + 2); transition accept; }
}
control Inner(inout hs hdr, in bit<8> v) {
    action set(bit<8> x) { hdr.h.d = x; }
    table t { key = { v : exact; } actions = { set; NoAction; } const entries = { 5 : set(0x55); } default_action = NoAction(); }
    register<bit<8>>(4) r;
    apply { t.apply(); r.write(0, v); bit<8> w; r.read(w, 0); hdr.h.b = w + v; }
}
bit<8> f(in bit<8> x) { bit<8> y = x; return y + x; }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Inner() inner;
    apply { sm.egress_spec = 1; inner.apply(hdr, hdr.h.a + 4); hdr.h.a = f(hdr.h.a); }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
