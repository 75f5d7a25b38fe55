// Functions with statements, early returns, out/inout parameters and nested calls used
// inside expressions, in actions, apply blocks and parser states; register.read as a value.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header fn_t {
    bit<8>  a;
    bit<8>  b;
    bit<32> mixed;
    bit<48> mac;
    bit<32> count;
    bit<8>  parsed;
}

struct headers_t {
    ethernet_t ethernet;
    fn_t       fn;
}
struct metadata_t {
    bit<8> parsed;
}

bit<48> port_mac(in bit<9> port) {
    if (port == 1) {
        return 0x0a0000000001;
    }
    bit<48> base = 0x0a0000000100;
    return base + (bit<48>)port;
}

void add_to(inout bit<32> acc, in bit<32> v) {
    acc = acc + v;
}

bit<32> twice(in bit<32> v) {
    bit<32> r = v;
    add_to(r, v);
    return r;
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

bit<8> xor_plus_one(in bit<8> x, in bit<8> y) {
    bit<8> t = x ^ y;
    return t + 1;
}

parser FnParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b9: parse_fn;
            default: accept;
        }
    }
    state parse_fn {
        pkt.extract(hdr.fn);
        meta.parsed = xor_plus_one(hdr.fn.a, 0x0f);
        transition accept;
    }
}

control FnVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control FnIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<32>>(4) hits;

    action compute(bit<9> port) {
        hdr.fn.mixed = twice(twice((bit<32>)hdr.fn.a) + (bit<32>)max8(hdr.fn.a, hdr.fn.b));
        standard_metadata.egress_spec = port;
    }
    table route {
        key = { hdr.fn.a : exact; }
        actions = { compute; }
        default_action = compute(2);
    }
    apply {
        if (!hdr.fn.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        hdr.fn.mac = port_mac(standard_metadata.ingress_port);
        hdr.fn.parsed = meta.parsed;
        bit<32> seen = hits.read(0);
        hits.write(0, seen + 1);
        hdr.fn.count = hits.read(0);
        if (twice(hits.read(0)) > 4) {
            hdr.fn.b = 0xff;
        }
        route.apply();
    }
}

control FnEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control FnComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control FnDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.fn);
    }
}

V1Switch(FnParser(), FnVerifyChecksum(), FnIngress(), FnEgress(),
         FnComputeChecksum(), FnDeparser()) main;
