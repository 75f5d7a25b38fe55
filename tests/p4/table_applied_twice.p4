// One table applied from two places of a control (issue 13). p4c-bm2-ss accepts this
// when every application continues to the same successors (BMv2 has one node per
// table): `tag` ends both branches of one `if` (after a different table on each) and
// `fwd` both branches of the next, so each application has the same successors.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<8> dst; bit<8> mark; }
struct hs { h_t h; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action to_port(bit<9> port) { sm.egress_spec = port; }
    action set_mark(bit<8> m) { hdr.h.mark = m; }
    action bump() { hdr.h.mark = hdr.h.mark + 1; }
    table fwd {
        key = { hdr.h.dst : exact; }
        actions = { to_port; NoAction; }
        const entries = { 1 : to_port(1); 2 : to_port(2); }
        default_action = NoAction();
    }
    table first { key = { hdr.h.kind : exact; } actions = { bump; NoAction; } default_action = bump(); }
    table second { actions = { set_mark; } default_action = set_mark(0x50); }
    table tag { key = { hdr.h.mark : exact; } actions = { set_mark; NoAction; }
                const entries = { 0x51 : set_mark(0xA1); 0x50 : set_mark(0xA0); }
                default_action = NoAction(); }
    apply {
        if (hdr.h.kind == 0) {
            first.apply();
            tag.apply();
        } else {
            second.apply();
            tag.apply();
        }
        if (hdr.h.mark == 0xA0) {
            fwd.apply();
        } else {
            sm.egress_spec = 4;
            fwd.apply();
        }
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
