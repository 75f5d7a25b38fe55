// Declared types where p4c takes them (issue 13): typedef'd and `type`-declared header
// fields, run-time stack indices of typedef'd and signed types, a serializable enum as a
// ternary table key with masks (the mask on the enum's bit<16>) in const entries, and
// a parser value set over a struct.
#include <core.p4>
#include <v1model.p4>
typedef bit<8> byte_t;
type bit<8> tag_t;
typedef bit<2> slot_t;
enum bit<16> Kind { A = 0x0A00, B = 0x0B00 }
header h_t { byte_t idx; tag_t tag; Kind kind; int<8> sidx; }
header e_t { bit<8> v; }
struct pair_t { bit<8> first; bit<8> second; }
struct hs { h_t h; e_t[4] e; }
struct ms { slot_t slot; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    value_set<pair_t>(4) pvs;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.idx, (bit<8>)hdr.h.tag) {
            pvs: accept;
            (0xFF, 0xFF): accept;
            default: stack;
        }
    }
    state stack { pkt.extract(hdr.e.next); pkt.extract(hdr.e.next); pkt.extract(hdr.e.next);
                  pkt.extract(hdr.e.next); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action port(bit<9> p) { sm.egress_spec = p; }
    table by_kind {
        key = { hdr.h.kind : ternary; }
        actions = { port; NoAction; }
        const entries = {
            ((bit<16>)Kind.A) &&& 0xFF00 : port(1);
            Kind.B &&& 0xFFFF : port(2);
            _ : port(3);
        }
    }
    apply {
        by_kind.apply();
        if (hdr.e[0].isValid()) {
            meta.slot = (slot_t)hdr.h.idx;
            hdr.e[meta.slot].v = (bit<8>)hdr.h.tag;
            hdr.e[hdr.h.sidx].v = hdr.e[hdr.h.sidx].v + 1;
        }
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.e); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
