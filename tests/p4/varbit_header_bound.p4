// A varbit header's maximum bounds the whole header, fixed fields included (issue 13, p4c's
// issue1025-bmv2): o_t is at most 1 + 2 bytes, so two bytes of data fit and three raise
// HeaderTooShort, even though three bytes is within max_length.
#include <core.p4>
#include <v1model.p4>
header o_t { bit<8> len; varbit<16> data; }
struct hs { o_t o; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.o, (bit<32>)pkt.lookahead<bit<8>>() * 8);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = sm.parser_error == error.HeaderTooShort ? 9w2 : 9w1; }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
