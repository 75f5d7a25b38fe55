// Slices as `out`/`inout` arguments (issue 13, p4c's issue2498-bmv2): the parameter is a
// local, copied in from the slice and written back into it when the call ends (spec 6.8),
// after whatever the body wrote to the whole field.
#include <core.p4>
#include <v1model.p4>
header x_t { bit<8> a; bit<8> b; }
struct hs { x_t x; }
struct ms { }

void high_nibble(out bit<4> n, in bit<4> v) { n = v; }

parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.x); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action set_low_bit(inout bit<1> low) {
        hdr.x.a = 2;
        low = low + 1;
    }
    apply {
        sm.egress_spec = 1;
        set_low_bit(hdr.x.a[0:0]);
        high_nibble(hdr.x.b[7:4], hdr.x.b[3:0]);
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
