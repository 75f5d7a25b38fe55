// Whole-header assignments to and from run-time-indexed stack elements (issue 13): a list
// expression (the element becomes valid with those fields), another header, the invalid
// header `{#}`, and a copy out of an element, each with an index read from the packet.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> v; }
header x_t { bit<8> i; bit<8> j; bit<8> k; bit<8> m; }
struct hs { x_t x; h_t[3] s; h_t extra; h_t copy; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.x);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.extra);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.s[hdr.x.i] = { 0x42 };
        hdr.copy = hdr.s[hdr.x.k];
        hdr.s[hdr.x.j] = hdr.extra;
        hdr.s[hdr.x.m] = (h_t){#};
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
