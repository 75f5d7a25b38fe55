// Computed values in the data of update_checksum (issue 30): a concatenation and zero
// extensions (kept as fields and constants in the calculation, whose inputs are packed bit
// strings), and arithmetic and a slice (temporaries the egress pipeline computes last, and
// before its `exit`). The checksum is csum16 over the words listed in the .stf.
#include <core.p4>
#include <v1model.p4>
header h_t {
    bit<4> hi; bit<4> lo; bit<8> proto; bit<16> len; bit<16> csum; bit<8> mode;
}
struct hs { h_t h; }
struct ms { bit<8> m; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        // Mode 1 leaves egress early: the data is computed before the exit.
        hdr.h.len = hdr.h.len + 1;
        if (hdr.h.mode == 1) {
            exit;
        }
        hdr.h.len = hdr.h.len + 1;
    }
}
control C(inout hs hdr, inout ms meta) {
    apply {
        update_checksum(hdr.h.isValid(),
            { hdr.h.lo ++ hdr.h.hi,          // 8 bits: lo then hi
              (bit<24>)hdr.h.proto,          // 16 zero bits, then proto
              hdr.h.len - 4,                 // arithmetic: a temporary
              hdr.h.len[15:8] ++ 8w0 },      // a slice: a temporary, then 8 zero bits
            hdr.h.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
