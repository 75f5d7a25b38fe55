// The pre-2020 v1model forms `resubmit(data)`, `recirculate(data)` and
// `clone3(type, session, data)` (issue 13, p4c's v1model-special-ops-bmv2): each makes a
// field list of the fields `data` names, restored in the new packet; fields it does not
// name come back zero.
#include <core.p4>
#include <v1model.p4>
header x_t { bit<8> op; bit<8> a; bit<8> b; }
struct hs { x_t x; }
struct ms { bit<8> a; bit<8> b; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.x); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0) {
            meta.a = 0x11;
            meta.b = 0x22;
            sm.egress_spec = 1;
            if (hdr.x.op == 1) {
                resubmit({ meta.a });
            } else if (hdr.x.op == 2) {
                clone3(CloneType.I2E, 32w5, { meta.b });
            }
        } else {
            // Resubmitted (6) or recirculated (4): show what was preserved.
            hdr.x.a = meta.a;
            hdr.x.b = meta.b;
            sm.egress_spec = sm.instance_type == 6 ? 9w2 : 9w3;
        }
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            hdr.x.a = meta.a;
            hdr.x.b = meta.b;
        } else if (hdr.x.op == 3 && meta.b != 0x33) {
            // A recirculated packet is NORMAL again in egress: the kept meta.b ends the loop.
            meta.b = 0x33;
            recirculate({ meta.b });
        }
    }
}
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
