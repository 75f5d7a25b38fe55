// Evaluation order (P4_16 §8.1, issue 13): an assignment's l-value, a run-time stack index
// included, is evaluated before its right side, whose call may change that index; a
// `t.apply().hit` right of `&&`/`||` or in a branch of `?:` applies `t` only when the
// program evaluates it (p4c turns the expression into branches that set a temporary);
// a binary operator's left operand is read before a call in its right operand runs.
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> a; }
header x_t { bit<8> id; bit<8> sel; bit<8> or_result; bit<8> and_result; bit<8> nested; bit<8> applied;
             bit<8> seed; bit<8> sum; }
struct hs { e_t[2] e; x_t x; }
struct ms { }

bit<8> bump(inout bit<8> v) {
    v = v + 0x10;
    return 1;
}

bit<8> take(inout bit<8> id) {
    id = 0;
    return 0x77;
}

parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.e.next); pkt.extract(hdr.e.next); pkt.extract(hdr.x); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    // Each table leaves a bit in `applied` when it runs, hit or miss.
    action mark(bit<8> bit_) { hdr.x.applied = hdr.x.applied | bit_; }
    table t_or { key = { hdr.x.sel : exact; } actions = { mark; } default_action = mark(1); }
    table t_and { key = { hdr.x.sel : exact; } actions = { mark; } default_action = mark(2); }
    table t_then { key = { hdr.x.sel : exact; } actions = { mark; } default_action = mark(4); }
    apply {
        sm.egress_spec = 1;
        hdr.e[hdr.x.id].a = take(hdr.x.id);
        // The left operand is read before the call on the right changes it.
        hdr.x.sum = hdr.x.seed + bump(hdr.x.seed);
        hdr.x.or_result = (hdr.x.sel == 1 || t_or.apply().hit) ? 8w0x0f : 8w0xf0;
        if (hdr.x.sel != 1 && t_and.apply().miss) {
            hdr.x.and_result = 0xaa;
        }
        hdr.x.nested = hdr.x.sel == 2 ? (t_then.apply().hit ? 8w0x21 : 8w0x20) : 8w0x30;
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
