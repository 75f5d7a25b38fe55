// Programs p4c accepts with a warning or an empty list (issue 13): a direct counter and
// a direct meter no table uses (p4c warns and leaves them out), and
// resubmit_preserving_field_list(2) where no user-metadata field carries
// @field_list(2): the resubmitted packet keeps none of its metadata.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct hs { h_t h; }
struct ms { @field_list(1) bit<8> x; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) unused_counter;
    direct_meter<bit<8>>(MeterType.packets) unused_meter;
    apply {
        if (sm.instance_type == 0) {
            meta.x = 5;
            resubmit_preserving_field_list(2);
        } else {
            hdr.h.b = meta.x;
            sm.egress_spec = 2;
        }
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), VC(), D()) main;
