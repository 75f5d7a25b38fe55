// Expressions: slices, concatenation, casts, shifts, saturating and signed arithmetic, ?:.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header calc_t {
    bit<8>  op;
    bit<32> a;
    bit<32> b;
    bit<32> result;
    int<16> signed_val;
    bit<8>  sat8;
}

struct headers_t {
    ethernet_t ethernet;
    calc_t     calc;
}
struct metadata_t {
    bit<64> wide;
    bit<4>  nibble;
}

parser CalcParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x1234: parse_calc;
            default: accept;
        }
    }
    state parse_calc {
        pkt.extract(hdr.calc);
        transition accept;
    }
}

control CalcVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CalcIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action op_add()   { hdr.calc.result = hdr.calc.a + hdr.calc.b; }
    action op_sub()   { hdr.calc.result = hdr.calc.a - hdr.calc.b; }
    action op_and()   { hdr.calc.result = hdr.calc.a & hdr.calc.b; }
    action op_or()    { hdr.calc.result = hdr.calc.a | hdr.calc.b; }
    action op_xor()   { hdr.calc.result = hdr.calc.a ^ hdr.calc.b; }
    action op_not()   { hdr.calc.result = ~hdr.calc.a; }
    action op_shl()   { hdr.calc.result = hdr.calc.a << (bit<8>)hdr.calc.b; }
    action op_shr()   { hdr.calc.result = hdr.calc.a >> 4; }
    action op_mul()   { hdr.calc.result = hdr.calc.a * 3; }
    action op_neg()   { hdr.calc.result = -hdr.calc.a; }
    action op_satadd() { hdr.calc.sat8 = hdr.calc.a[7:0] |+| hdr.calc.b[7:0]; }
    action op_satsub() { hdr.calc.sat8 = hdr.calc.a[7:0] |-| hdr.calc.b[7:0]; }
    action op_signed() {
        hdr.calc.signed_val = (int<16>)hdr.calc.a[15:0] - 100;
        hdr.calc.result = (bit<32>)(bit<16>)(hdr.calc.signed_val >> 2);
    }
    action op_concat() {
        meta.wide = hdr.calc.a ++ hdr.calc.b;
        hdr.calc.result = meta.wide[47:16];
    }
    action op_slice_assign() {
        hdr.calc.result[31:24] = hdr.calc.op;
        meta.nibble = hdr.calc.b[3:0];
        hdr.calc.result[3:0] = meta.nibble;
    }
    action op_max() {
        hdr.calc.result = hdr.calc.a > hdr.calc.b ? hdr.calc.a : hdr.calc.b;
    }
    table calculate {
        key = { hdr.calc.op : exact; }
        actions = { op_add; op_sub; op_and; op_or; op_xor; op_not; op_shl; op_shr;
                    op_mul; op_neg; op_satadd; op_satsub; op_signed; op_concat;
                    op_slice_assign; op_max; NoAction; }
        const entries = {
            0x00 : op_add();
            0x01 : op_sub();
            0x02 : op_and();
            0x03 : op_or();
            0x04 : op_xor();
            0x05 : op_not();
            0x06 : op_shl();
            0x07 : op_shr();
            0x08 : op_mul();
            0x09 : op_neg();
            0x0a : op_satadd();
            0x0b : op_satsub();
            0x0c : op_signed();
            0x0d : op_concat();
            0x0e : op_slice_assign();
            0x0f : op_max();
        }
    }
    apply {
        if (hdr.calc.isValid()) {
            calculate.apply();
            bit<48> tmp_mac = hdr.ethernet.dstAddr;
            hdr.ethernet.dstAddr = hdr.ethernet.srcAddr;
            hdr.ethernet.srcAddr = tmp_mac;
            standard_metadata.egress_spec = standard_metadata.ingress_port;
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control CalcEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control CalcComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CalcDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.calc);
    }
}

V1Switch(CalcParser(), CalcVerifyChecksum(), CalcIngress(), CalcEgress(),
         CalcComputeChecksum(), CalcDeparser()) main;
