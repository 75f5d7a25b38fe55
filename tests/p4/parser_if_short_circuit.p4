// `&&`, `||` and `?:` in the condition of an `if` inside a parser state, whose skipped side
// calls a function: the call runs only when P4 evaluates it (the state splits on the
// deciding operand before it splits on the condition). Found by the differential check
// (fuzz/python/differential.py: `x = c ? 1 : 0` in parser_short_circuit.p4 written as an
// `if`); the `if` condition called `bump` whatever `a` held. `bump` counts its calls.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> calls; bit<8> and_r; bit<8> or_r; bit<8> sel_r; }
struct hs { h_t h; }
struct ms { }
bool bump(inout bit<8> c) { c = c + 1; return true; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        if (hdr.h.a == 2 && bump(hdr.h.calls)) {
            hdr.h.and_r = 1;
        } else {
            hdr.h.and_r = 2;
        }
        if (hdr.h.a == 1 || bump(hdr.h.calls)) {
            hdr.h.or_r = 1;
        }
        if (hdr.h.a == 3 ? bump(hdr.h.calls) : hdr.h.a == 4) {
            hdr.h.sel_r = 1;
        } else {
            hdr.h.sel_r = 2;
        }
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
