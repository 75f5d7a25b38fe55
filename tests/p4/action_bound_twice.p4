// One action bound to different `out` arguments in the action lists of two tables
// (issue 13, p4c's ternary2-bmv2): each binding is its own BMv2 action under the one
// name (p4c copies an action for each use), and P4Info lists the action once.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> key; bit<8> a; bit<8> b; }
struct hs { h_t h; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action set_byte(out bit<8> dst, bit<8> value) { dst = value; }
    table to_a {
        key = { hdr.h.key : exact; }
        actions = { set_byte(hdr.h.a); NoAction; }
        default_action = set_byte(hdr.h.a, 0x11);
    }
    table to_b {
        key = { hdr.h.key : exact; }
        actions = { set_byte(hdr.h.b); NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        to_a.apply();
        // A switch label names the action whatever it is bound to.
        switch (to_b.apply().action_run) {
            set_byte: { hdr.h.key = 0xee; }
        }
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
