// switch on action_run with a default case, local variables in the control and actions.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}
struct metadata_t {
    bit<8> verdict;
}

parser SwParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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

control SwVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control SwIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    bit<8> hops;

    action unicast(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = 1;
    }
    action to_cpu() {
        bit<9> cpu = 64;
        standard_metadata.egress_spec = cpu;
    }
    table l2 {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { unicast; flood; to_cpu; }
        default_action = flood();
    }
    table l3_fallback {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { unicast; NoAction; }
    }
    apply {
        hops = 0;
        switch (l2.apply().action_run) {
            unicast: {
                hops = 1;
            }
            to_cpu: {
                hops = 2;
                meta.verdict = 7;
            }
            default: {
                if (hdr.ipv4.isValid()) {
                    l3_fallback.apply();
                }
            }
        }
        meta.verdict = meta.verdict + hops;
    }
}

control SwEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control SwComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control SwDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(SwParser(), SwVerifyChecksum(), SwIngress(), SwEgress(),
         SwComputeChecksum(), SwDeparser()) main;
