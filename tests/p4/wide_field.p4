// Header fields wider than 128 bits (issue 13): BMv2 keeps such fields as
// arbitrary-precision integers, so a 336-bit field must extract, emit, copy
// (field and header), compare with `==`/`!=` and take a >128-bit constant,
// in ingress and again in egress; and key tables: exact and ternary with
// entries the control plane adds, exact with a const entry.
#include <core.p4>
#include <v1model.p4>
header wide_t { bit<336> big; bit<8> x; }
header verdict_t { bit<8> flags; }
struct hs { wide_t a; wide_t b; verdict_t verdict; }
struct ms { bit<336> saved; }
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition accept;
    }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    action set_big() {
        hdr.a.big = 336w0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a;
    }
    action mark(bit<8> bit_) { hdr.verdict.flags = hdr.verdict.flags | bit_; }
    table wide_exact {
        key = { hdr.a.big: exact; }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    table wide_ternary {
        key = { hdr.a.big: ternary; }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    table wide_const {
        key = { hdr.a.big: exact; }
        actions = { mark; NoAction; }
        default_action = NoAction();
        const entries = {
            336w0xc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9 : mark(128);
        }
    }
    apply {
        sm.egress_spec = 1;
        hdr.verdict.setValid();
        hdr.verdict.flags = 0;
        if (hdr.a.x == 1) { set_big(); }
        // Header copy, then field copy through metadata.
        hdr.b = hdr.a;
        meta.saved = hdr.a.big;
        hdr.b.big = meta.saved;
        if (hdr.a.big == hdr.b.big) { hdr.verdict.flags = hdr.verdict.flags | 1; }
        if (hdr.a.big == 336w0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a) {
            hdr.verdict.flags = hdr.verdict.flags | 2;
        }
        if (hdr.a.big != 336w0) { hdr.verdict.flags = hdr.verdict.flags | 4; }
        if (hdr.a.big == 336w0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff) {
            hdr.verdict.flags = hdr.verdict.flags | 8;
            hdr.b.big = 336w0x0a0b030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a;
        }
        wide_exact.apply();
        wide_ternary.apply();
        wide_const.apply();
    }
}
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    apply {
        // The wide field crosses the traffic manager unchanged.
        if (hdr.b.big == hdr.a.big) { hdr.verdict.flags = hdr.verdict.flags | 16; }
    }
}
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
