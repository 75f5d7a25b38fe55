// Table keys on slices (issue 13, p4c's match-on-exprs-bmv2): the key is the slice's
// value, its bits shifted down, for const entries, entries the control plane adds and
// P4Info's bitwidth alike; a key `f & mask` is computed into a temporary first.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> f; bit<8> g; bit<8> res; }
struct hs { h_t h; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action mark(bit<8> v) { hdr.h.res = v; }
    table by_nibble {
        key = { hdr.h.f[11:8] : exact @name("nibble"); hdr.h.g & 0xf0 : exact @name("g_high"); }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    table fixed {
        key = { hdr.h.f[11:8] : exact @name("nibble"); }
        actions = { mark; NoAction; }
        const entries = { 0xa : mark(0xa3); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (!by_nibble.apply().hit) {
            fixed.apply();
        }
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
