// A varbit assigned on its own (issue 30, item 1): to and from a varbit local, a
// user-metadata varbit and another header's varbit field, in a parser state and in a
// control. BMv2 copies a varbit with its length (`assign_VL`); each varbit local or
// metadata member is a one-field metadata header, since BMv2 keeps a varbit's length only
// in a header's `*` field.
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> bits; }
header blob_t { varbit<32> data; }
header res_t { bit<8> same; }
struct hs { len_t len; blob_t a; blob_t b; blob_t c; res_t res; }
struct ms { varbit<32> saved; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.a, (bit<32>)hdr.len.bits);
        pkt.extract(hdr.b, (bit<32>)hdr.len.bits);
        // Kept in metadata while still in the parser.
        meta.saved = hdr.a.data;
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    varbit<32> tmp;
    apply {
        sm.egress_spec = 1;
        // Swap a and b through a local.
        tmp = hdr.a.data;
        hdr.a.data = hdr.b.data;
        hdr.b.data = tmp;
        // A new header gets the saved varbit (the original a).
        hdr.c.setValid();
        hdr.c.data = meta.saved;
        hdr.res.setValid();
        hdr.res.same = hdr.c.data == hdr.b.data ? 8w1 : 8w0;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
