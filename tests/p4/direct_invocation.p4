// Direct invocation (P4_16 spec 15.1, issue 13, p4c's issue1566-bmv2): `T.apply(...)` on a
// parser or control type without constructor parameters applies an instance of T named
// T in the caller, so a counter `hits` in a control Count applied from ingress I is
// I.Count.hits, as p4c names it.
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> kind; }
header b_t { bit<8> v; }
struct hs { a_t a; b_t b; }
struct ms { }
parser TakeB(packet_in pkt, out b_t b) {
    state start { pkt.extract(b); transition accept; }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.kind) { 1: with_b; default: accept; }
    }
    state with_b {
        TakeB.apply(pkt, hdr.b);
        transition accept;
    }
}
control Count(inout bit<8> v) {
    counter(4, CounterType.packets) hits;
    apply {
        v = v + 1;
        hits.count((bit<32>)v);
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.b.isValid()) {
            Count.apply(hdr.b.v);
        }
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
