// `&&`, `||` and `?:` whose skipped side calls a function, in parser states (issue 30,
// item 2): the call runs only when P4 evaluates it. BMv2 states have no jumps, so the state
// ends with a select on what decides, the evaluated side is a state of its own and the
// rest of the statement goes on in a join state, as for `if`. `bump` counts its calls.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> calls; bit<8> or_r; bit<8> and_r; bit<8> sel_r; bit<8> nest_r; }
struct hs { h_t h; }
struct ms { }
bool bump(inout bit<8> c) { c = c + 1; return true; }
bit<8> bump8(inout bit<8> c, in bit<8> v) { c = c + 1; return v; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        bool o = hdr.h.a == 1 || bump(hdr.h.calls);
        hdr.h.or_r = o ? 8w1 : 8w0;
        hdr.h.and_r = (hdr.h.a == 2 && bump(hdr.h.calls)) ? 8w1 : 8w0;
        hdr.h.sel_r = hdr.h.a == 3 ? bump8(hdr.h.calls, 0x33) : 8w0x44;
        if (hdr.h.a != 0) {
            hdr.h.nest_r = (hdr.h.a == 1 || (hdr.h.a == 4 && bump(hdr.h.calls))) ? 8w1 : 8w0;
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
