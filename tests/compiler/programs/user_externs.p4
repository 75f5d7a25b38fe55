// User-declared extern object and extern function: p4c-bm2-ss compiles them only with
// --emit-externs (an `extern_instances` entry, `_Type_method` and `function` primitives),
// and simple_switch refuses the JSON ("Invalid reference to extern type"), as the bufferlab
// switch does. Not in tests/p4: no switch runs it.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct hs { h_t h; }
struct ms { bit<8> m; }
extern Tally {
    Tally(bit<16> size, string label);
    void add(in bit<8> v, in bit<16> w);
    void fill(out bit<8> dst);
}
extern void trace_value(in bit<16> v);
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Tally(16w1024, "ingress tally") tally;
    apply {
        tally.add(hdr.h.a, hdr.h.b + 1);
        tally.fill(meta.m);
        trace_value(hdr.h.b);
        sm.egress_spec = 1;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
