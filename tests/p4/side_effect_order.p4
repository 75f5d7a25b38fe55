// Side effects evaluated once and in order (issue 30, item 2): an l-value whose stack
// index calls a function (`postincr` returns its argument and increments it) is evaluated
// once by a compound assignment (read and written at the same element), by an assignment
// to a slice of it, and when it is an `inout` argument (copy-in, body and copy-out use one
// element); in an apply block, an action and a parser state. A table key that calls a
// function calls it once per apply. Each `postincr` moves a counter, so a second
// evaluation shows in both the counter and the element written.
#include <core.p4>
#include <v1model.p4>
header d_t { bit<8> b1; bit<8> f1; bit<8> k; bit<8> hits; bit<8> p; bit<8> a; }
header r_t { bit<8> x; }
struct hs { d_t data; r_t[4] rest; r_t[4] pr; }
struct ms { }
bit<8> postincr(inout bit<8> v) { bit<8> old = v; v = v + 1; return old; }
void double_it(inout bit<8> v) { v = v + v; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        pkt.extract(hdr.rest.next); pkt.extract(hdr.rest.next);
        pkt.extract(hdr.rest.next); pkt.extract(hdr.rest.next);
        pkt.extract(hdr.pr.next); pkt.extract(hdr.pr.next);
        pkt.extract(hdr.pr.next); pkt.extract(hdr.pr.next);
        hdr.pr[postincr(hdr.data.p) & 3].x |= 0x40;
        hdr.pr[postincr(hdr.data.p) & 3].x[3:0] = 0xe;
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action hit() { hdr.data.hits = hdr.data.hits + 1; }
    action bump_in_action() { hdr.rest[postincr(hdr.data.a) & 3].x += 0x10; }
    table t { key = { postincr(hdr.data.k) : exact @name("kk"); } actions = { hit; NoAction; } default_action = NoAction(); }
    apply {
        sm.egress_spec = 1;
        hdr.rest[postincr(hdr.data.b1) & 3].x |= hdr.data.f1;
        double_it(hdr.rest[postincr(hdr.data.b1) & 3].x);
        hdr.rest[postincr(hdr.data.b1) & 3].x[3:0] = 0xf;
        hdr.rest[postincr(hdr.data.b1) & 3].x[7:4] |= 0x8;
        bump_in_action();
        t.apply();
    }
}
control EC(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), EC(), CC(), D()) main;
