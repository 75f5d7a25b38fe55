// Functions returning structs and headers, a function's member (mk(v).y), and function
// calls in a table key and a select key.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct pair_t { bit<8> x; bit<8> y; }
struct hs { h_t h; }
struct ms { pair_t p; }
pair_t mk(in bit<8> v) { pair_t r = {v, v + 1}; if (v == 0) { return {9, 9}; } return r; }
bit<8> inc(in bit<8> v) { bit<8> t = v + 1; return t; }
h_t fresh(in bit<8> v) { h_t h; h.setValid(); h.a = v; h.b = v; return h; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition select(inc(hdr.h.a)) { 2: accept; default: accept; } }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action setb(bit<8> b) { hdr.h.b = b; }
    table t { key = { inc(hdr.h.a) : exact @name("a_plus_one"); } actions = { setb; NoAction; } }
    apply {
        meta.p = mk(hdr.h.a);
        hdr.h.b = mk(hdr.h.b).y;
        t.apply();
        if (hdr.h.a == 7) { hdr.h = fresh(3); }
        sm.egress_spec = (bit<9>)meta.p.y;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
