// Queueing metadata: probes carry enqueue depth, queueing delay and timestamps out of egress.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<16> ETHERTYPE_PROBE = 0x88b6;

header probe_t {
    bit<32> enq_timestamp;
    bit<32> deq_timedelta;
    bit<24> enq_qdepth;
    bit<24> deq_qdepth;
    bit<48> ingress_ts;
    bit<48> egress_ts;
    bit<8>  priority;
    bit<16> packet_length;
}

struct headers_t {
    ethernet_t ethernet;
    probe_t    probe;
}
struct metadata_t { }

parser TelParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_PROBE: parse_probe;
            default: accept;
        }
    }
    state parse_probe {
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control TelVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control TelIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action forward(port_t port, bit<3> prio) {
        standard_metadata.egress_spec = port;
        standard_metadata.priority = prio;
    }
    table out_port {
        key = { standard_metadata.ingress_port : exact; }
        actions = { forward; NoAction; }
    }
    apply {
        out_port.apply();
    }
}

control TelEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.probe.isValid()) {
            hdr.probe.enq_timestamp = standard_metadata.enq_timestamp;
            hdr.probe.deq_timedelta = standard_metadata.deq_timedelta;
            hdr.probe.enq_qdepth = (bit<24>)standard_metadata.enq_qdepth;
            hdr.probe.deq_qdepth = (bit<24>)standard_metadata.deq_qdepth;
            hdr.probe.ingress_ts = standard_metadata.ingress_global_timestamp;
            hdr.probe.egress_ts = standard_metadata.egress_global_timestamp;
            hdr.probe.priority = (bit<8>)standard_metadata.priority;
            hdr.probe.packet_length = (bit<16>)standard_metadata.packet_length;
        }
    }
}

control TelComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control TelDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.probe);
    }
}

V1Switch(TelParser(), TelVerifyChecksum(), TelIngress(), TelEgress(),
         TelComputeChecksum(), TelDeparser()) main;
