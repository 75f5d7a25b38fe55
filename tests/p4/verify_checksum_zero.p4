// verify_checksum against the constant 0 (issue 13, p4c's issue655-bmv2): the data's
// checksum must come out 0 (ones'-complement sums of all ones), else checksum_error is set.
// BMv2 compares with a field, so the 0 is a scalar no one writes.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> d; bit<16> c; }
struct hs { h_t h; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) {
    apply { verify_checksum(true, { hdr.h.d, hdr.h.c }, 16w0, HashAlgorithm.csum16); }
}
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = sm.checksum_error == 1 ? 9w2 : 9w1; }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
