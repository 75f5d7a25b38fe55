// List and struct expressions passed to a function's `in` parameter of struct or header
// type, whose body reads their members (issue 13, p4c's gauntlet_hdr_in_value).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> r1; bit<8> r2; bit<8> r3; }
header pair_t { bit<8> lo; bit<8> hi; }
struct wrap_t { pair_t p; bit<8> extra; }
struct hs { h_t h; }
struct ms { }

bit<8> low_plus_one(pair_t v) { return v.lo + 1; }
bit<8> weigh(wrap_t w) { return w.p.hi - w.p.lo + w.extra; }

parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.r1 = low_plus_one({ hdr.h.a, 8w0 });
        hdr.h.r2 = weigh({ { hdr.h.a, hdr.h.b }, 8w3 });
        hdr.h.r3 = weigh({ p = { lo = 8w1, hi = hdr.h.b }, extra = hdr.h.a });
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
