// The parser operations whose JSON encoding real BMv2 (simple_switch 1.15) is strict about
// (issue 30, item 4), each with a packet that shows it ran: a varbit extract whose length is
// computed (`extract_VL` takes its length only as an `expression`), parser assignments from
// computed values, from `s.last.f` (`set` takes fields, constants, lookaheads and
// `expression`s, not a bare `stack_field`) and into `s.last.f` and `s[i].f` (`set` writes
// only plain fields: these go through the `assign` primitive), an `advance` by a computed
// amount, and a `verify` on a computed condition.
#include <core.p4>
#include <v1model.p4>
error { BadTag }
header len_t { bit<8> bytes; bit<8> skip; }
header blob_t { varbit<64> data; }
header tag_t { bit<8> v; }
header res_t { bit<8> last_v; bit<8> sum; bit<8> blob_bits; bit<8> err; }
struct hs { len_t len; blob_t blob; tag_t[3] tags; res_t res; }
struct ms { bit<8> last_v; bit<8> sum; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        // Length in bits from a computed value: (bytes & 7) * 8.
        pkt.extract(hdr.blob, (bit<32>)(hdr.len.bytes & 7) << 3);
        // Skip `skip` bytes (a computed amount in bits).
        pkt.advance((bit<32>)hdr.len.skip * 8);
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.tags.next);
        // A source that is the last extracted element's field.
        meta.last_v = hdr.tags.last.v;
        // A computed source.
        meta.sum = hdr.tags[0].v + hdr.tags[1].v + 1;
        // Destinations that are not plain fields.
        hdr.tags.last.v = hdr.tags.last.v | 0x80;
        hdr.tags[hdr.len.skip & 1].v = hdr.tags[hdr.len.skip & 1].v ^ 0x0f;
        verify(meta.sum != 1, error.BadTag);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.last_v = meta.last_v;
        hdr.res.sum = meta.sum;
        hdr.res.blob_bits = (bit<8>)(hdr.len.bytes & 7) << 3;
        hdr.res.err = sm.parser_error == error.BadTag ? 8w1 : 8w0;
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
