// Probabilistic sampling with random(): one in N packets is copied to the CPU port.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<32> SAMPLE_SESSION = 100;

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t {
    bit<16> draw;
}

parser RndParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control RndVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RndIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action sample(bit<16> one_in) {
        random(meta.draw, 16w0, one_in - 1);
        if (meta.draw == 0) {
            clone(CloneType.I2E, SAMPLE_SESSION);
        }
    }
    table sampling {
        key = { standard_metadata.ingress_port : exact; }
        actions = { sample; NoAction; }
    }
    apply {
        standard_metadata.egress_spec = 1;
        sampling.apply();
    }
}

control RndEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control RndComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RndDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(RndParser(), RndVerifyChecksum(), RndIngress(), RndEgress(),
         RndComputeChecksum(), RndDeparser()) main;
