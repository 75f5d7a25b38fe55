// `t1.apply().hit` as a key of another table (issue 30, item 1): t1 is applied where t2
// is, just before t2's key is computed, as p4c-bm2-ss lifts it; each table's action leaves
// a mark, so the frame shows which ran and which entry of t2 the hit chose.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> t1_mark; bit<8> t2_mark; }
struct hs { h_t h; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action mark1(bit<8> v) { hdr.h.t1_mark = v; }
    action mark2(bit<8> v) { hdr.h.t2_mark = v; }
    table t1 { key = { hdr.h.a : exact; } actions = { mark1; NoAction; } default_action = NoAction(); }
    table t2 { key = { t1.apply().hit : exact @name("t1_hit"); } actions = { mark2; NoAction; }
               default_action = NoAction(); }
    apply {
        sm.egress_spec = 1;
        t2.apply();
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
