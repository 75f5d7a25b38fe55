// Indirect counters of each type: packets, bytes, packets_and_bytes, indexed by port.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t { }

parser CntParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control CntVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CntIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets) rx_packets;
    counter(512, CounterType.bytes) rx_bytes;
    counter(512, CounterType.packets_and_bytes) rx_both;

    action to_port(port_t port) {
        standard_metadata.egress_spec = port;
        rx_both.count((bit<32>)port);
    }
    table fwd {
        key = { standard_metadata.ingress_port : exact; }
        actions = { to_port; NoAction; }
    }
    apply {
        rx_packets.count((bit<32>)standard_metadata.ingress_port);
        rx_bytes.count((bit<32>)standard_metadata.ingress_port);
        fwd.apply();
    }
}

control CntEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) tx_both;
    apply {
        tx_both.count((bit<32>)standard_metadata.egress_port);
    }
}

control CntComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CntDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(CntParser(), CntVerifyChecksum(), CntIngress(), CntEgress(),
         CntComputeChecksum(), CntDeparser()) main;
