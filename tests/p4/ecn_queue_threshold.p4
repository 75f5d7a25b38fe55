// Buffer-style ECN marking: per-port thresholds from a table, marked packets counted.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t {
    bit<19> threshold;
}

parser EcnParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control EcnVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control EcnIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }
    table fwd {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { forward; NoAction; }
    }
    apply {
        if (hdr.ipv4.isValid()) {
            fwd.apply();
        }
    }
}

control EcnEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets) ce_marked;
    register<bit<32>>(512) max_depth;

    action set_threshold(bit<19> packets) {
        meta.threshold = packets;
    }
    table ecn_threshold {
        key = { standard_metadata.egress_port : exact; }
        actions = { set_threshold; }
        default_action = set_threshold(64);
    }
    apply {
        ecn_threshold.apply();
        bit<32> seen;
        max_depth.read(seen, (bit<32>)standard_metadata.egress_port);
        if ((bit<32>)standard_metadata.enq_qdepth > seen) {
            max_depth.write((bit<32>)standard_metadata.egress_port,
                            (bit<32>)standard_metadata.enq_qdepth);
        }
        if (hdr.ipv4.isValid() && hdr.ipv4.ecn != 0
            && standard_metadata.enq_qdepth >= meta.threshold) {
            hdr.ipv4.ecn = 3;
            ce_marked.count((bit<32>)standard_metadata.egress_port);
        }
    }
}

control EcnComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control EcnDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(EcnParser(), EcnVerifyChecksum(), EcnIngress(), EcnEgress(),
         EcnComputeChecksum(), EcnDeparser()) main;
