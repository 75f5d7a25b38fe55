// A function whose body is one `return` reads its parameter twice; an argument that calls
// something is still evaluated once (issue 30, item 2's class), in a control, in a parser
// state's statement and in a select key. `bump8` counts its calls in `calls`.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> calls; bit<8> r; bit<8> p; bit<8> k; }
struct hs { h_t h; }
struct ms { }
bit<8> bump8(inout bit<8> c, in bit<8> v) { c = c + 1; return v; }
bit<8> dbl(in bit<8> x) { return x + x; }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; hdr.h.r = dbl(bump8(hdr.h.calls, 3)); }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        hdr.h.p = dbl(bump8(hdr.h.calls, 5));
        transition select(dbl(bump8(hdr.h.calls, hdr.h.k))) {
            8: four;
            default: accept;
        }
    }
    state four { hdr.h.k = 0x44; transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
