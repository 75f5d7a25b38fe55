// hash() with every v1model algorithm into a result header the test can read back.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

header hashes_t {
    bit<32> crc32;
    bit<32> crc32_custom;
    bit<16> crc16;
    bit<16> crc16_custom;
    bit<16> random;
    bit<32> identity;
    bit<16> csum16;
    bit<16> xor16;
    bit<16> bucket;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    hashes_t   hashes;
}
struct metadata_t { }

parser HashParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control HashVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control HashIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.ipv4.isValid()) {
            hdr.hashes.setValid();
            hash(hdr.hashes.crc32, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol }, 32w0xffffffff);
            hash(hdr.hashes.crc32_custom, HashAlgorithm.crc32_custom, 32w0,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr }, 32w0xffffffff);
            hash(hdr.hashes.crc16, HashAlgorithm.crc16, 16w0,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr }, 32w65536);
            hash(hdr.hashes.crc16_custom, HashAlgorithm.crc16_custom, 16w0,
                 { hdr.ipv4.srcAddr }, 32w65536);
            hash(hdr.hashes.random, HashAlgorithm.random, 16w0,
                 { hdr.ipv4.identification }, 32w65536);
            hash(hdr.hashes.identity, HashAlgorithm.identity, 32w0,
                 { hdr.ipv4.dstAddr }, 32w0xffffffff);
            hash(hdr.hashes.csum16, HashAlgorithm.csum16, 16w0,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, 8w0, hdr.ipv4.protocol }, 32w65536);
            hash(hdr.hashes.xor16, HashAlgorithm.xor16, 16w0,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr }, 32w65536);
            hash(hdr.hashes.bucket, HashAlgorithm.crc32, 16w100,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr }, 32w8);
        }
        standard_metadata.egress_spec = 1;
    }
}

control HashEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control HashComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control HashDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.hashes);
    }
}

V1Switch(HashParser(), HashVerifyChecksum(), HashIngress(), HashEgress(),
         HashComputeChecksum(), HashDeparser()) main;
