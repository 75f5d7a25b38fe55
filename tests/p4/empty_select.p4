// `select()` with no expressions (issue 30, item 1): valid P4 whose cases can only be
// `default` or `_`; the state goes to the first case's state, a transition without a key.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hs { h_t first; h_t second; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        transition select() { default: take_first; }
    }
    state take_first {
        pkt.extract(hdr.first);
        transition select() { _: take_second; default: accept; }
    }
    state take_second { pkt.extract(hdr.second); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.second.isValid()) { hdr.second.a = hdr.second.a + 1; }
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
