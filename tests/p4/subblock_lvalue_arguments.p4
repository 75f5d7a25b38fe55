// `out`/`inout` arguments of a sub-control, a sub-parser and an action a table's action list
// binds, whose run-time stack index calls a function (issue 30, item 2's class): the l-value is evaluated once, at the call, and the
// callee reads and writes that one element however often it uses the parameter. `next_i`
// counts its calls in `calls` and returns `i`.
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> v; }
header h_t { bit<8> calls; bit<8> i; }
struct hs { h_t h; e_t[4] s; }
struct ms { }
bit<8> next_i(inout h_t h) { h.calls = h.calls + 1; return h.i; }
control Inner(inout e_t e) {
    apply { e.v = e.v + 1; e.v = e.v + 0x10; }
}
control InnerField(inout bit<8> x) {
    apply { x = x + 4; x = x + 0x40; }
}
parser SubP(packet_in pkt, inout e_t e) {
    state start { e.v = e.v + 2; e.v = e.v + 0x20; transition accept; }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    SubP() subp;
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        subp.apply(pkt, hdr.s[next_i(hdr.h)]);
        transition accept;
    }
}
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Inner() inner;
    InnerField() inner_field;
    action add_11(inout bit<8> x) { x = x + 1; x = x + 0x10; }
    table bound {
        actions = { add_11(hdr.s[next_i(hdr.h)].v); }
        default_action = add_11(hdr.s[next_i(hdr.h)].v);
    }
    apply {
        sm.egress_spec = 1;
        inner.apply(hdr.s[next_i(hdr.h)]);
        // A different element: `i` moves on before the call.
        hdr.h.i = hdr.h.i + 1;
        inner_field.apply(hdr.s[next_i(hdr.h)].v);
        hdr.h.i = hdr.h.i + 1;
        bound.apply();
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
