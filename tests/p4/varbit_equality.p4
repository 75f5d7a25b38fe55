// `==` and `!=` on varbit fields compare their contents as well as their lengths (issue
// 13: the engine once compared only the lengths, so two different varbits of one length
// were equal), also inside `==` on whole headers.
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> bytes; }
header blob_t { varbit<64> data; }
header verdict_t { bit<8> flags; }
struct hs { len_t la; blob_t a; len_t lb; blob_t b; verdict_t verdict; }
struct ms { }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.la);
        pkt.extract(hdr.a, (bit<32>)hdr.la.bytes << 3);
        pkt.extract(hdr.lb);
        pkt.extract(hdr.b, (bit<32>)hdr.lb.bytes << 3);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.verdict.setValid();
        hdr.verdict.flags = 0;
        if (hdr.a.data == hdr.b.data) { hdr.verdict.flags = hdr.verdict.flags | 1; }
        if (hdr.a.data != hdr.b.data) { hdr.verdict.flags = hdr.verdict.flags | 2; }
        if (hdr.a == hdr.b) { hdr.verdict.flags = hdr.verdict.flags | 4; }
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
