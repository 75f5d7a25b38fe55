// `&&`, `||` and `?:` whose skipped side calls a function, inside `select` keys and in the
// arguments of a sub-parser call (issue 30, item 2's class): the call runs only when P4
// evaluates it, and each key is evaluated once, left to right; likewise in the initialiser
// of a parser local. `bump` counts its calls in
// `calls`; `pick` says which state the select chose.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> calls; bit<8> pick; bit<8> sub_r; bit<8> init_calls; }
struct hs { h_t h; }
struct ms { }
bool bump(inout bit<8> c) { c = c + 1; return true; }
bit<8> bump8(inout bit<8> c, in bit<8> v) { c = c + 1; return v; }
parser Sub(packet_in pkt, inout hs hdr, in bool flag) {
    state start {
        // Read twice: an argument computed by a call is evaluated once, at the call.
        hdr.h.sub_r = flag ? 8w1 : 8w2;
        hdr.h.sub_r = hdr.h.sub_r + (flag ? 8w0x10 : 8w0x20);
        transition accept;
    }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Sub() sub;
    bit<8> spare = 0;
    bool early = spare == 1 && bump(spare);
    state start {
        pkt.extract(hdr.h);
        hdr.h.init_calls = spare;
        // `calls` is read before the later keys call bump: 0 in every frame.
        transition select(hdr.h.calls, hdr.h.a == 2 && bump(hdr.h.calls), hdr.h.a == 1 || bump(hdr.h.calls)) {
            (0, true, true): both;
            (0, false, true): second;
            default: neither;
        }
    }
    state both { hdr.h.pick = 1; transition choose; }
    state second { hdr.h.pick = 2; transition choose; }
    state neither { hdr.h.pick = 3; transition choose; }
    state choose {
        // `?:` in a key: only the chosen branch's call runs.
        transition select(hdr.h.a == 3 ? bump8(hdr.h.calls, 8w7) : 8w9) {
            7: seven;
            default: last;
        }
    }
    state seven { hdr.h.pick = hdr.h.pick + 0x10; transition last; }
    state last {
        sub.apply(pkt, hdr, hdr.h.a == 4 && bump(hdr.h.calls));
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
