// A lookahead whose value is dropped still reads the packet (issue 13, p4c's
// issue1768-bmv2): on a frame shorter than the lookahead the parser stops with
// PacketTooShort, which ingress sees in parser_error.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> v; }
struct eight_bytes_t { bit<64> bits; }
struct hs { h_t h; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.lookahead<eight_bytes_t>();
        pkt.extract(hdr.h);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) {
            sm.egress_spec = 2;
        }
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
